// Proctor review: keyboard navigation on the grade matrix and live progress of a grading job.
// No framework and no build step; text from the server is only ever set with textContent.
(function () {
  "use strict";
  function matrixKeys() {
    var table = document.getElementById("matrix");
    if (!table) return;
    table.addEventListener("keydown", function (event) {
      var cell = event.target.closest("td");
      if (!cell || !event.target.classList.contains("cell")) return;
      var row = cell.parentElement, col = cell.cellIndex, target = null;
      if (event.key === "ArrowRight") target = row.cells[col + 1];
      else if (event.key === "ArrowLeft") target = row.cells[col - 1];
      else if (event.key === "ArrowDown" && row.nextElementSibling) target = row.nextElementSibling.cells[col];
      else if (event.key === "ArrowUp" && row.previousElementSibling) target = row.previousElementSibling.cells[col];
      else return;
      var link = target && target.querySelector("a.cell");
      if (link) { link.focus(); event.preventDefault(); }
    });
  }
  // Hovering a cell names its question (the column's title) and its passage (the row's id and first words);
  // set on first hover from the headers, so the page carries each text once.
  function matrixTitles() {
    var table = document.getElementById("matrix");
    if (!table) return;
    table.addEventListener("mouseover", function (event) {
      var cell = event.target.closest("td.g");
      if (!cell || cell.title) return;
      var column = table.tHead.rows[0].cells[cell.cellIndex], passage = cell.parentElement.cells[0];
      cell.title = column.title + "\n" + passage.textContent.trim();
    });
  }
  function jobProgress() {
    var label = document.getElementById("job-progress");
    if (!label) return;
    var id = label.getAttribute("data-job");
    function poll() {
      fetch("/jobs/" + encodeURIComponent(id) + "/progress", {credentials: "same-origin"})
        .then(function (r) { return r.json(); })
        .then(function (job) {
          label.textContent = job.done + " of " + job.total + " pairs";
          document.getElementById("job-bar").value = job.done;
          document.getElementById("job-state").textContent = job.state;
          document.getElementById("job-error").textContent = job.error || "";
          if (job.state === "done") document.getElementById("job-done").hidden = false;
          if (job.state === "starting" || job.state === "running") setTimeout(poll, 300);
        })
        .catch(function () { setTimeout(poll, 1000); });
    }
    poll();
  }
  document.addEventListener("DOMContentLoaded", function () { matrixKeys(); matrixTitles(); jobProgress(); });
})();
