(function () {
  "use strict";
  var root = document.getElementById("aeh-attempts");
  var data = JSON.parse(document.getElementById("aeh-attempts-data").textContent);
  var PAGE = 50, SHORT = 90, page = 0, shown = data.rows;
  var $ = function (id) { return document.getElementById(id); };
  var tbody = root.querySelector("#attempts-table tbody");

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  }
  function options(select, values) {
    values.forEach(function (v) { var o = el("option", v); o.value = v; select.appendChild(o); });
  }
  function distinct(key) {
    var seen = {};
    data.rows.forEach(function (r) { if (r[key]) { seen[r[key]] = true; } });
    return Object.keys(seen).sort();
  }
  options($("aeh-att-task"), distinct("task"));
  options($("aeh-att-bucket"), distinct("bucket"));

  var head = document.createElement("tr");
  ["task", "#", "input", "target", "verdict", "bucket", "answer", "cost", "latency s", "steps", "dimension scores", "trace"]
    .forEach(function (h) { head.appendChild(el("th", h)); });
  root.querySelector("#attempts-table thead").appendChild(head);

  function task(r) { return data.tasks[r.task] || {input: "", target: ""}; }
  function answerCell(r, given, cls) {
    var td = el("td", null, cls || "answer");
    var text = given !== undefined ? (given || "—") : r.answer || (r.error ? "error: " + r.error : "—");
    if (text.length <= SHORT) { td.textContent = text; return td; }
    var details = el("details"), summary = el("summary", text.slice(0, SHORT) + "…");
    details.appendChild(summary);
    details.appendChild(el("div", text, "full"));
    details.addEventListener("click", function (ev) { ev.stopPropagation(); });
    td.appendChild(details);
    return td;
  }
  // the dimensions below 1, worst first, then how many scored 1 (hover for all): one column per
  // dimension would squeeze the answer
  function dimsCell(r) {
    var td = el("td", null, "dims"), names = data.dimensions.filter(function (d) { return r.dims[d] !== undefined; });
    if (!names.length) { td.textContent = "—"; return td; }
    names.sort(function (a, b) { return r.dims[a] - r.dims[b]; });
    var perfect = names.filter(function (d) { return r.dims[d] >= 1; });
    names.filter(function (d) { return r.dims[d] < 1; }).forEach(function (d) {
      td.appendChild(el("div", d + " " + r.dims[d].toFixed(2), "low"));
    });
    if (perfect.length) {
      var rest = el("div", (perfect.length === names.length ? "all " : "") + perfect.length + " at 1.00", "full-score");
      rest.title = perfect.join(", ");
      td.appendChild(rest);
    }
    td.title = names.map(function (d) { return d + " " + r.dims[d].toFixed(2); }).join("\n");
    return td;
  }
  function fixed(v, digits) { return v === null || v === undefined ? "—" : v.toFixed(digits); }

  function row(r, index) {
    var tr = el("tr", null, r.ok ? "ok" : "fail");
    tr.dataset.index = String(index);
    tr.tabIndex = 0;
    tr.appendChild(el("td", r.task));
    tr.appendChild(el("td", r.attempt, "num"));
    tr.appendChild(answerCell(r, task(r).input, "input"));
    tr.appendChild(answerCell(r, task(r).target, "target"));
    tr.appendChild(el("td", r.ok ? "pass" : (r.bucket === "harness_error" ? "harness error" : "FAIL"), "verdict"));
    var bucket = el("td", r.bucket ? r.short : "—");
    if (r.bucket) { bucket.title = r.bucket; }
    tr.appendChild(bucket);
    tr.appendChild(answerCell(r));
    tr.appendChild(el("td", r.money, "num"));
    tr.appendChild(el("td", fixed(r.latency, 2), "num"));
    tr.appendChild(el("td", r.steps, "num"));
    tr.appendChild(dimsCell(r));
    tr.appendChild(el("td", r.trace >= 0 ? "open ▸" : "command", "trace-link"));
    tr.addEventListener("click", function () { openTrace(r); });
    tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { openTrace(r); } });
    return tr;
  }

  function filter() {
    var task = $("aeh-att-task").value, bucket = $("aeh-att-bucket").value;
    var failed = $("aeh-att-failed").checked, q = $("aeh-att-search").value.trim().toLowerCase();
    shown = data.rows.filter(function (r) {
      if (task && r.task !== task) { return false; }
      if (bucket && r.bucket !== bucket) { return false; }
      if (failed && r.ok) { return false; }
      if (q && (r.task + " " + task(r).input + " " + task(r).target + " " + r.answer + " " + r.error + " " + r.bucket).toLowerCase().indexOf(q) < 0) {
        return false;
      }
      return true;
    });
    page = 0;
    draw();
  }

  function draw() {
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(page, pages - 1);
    tbody.textContent = "";
    shown.slice(page * PAGE, (page + 1) * PAGE).forEach(function (r, i) { tbody.appendChild(row(r, page * PAGE + i)); });
    $("aeh-att-count").textContent = shown.length + " of " + data.rows.length + " attempts";
    $("aeh-att-page").textContent = "page " + (page + 1) + " of " + pages;
    $("aeh-att-prev").disabled = page === 0;
    $("aeh-att-next").disabled = page >= pages - 1;
  }

  // every embedded trace, decoded from its gzip-compressed JSON on the first open
  var docs = null;
  function traces() {
    if (docs) { return Promise.resolve(docs); }
    var bin = atob(data.traces_gz), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i += 1) { bytes[i] = bin.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(function (t) { docs = JSON.parse(t); return docs; });
  }
  function openTrace(r) {
    var frame = $("aeh-att-trace"), none = $("aeh-att-notrace");
    $("aeh-att-title").textContent = r.task + " · attempt " + r.attempt + " · " + (r.ok ? "pass" : "FAIL");
    if (r.trace >= 0) {
      frame.hidden = false;
      none.hidden = true;
      traces().then(function (all) {
        var json = JSON.stringify(all[r.trace]).split("<").join("\\u003c");
        frame.srcdoc = data.trace_shell.replace(data.data_mark, function () { return json; });
      });
    } else {
      frame.hidden = true;
      none.hidden = false;
      none.textContent = "This attempt's trace is not embedded in the report. Write it with:\n\n" +
        "aeh trace --run-id " + data.run_id + " --task " + r.task + " --attempt " + r.attempt;
    }
    $("aeh-att-overlay").hidden = false;
  }
  $("aeh-att-close").addEventListener("click", function () {
    $("aeh-att-overlay").hidden = true;
    $("aeh-att-trace").srcdoc = "";
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") { $("aeh-att-overlay").hidden = true; }
  });
  ["aeh-att-task", "aeh-att-bucket", "aeh-att-failed"].forEach(function (id) { $(id).addEventListener("change", filter); });
  $("aeh-att-search").addEventListener("input", filter);
  $("aeh-att-prev").addEventListener("click", function () { page -= 1; draw(); });
  $("aeh-att-next").addEventListener("click", function () { page += 1; draw(); });
  draw();
})();
