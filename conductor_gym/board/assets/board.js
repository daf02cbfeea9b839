(function () {
  // Rows arrive in the board's order (ranked in Python); a click on a column header sorts
  // by that column, a second click the other way. Nothing is re-sorted on load.
  function key(cell) {
    var v = cell.getAttribute("data-sort");
    return v === null || v === "" ? cell.textContent.trim().toLowerCase() : parseFloat(v);
  }
  function sortBy(table, th, dir) {
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var col = heads.indexOf(th);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col]), y = key(b.cells[col]);
      var c = x < y ? -1 : x > y ? 1 : 0;
      return dir === "asc" ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    heads.forEach(function (h) {
      if (h === th) { h.setAttribute("data-dir", dir); } else { h.removeAttribute("data-dir"); }
    });
    table.setAttribute("data-sorted-by", th.getAttribute("data-column"));
  }
  document.querySelectorAll("table.board").forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.addEventListener("click", function () {
        var next = th.getAttribute("data-dir") === "desc" ? "asc" : "desc";
        if (th.getAttribute("data-dir") === null && th.getAttribute("data-kind") === "text") {
          next = "asc";
        }
        sortBy(table, th, next);
      });
    });
  });
  document.body.setAttribute("data-board-ready", "1");
})();
