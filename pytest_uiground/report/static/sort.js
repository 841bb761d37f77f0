// Sortable tables of report.html, the compare and the matrix pages (every table.sortable).
(function () {
  "use strict";
  // Every table.sortable: a click on a header sorts its rows by that column (numbers as
  // numbers, "-" last), a second click reverses. Cells are compared by their text.
  function key(cell) {
    var t = cell ? cell.textContent.trim() : "";
    var n = parseFloat(t.replace(/^\[/, "").replace(/[%,]/g, ""));
    return {t: t.toLowerCase(), n: isNaN(n) ? null : n, blank: t === "" || t === "-"};
  }
  function cmp(a, b) {
    if (a.n !== null && b.n !== null) return a.n - b.n;
    if (a.n !== null) return -1;
    if (b.n !== null) return 1;
    return a.t < b.t ? -1 : a.t > b.t ? 1 : 0;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var body = table.tBodies[0];
    var headRow = table.tHead ? table.tHead.rows[0] : body.rows[0];
    if (!headRow) return;
    Array.prototype.forEach.call(headRow.cells, function (th, col) {
      th.classList.add("sorts");
      th.title = "sort by " + th.textContent.trim();
      th.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        Array.prototype.forEach.call(headRow.cells, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows).filter(function (r) { return r !== headRow; });
        rows.map(function (r, i) { return {r: r, k: key(r.cells[col]), i: i}; })
          .sort(function (a, b) {
            if (a.k.blank !== b.k.blank) return a.k.blank ? 1 : -1;  // "-" last either way
            return dir * cmp(a.k, b.k) || a.i - b.i;
          })
          .forEach(function (x) { body.appendChild(x.r); });
      });
    });
  });
})();
