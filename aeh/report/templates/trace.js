(function () {
  "use strict";
  var tree = document.getElementById("tree");
  function setOpen(li, open) { if (!li.classList.contains("leaf")) { li.classList.toggle("open", open); } }
  tree.addEventListener("click", function (ev) {
    var row = ev.target.closest(".row");
    if (!row || !tree.contains(row)) { return; }
    var li = row.parentElement;
    li.classList.toggle("open");
    li.setAttribute("aria-expanded", li.classList.contains("open") ? "true" : "false");
  });
  tree.addEventListener("keydown", function (ev) {
    var row = ev.target.closest(".row");
    if (row && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); row.click(); }
  });
  function all() { return tree.querySelectorAll("li.node"); }
  document.getElementById("expand-all").addEventListener("click", function () {
    all().forEach(function (li) { li.classList.add("open"); });
  });
  document.getElementById("collapse-all").addEventListener("click", function () {
    all().forEach(function (li) { li.classList.remove("open"); });
  });
  document.getElementById("only-failures").addEventListener("change", function (ev) {
    var only = ev.target.checked;
    all().forEach(function (li) {
      var keep = !only || li.classList.contains("failed") || li.classList.contains("localized") ||
        li.classList.contains("cited") || li.querySelector("li.failed, li.localized, li.cited") !== null;
      li.classList.toggle("hidden", !keep);
      if (only && keep) { setOpen(li, true); }
    });
  });
})();
