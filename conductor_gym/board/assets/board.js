(function () {
  function key(cell) {
    var v = cell.getAttribute("data-sort");
    return v === null || v === "" ? cell.textContent.trim().toLowerCase() : parseFloat(v);
  }
  function sortBy(table, col, dir) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col]), y = key(b.cells[col]);
      var c = x < y ? -1 : x > y ? 1 : 0;
      return dir === "asc" ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === col) { th.setAttribute("data-dir", dir); } else { th.removeAttribute("data-dir"); }
    });
    table.setAttribute("data-sorted-by", String(col));
  }
  document.querySelectorAll("table.board").forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.addEventListener("click", function () {
        var next = th.getAttribute("data-dir") === "desc" ? "asc" : "desc";
        if (th.getAttribute("data-dir") === null && th.getAttribute("data-kind") === "text") {
          next = "asc";
        }
        sortBy(table, i, next);
      });
    });
    sortBy(table, parseInt(table.getAttribute("data-default-sort"), 10), "desc");
  });
  document.body.setAttribute("data-board-ready", "1");
})();
