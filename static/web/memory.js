/* The memory panel, enhanced. Progressive only: every control is a plain HTML form that
 * works without this file. With it:
 *  - a form marked data-panel-form is sent with fetch(); the server answers exactly as for
 *    the plain form (a redirect to the panel with a flash message), and the new flash
 *    messages and columns replace the old ones, so there is no full reload and the same
 *    server code validates and renders everything;
 *  - the agent picker switches on change; select-all and a selection count for bulk.
 */
(function () {
  "use strict";

  var app = document.getElementById("memory-app");
  if (!app || !window.fetch || !window.FormData || !window.DOMParser) return;

  var strings = {};
  try {
    strings = JSON.parse(document.getElementById("memory-strings").textContent) || {};
  } catch (e) { /* keep the fallbacks below */ }

  function t(key, params) {
    var text = strings[key] || key;
    Object.keys(params || {}).forEach(function (name) {
      text = text.split("%(" + name + ")s").join(String(params[name]));
    });
    return text;
  }

  var busy = false;

  function columns() { return document.getElementById("memory-columns"); }
  function flash() { return document.getElementById("memory-flash"); }

  function showError(text) {
    var box = flash();
    box.textContent = "";
    var p = document.createElement("p");
    p.className = "notice flash error";
    p.textContent = text;
    box.appendChild(p);
  }

  // Put the flash messages and the columns of a freshly rendered panel in place.
  function swapIn(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var newColumns = doc.getElementById("memory-columns");
    var newFlash = doc.getElementById("memory-flash");
    var oldColumns = columns();
    if (!newColumns || !oldColumns || !newFlash) return false;
    var hadFocus = oldColumns.contains(document.activeElement);
    flash().innerHTML = newFlash.innerHTML; // the live region stays, its content changes
    oldColumns.replaceWith(document.importNode(newColumns, true));
    enhanceColumns();
    if (hadFocus) flash().focus({ preventScroll: true });
    return true;
  }

  function refresh() {
    return fetch(window.location.href, { credentials: "same-origin" }).then(function (response) {
      return response.text().then(function (html) { swapIn(html); });
    });
  }

  function setBusy(value) {
    busy = value;
    var cols = columns();
    if (cols) cols.setAttribute("aria-busy", value ? "true" : "false");
  }

  function submit(form, submitter) {
    if (busy) return;
    var data = new FormData(form);
    if (submitter && submitter.name) data.append(submitter.name, submitter.value);
    // Not form.action: the bulk buttons are named "action" and shadow the property.
    var url = new URL(form.getAttribute("action") || "", window.location.href).href;
    setBusy(true);
    fetch(url, { method: "POST", body: data, credentials: "same-origin" }).then(
      function (response) {
        var path = new URL(response.url, window.location.href).pathname;
        if (response.ok && path !== window.location.pathname) {
          window.location.href = response.url; // e.g. the session expired: the login page
          return null;
        }
        if (response.status === 404) {
          return refresh().then(function () { showError(t("notFound")); });
        }
        if (!response.ok) {
          showError(t("httpError", { status: response.status }));
          return null;
        }
        return response.text().then(function (html) {
          if (!swapIn(html)) window.location.reload();
        });
      },
      function () { showError(t("networkError")); }
    ).then(function () { setBusy(false); }, function () {
      setBusy(false);
      showError(t("networkError"));
    });
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-panel-form")) return;
    if (!app.contains(form)) return;
    event.preventDefault();
    submit(form, event.submitter || null);
  });

  // -- bulk selection ---------------------------------------------------------------------
  function picks() {
    return Array.prototype.slice.call(document.querySelectorAll('input.pick[form="bulk-form"]'));
  }

  function updateBulk() {
    var form = document.getElementById("bulk-form");
    if (!form) return;
    var all = picks();
    var chosen = all.filter(function (box) { return box.checked; }).length;
    var selectAll = document.getElementById("select-all");
    selectAll.checked = all.length > 0 && chosen === all.length;
    selectAll.indeterminate = chosen > 0 && chosen < all.length;
    form.querySelectorAll('button[name="action"]').forEach(function (button) {
      button.disabled = chosen === 0;
    });
    var count = document.getElementById("bulk-count");
    if (count) count.textContent = chosen ? t("selected", { n: chosen }) : "";
  }

  function enhanceColumns() {
    var label = document.getElementById("select-all-label");
    if (!label) return;
    label.hidden = false;
    if (!document.getElementById("bulk-count")) {
      var count = document.createElement("span");
      count.id = "bulk-count";
      count.className = "bulk-count";
      count.setAttribute("aria-live", "polite");
      label.insertAdjacentElement("afterend", count);
    }
    updateBulk();
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.id === "select-all") {
      picks().forEach(function (box) { box.checked = target.checked; });
      updateBulk();
    } else if (target.classList && target.classList.contains("pick")) {
      updateBulk();
    } else if (target.id === "agent-select") {
      HTMLFormElement.prototype.submit.call(target.form);
    }
  });

  // The agent picker switches on change; its button is only needed without JavaScript.
  var go = document.getElementById("agent-go");
  if (go) go.hidden = true;
  enhanceColumns();
})();
