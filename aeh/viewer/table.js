// The viewer's table page (aeh/viewer/_table.py): one widget, its rows drawn with one innerHTML, one
// delegated click listener that sends {event, page, row, col} to the kernel.
const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);

function cell(c, i, j) {
  if (c !== null && typeof c === "object") {
    return `<div role="cell" class="aeh-cell"><button type="button"`
      + ` class="jupyter-button widget-button ${esc(c.class)}" style="width:${esc(c.width)}"`
      + ` title="${esc(c.title)}" data-row="${i}" data-col="${j}">${esc(c.label)}</button></div>`;
  }
  return `<div role="cell" class="aeh-cell">${c}</div>`;
}

function render({ model, el }) {
  el.classList.add("aeh-grid");
  const table = document.createElement("div");
  el.appendChild(table);
  const draw = () => {
    const rows = model.get("rows");
    if (!rows.length) {
      table.className = "aeh-table-empty";
      table.removeAttribute("role");
      table.style.cssText = "";
      table.innerHTML = model.get("empty");
      return;
    }
    table.className = "aeh-table";
    table.setAttribute("role", "table");
    table.style.cssText = `display:grid;grid-template-columns:${model.get("columns")};gap:1px 8px;width:100%`;
    const head = model.get("header").map((h) => `<div role="columnheader" class="aeh-cell"><b>${esc(h)}</b></div>`);
    const body = rows.map((row, i) => `<div role="row" style="display:contents">`
      + `${row.map((c, j) => cell(c, i, j)).join("")}</div>`);
    table.innerHTML = `<div role="row" style="display:contents">${head.join("")}</div>${body.join("")}`;
  };
  table.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-row]");
    if (button && table.contains(button)) {
      const { row, col } = button.dataset;
      model.send({ event: "click", page: model.get("page"), row: Number(row), col: Number(col) });
    }
  });
  model.on("change:rows", draw);
  model.on("change:empty", draw);
  draw();
}
export default { render };
