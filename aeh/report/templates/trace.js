// Draws one attempt from the document aeh's trace_document writes: the only trace renderer.
(function () {
  "use strict";
  var PREVIEW = 1500;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  // a long text shows its start; the rest opens on a click
  function text(value, cls) {
    var box = el("div", cls), s = String(value === undefined || value === null ? "" : value);
    if (s.length <= PREVIEW) { add(box, el("pre", null, s)); return box; }
    add(box, el("pre", null, s.slice(0, PREVIEW)));
    var more = add(box, el("details"));
    add(more, el("summary", null, "show all " + s.length.toLocaleString("en") + " characters"));
    add(more, el("pre", null, s.slice(PREVIEW)));
    return box;
  }
  function lines(list, cls) {
    var box = el("div", "lines" + (cls ? " " + cls : ""));
    (list || []).forEach(function (line) { add(box, el("div", null, line)); });
    return box;
  }
  function mark(cls, label) { return el("span", "mark " + cls, label); }

  function headRow(table, label, value, field) {
    var tr = add(table, el("tr"));
    add(tr, el("th", null, label));
    var td = add(tr, el("td"));
    td.dataset.field = field;
    if (value instanceof Node) { td.appendChild(value); } else { td.textContent = value; }
  }

  function drawHead(doc, root) {
    var h = doc.head, ok = h.verdict === "pass";
    var says = ok ? "Attempt succeeded" : "Attempt failed" + (h.bucket ? " — " + h.bucket : "");
    if (h.localized) { says += " · " + h.localized + " span(s) localized by tier 2"; }
    if (h.cited) { says += " · " + h.cited + " step(s) cited by trajectory dimensions"; }
    if (h.review) { says += " · flagged for human review"; }
    add(root, el("div", "banner " + (ok ? "ok" : "fail"), says));
    add(root, el("h1", null, "Trace: " + h.task + ", attempt " + h.attempt));
    var table = add(root, el("table", "head"));
    table.id = "aeh-head";
    headRow(table, "task prompt", h.prompt ? text(h.prompt) : el("span", "empty", "not recorded"), "prompt");
    headRow(table, "target", h.target.length ? lines(h.target) : el("span", "empty", "no expected answer in the graders' evidence"), "target");
    headRow(table, "answer", h.answer ? text(h.answer) : el("span", "empty", "no answer"), "answer");
    var verdict = el("span", ok ? "pass" : "FAIL", h.verdict);
    var v = el("span");
    v.appendChild(verdict);
    v.appendChild(document.createTextNode((h.bucket ? " · bucket " + h.bucket : "") + " · status " + h.status));
    headRow(table, "verdict", v, "verdict");
    if (h.error) { headRow(table, "error", text(h.error, "fail-text"), "error"); }
    headRow(table, "cost", h.cost + (h.prices ? " · " + h.prices : ""), "cost");
    headRow(table, "latency", h.latency + " · " + h.steps + " steps · tokens " + h.tokens, "latency");
    headRow(table, "run", h.run + (h.suite ? " · suite " + h.suite : "") + (h.adapter ? " · adapter " + h.adapter : "") +
      (h.model ? " · model " + h.model : "") + " · seed " + h.seed, "run");
  }

  function drawCall(call) {
    var marked = call.fault || call.harness || call.error;
    var box = el("div", "call" + (marked ? " fault" : ""));
    box.dataset.step = call.step === undefined ? "" : String(call.step);
    if (call.cited) { box.classList.add("cited"); }
    if (call.localized) { box.classList.add("localized"); }
    var sig = add(box, el("div", "sig"));
    sig.appendChild(document.createTextNode("→ "));
    add(sig, el("b", null, call.name));
    sig.appendChild(document.createTextNode("(" + call.args + ")"));
    var marks = el("div");
    if (call.step !== undefined) { add(marks, mark("step", "step " + call.step)); }
    if (call.fault) { add(marks, mark("fault", call.fault)); }
    if (call.harness) { add(marks, mark("harness", call.harness)); }
    if (call.error) { add(marks, mark("error", call.error)); }
    if (call.cited) { add(marks, mark("cited", "◆ cited: " + call.cited)); }
    if (call.localized) { add(marks, mark("localized", "⚠ " + call.localized)); }
    if (marks.childNodes.length) { add(box, marks); }
    if (call.result !== undefined) { add(box, text(call.result, "result")); }
    return box;
  }

  function drawTurn(turn) {
    var box = el("div", "turn " + turn.role);
    var top = add(box, el("div"));
    add(top, el("span", "role", turn.role === "note" ? "note" : turn.role));
    var m = turn.model, meta = turn.call ? "model call " + turn.call : "";
    if (m) {
      meta += (m.name ? " · " + m.name : "") + (m.tokens ? " · tokens " + m.tokens : "") +
        (m.cost ? " · " + m.cost : "") + (m.latency ? " · " + m.latency : "");
    }
    if (meta && turn.role !== "note") { add(top, el("span", "meta", meta)); }
    if (m && m.error) { add(box, el("div", "fail-text", "model call failed: " + m.error)); }
    if (turn.note) { add(box, el("div", "empty", turn.note)); }
    if (turn.text) { add(box, text(turn.text)); }
    else if (!turn.calls && !turn.note) { add(box, el("div", "empty", "(no text)")); }
    (turn.calls || []).forEach(function (c) { add(box, drawCall(c)); });
    return box;
  }

  function grid(root, heads, rows) {
    var table = add(root, el("table", "grid")), tr = add(table, el("tr"));
    heads.forEach(function (h) { add(tr, el("th", null, h)); });
    rows.forEach(function (cells) {
      var row = add(table, el("tr"));
      cells.forEach(function (c) { var td = add(row, el("td")); if (c instanceof Node) { td.appendChild(c); } else { td.textContent = c; } });
    });
    return table;
  }

  function render(doc, root) {
    root.textContent = "";
    drawHead(doc, root);
    add(root, el("h2", null, "Conversation"));
    var bar = add(root, el("label", "toolbar"));
    var only = add(bar, el("input"));
    only.type = "checkbox";
    only.id = "aeh-only-marked";
    bar.appendChild(document.createTextNode(" only turns with failed, faulted, cited or localized tool calls"));
    var conv = add(root, el("div", "conversation"));
    conv.id = "aeh-conversation";
    if (!doc.turns.length) { add(conv, el("div", "empty", "no messages or tool calls recorded")); }
    doc.turns.forEach(function (t) { add(conv, drawTurn(t)); });
    only.addEventListener("change", function () {
      conv.querySelectorAll(".turn").forEach(function (t) {
        var keep = t.querySelector(".call.fault, .call.cited, .call.localized") !== null;
        t.classList.toggle("hidden", only.checked && !keep);
      });
    });
    if (doc.tools.length) {
      var tools = add(root, el("details", "tools"));
      tools.id = "aeh-tools";
      add(tools, el("summary", null, "tools offered (" + doc.tools.length + "): " +
        doc.tools.map(function (t) { return t.name; }).join(", ")));
      add(tools, lines(doc.tools.map(function (t) {
        return t.name + "(" + t.params + ")" + (t.description ? " — " + t.description : "");
      })));
    }
    add(root, el("h2", null, "Graders"));
    var g = grid(root, ["tier", "grader", "kind", "verdict", "evidence"], doc.graders.map(function (r) {
      var v = el("span", r.verdict === "pass" ? "pass" : r.verdict === "FAIL" ? "FAIL" : "na", r.verdict + (r.error ? " — " + r.error : ""));
      return [String(r.tier), r.name, r.kind, v, lines(r.lines)];
    }));
    g.id = "aeh-graders";
    if (doc.review) {
      add(root, el("h2", null, "Review packet (tier 3)"));
      var review = add(root, el("div", "review"));
      review.id = "aeh-review";
      add(review, el("div", null, "reason: " + doc.review.reason));
      add(review, lines(doc.review.lines));
    }
    if (doc.dims.length) {
      add(root, el("h2", null, "Trajectory dimensions"));
      grid(root, ["dimension", "score", "cited steps", "details"], doc.dims.map(function (d) {
        return [d.dimension, d.score.toFixed(2), d.steps.join(", "), d.details];
      })).id = "aeh-dims";
    }
    var spans = add(root, el("details", "spans"));
    spans.id = "aeh-spans";
    add(spans, el("summary", null, "all spans (" + doc.spans.length + ")"));
    doc.spans.forEach(function (s) {
      var row = add(spans, el("div", "span"));
      row.dataset.spanId = s.id;
      row.dataset.category = s.category;
      row.style.paddingLeft = (4 + 16 * s.depth) + "px";
      ["failed", "localized", "cited"].forEach(function (k) { if (s[k]) { row.classList.add(k); } });
      row.textContent = "[" + s.category + "] " + s.label + (s.localized ? "  ◀ " + s.localized : "") +
        (s.cited ? "  ◆ " + s.cited : "");
      row.title = (s.lines || []).join("\n") || s.label;
    });
  }

  window.aehTraceRender = render;
  var data = document.getElementById("aeh-trace-doc"), root = document.getElementById("aeh-trace");
  if (data && root && data.textContent.charAt(0) === "{") { render(JSON.parse(data.textContent), root); }
})();
