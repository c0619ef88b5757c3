/* The knowledge-base page, enhanced: drop a file on the upload form, and watch documents
 * that are still processing turn ready (or failed) without reloading. Everything works
 * without this file: the forms post and the page reloads. */
(function () {
  "use strict";
  var strings = JSON.parse(document.getElementById("kb-strings").textContent);
  var form = document.getElementById("upload-form");
  var zone = document.getElementById("drop-zone");
  var input = document.getElementById("kb-file");

  if (form && zone && input) {
    ["dragenter", "dragover"].forEach(function (name) {
      zone.addEventListener(name, function (event) {
        event.preventDefault();
        zone.classList.add("dragging");
      });
    });
    ["dragleave", "drop"].forEach(function (name) {
      zone.addEventListener(name, function (event) {
        event.preventDefault();
        zone.classList.remove("dragging");
      });
    });
    zone.addEventListener("drop", function (event) {
      var files = event.dataTransfer && event.dataTransfer.files;
      if (!files || !files.length) return;
      var transfer = new DataTransfer();
      transfer.items.add(files[0]);
      input.files = transfer.files;
      var button = document.getElementById("upload-button");
      if (button) {
        button.disabled = true;
        button.textContent = strings.uploading;
      }
      form.submit();
    });
  }

  // Documents still processing: ask the API for their status every two seconds.
  var rows = Array.prototype.slice.call(
    document.querySelectorAll('#document-table tr[data-status="processing"]')
  );
  var labels = { ready: strings.statusReady, failed: strings.statusFailed, processing: strings.statusProcessing };
  function poll() {
    rows = rows.filter(function (row) { return row.dataset.status === "processing"; });
    if (!rows.length) return;
    Promise.all(rows.map(function (row) {
      return fetch("/api/kb/documents/" + row.dataset.documentId, {
        credentials: "same-origin", headers: { Accept: "application/json" }
      }).then(function (response) {
        return response.ok ? response.json() : null;
      }).then(function (doc) {
        if (!doc || doc.status === "processing") return;
        row.dataset.status = doc.status;
        var badge = row.querySelector(".doc-status .badge");
        badge.className = "badge status-" + doc.status;
        badge.textContent = labels[doc.status] || doc.status;
        row.querySelector(".doc-chunks").textContent = String(doc.chunk_count);
        if (doc.error) {
          var error = document.createElement("p");
          error.className = "doc-error";
          error.textContent = doc.error;
          row.querySelector(".doc-status").appendChild(error);
        }
      }).catch(function () { /* offline for a moment: try again on the next round */ });
    })).then(function () { window.setTimeout(poll, 2000); });
  }
  if (rows.length) window.setTimeout(poll, 1000);
})();
