// Sort a table by clicking its headers; filter the runs table by typing; toolbar controls apply at once
// (wired here because the CSP allows no inline handlers).
(function () {
  document.querySelectorAll("[data-submit-on-change]").forEach(function (control) {
    control.addEventListener("change", function () { control.form.submit(); });
  });
  var replays = document.getElementById("show-replays");
  if (replays) {
    replays.addEventListener("change", function () { location.search = replays.checked ? "?replays=true" : ""; });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th[data-key]").forEach(function (th, _) {
      th.addEventListener("click", function () {
        var index = Array.prototype.indexOf.call(th.parentNode.children, th);
        var asc = !th.classList.contains("asc");
        table.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[index].dataset.value || a.cells[index].textContent;
          var y = b.cells[index].dataset.value || b.cells[index].textContent;
          var nx = parseFloat(x), ny = parseFloat(y);
          var cmp = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y), undefined, {numeric: true});
          return asc ? cmp : -cmp;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
  var filter = document.getElementById("run-filter");
  if (filter) {
    filter.addEventListener("input", function () {
      var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      document.querySelectorAll("#runs tbody tr").forEach(function (row) {
        var text = row.dataset.search || "";
        row.style.display = words.every(function (w) { return text.indexOf(w) >= 0; }) ? "" : "none";
      });
    });
  }
})();
