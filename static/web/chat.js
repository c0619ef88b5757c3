/*
 * The chat page (issue #7, design v2 §2.3). Plain JS, no build step, no dependencies.
 *
 * All data comes from the public API (same-origin session auth, CSRF header from the
 * cookie). Every user-visible string comes from the template (json_script "chat-strings").
 * Teachers' text is inserted with textContent; the assistant's answers are Markdown and
 * math, rendered and sanitised by markdown.js (ChatMarkdown), never inserted raw.
 */
(function () {
  "use strict";

  var config = JSON.parse(document.getElementById("chat-config").textContent);
  var STR = JSON.parse(document.getElementById("chat-strings").textContent);
  var LANG = document.documentElement.lang || "zh-hans";
  var markdown = window.ChatMarkdown.create({
    image: STR.imagePlaceholder,
    imageNoAlt: STR.imageNoAlt,
    formulaPending: STR.formulaPending,
  });

  function $(id) { return document.getElementById(id); }

  var el = {
    app: $("chat-app"),
    sidebar: $("chat-sidebar"),
    backdrop: $("drawer-backdrop"),
    drawerToggle: $("drawer-toggle"),
    drawerClose: $("drawer-close"),
    newThread: $("new-thread"),
    threadList: $("thread-list"),
    threadEmpty: $("thread-empty"),
    threadMore: $("thread-more"),
    agentSelect: $("agent-select"),
    offlineBadge: $("offline-badge"),
    threadTitle: $("thread-title"),
    notice: $("memory-notice"),
    noticeText: $("memory-notice-text"),
    noticeDismiss: $("memory-notice-dismiss"),
    pageError: $("page-error"),
    status: $("chat-status"),
    messages: $("messages"),
    composer: $("composer"),
    input: $("composer-input"),
    send: $("send-button"),
    chip: $("continue-chip"),
    chipText: $("continue-chip-text"),
    chipDismiss: $("continue-chip-dismiss"),
    dialog: $("context-dialog"),
    dialogBody: $("context-dialog-body"),
    dialogClose: $("context-dialog-close"),
  };

  var state = {
    agents: [],
    agent: null,
    threadId: null, // null: the next send starts a new thread (no thread_id)
    threads: [],
    threadsPage: 0,
    threadsHasMore: false,
    turnNumbers: {}, // run id -> 1-based turn number in the thread shown
    turnCount: 0,
    continueRunId: null, // set only by the explicit 「在上次产物上继续」 action
    busy: false,
    viewSeq: 0, // bumped whenever the conversation shown changes
  };

  // -- small helpers -------------------------------------------------------------------
  function t(key, params) {
    var text = STR[key] || key;
    if (params) {
      text = text.replace(/%\((\w+)\)s/g, function (match, name) {
        return Object.prototype.hasOwnProperty.call(params, name) ? String(params[name]) : match;
      });
    }
    return text;
  }

  function make(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function button(className, text, onClick) {
    var node = make("button", className, text);
    node.type = "button";
    if (onClick) node.addEventListener("click", onClick);
    return node;
  }

  var store = {
    key: function (name) { return "agent-memory.chat." + config.userKey + "." + name; },
    get: function (name) {
      try { return window.localStorage.getItem(store.key(name)); } catch (e) { return null; }
    },
    set: function (name, value) {
      try {
        if (value === null || value === "") window.localStorage.removeItem(store.key(name));
        else window.localStorage.setItem(store.key(name), value);
      } catch (e) { /* storage full or disabled: the page still works */ }
    },
  };

  function draftGet(agentId) { return store.get("draft." + agentId) || ""; }
  function draftSet(agentId, text) { store.set("draft." + agentId, text.trim() ? text : ""); }

  function csrfToken() {
    var name = config.csrfCookieName + "=";
    var parts = document.cookie ? document.cookie.split(";") : [];
    for (var i = 0; i < parts.length; i++) {
      var part = parts[i].trim();
      if (part.indexOf(name) === 0) return decodeURIComponent(part.slice(name.length));
    }
    // Fallback when the cookie is HttpOnly: the logout form carries the same token.
    var field = document.querySelector(".site-logout input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  function shortTime(iso) {
    var date = new Date(iso);
    if (isNaN(date.getTime())) return "";
    var seconds = (date.getTime() - Date.now()) / 1000;
    var abs = Math.abs(seconds);
    try {
      var rtf = new Intl.RelativeTimeFormat(LANG, { numeric: "auto", style: "short" });
      if (abs < 60) return rtf.format(0, "second");
      if (abs < 3600) return rtf.format(Math.round(seconds / 60), "minute");
      if (abs < 86400) return rtf.format(Math.round(seconds / 3600), "hour");
      if (abs < 7 * 86400) return rtf.format(Math.round(seconds / 86400), "day");
    } catch (e) { /* no Intl.RelativeTimeFormat: fall through to a date */ }
    var options = { month: "numeric", day: "numeric" };
    if (date.getFullYear() !== new Date().getFullYear()) options.year = "numeric";
    return date.toLocaleDateString(LANG, options);
  }

  function fullTime(iso) {
    var date = new Date(iso);
    return isNaN(date.getTime()) ? "" : date.toLocaleString(LANG);
  }

  // -- API -------------------------------------------------------------------------------
  function ApiError(status, data, kind) {
    this.status = status; // 0 for a network failure
    this.data = data;
    this.kind = kind || "http";
  }

  function parseBody(text) {
    if (!text) return null;
    try { return JSON.parse(text); } catch (e) { /* not JSON */ }
    // An error rendered for an SSE client: "event: error\ndata: {...}".
    var found = null;
    parseSSEBlocks(text, function (event, data) { if (!found) found = data; });
    return found;
  }

  function request(path, options) {
    options = options || {};
    var method = options.method || "GET";
    var headers = { Accept: "application/json" };
    if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
    var init = { method: method, headers: headers, credentials: "same-origin" };
    if (options.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(options.body);
    }
    return fetch(config.apiRoot + path, init).then(
      function (response) {
        return response.text().then(function (text) {
          var data = parseBody(text);
          if (!response.ok) throw new ApiError(response.status, data);
          return data;
        });
      },
      function () { throw new ApiError(0, null, "network"); }
    );
  }

  function firstFieldError(data) {
    if (!data || typeof data !== "object") return { field: "", message: "" };
    if (typeof data.detail === "string") return { field: "", message: data.detail };
    var fields = Object.keys(data);
    for (var i = 0; i < fields.length; i++) {
      var value = data[fields[i]];
      var message = Array.isArray(value) ? value[0] : value;
      if (typeof message === "string") return { field: fields[i], message: message };
    }
    return { field: "", message: "" };
  }

  function friendlyError(err) {
    if (!(err instanceof ApiError) || err.kind === "network") return t("networkError");
    if (err.kind === "run") return (err.data && err.data.message) || t("failedRun");
    var status = err.status;
    var first = firstFieldError(err.data);
    if (status === 401) return t("sessionExpired");
    if (status === 429) {
      var wait = err.data && err.data.retry_after;
      return wait ? t("throttled", { seconds: wait }) : t("throttledSoon");
    }
    if (status === 404) return t("notFound");
    if (status === 400 && first.field === "thread_id") return t("threadUnavailable");
    if (status >= 400 && status < 500 && first.message) return t("rejected", { message: first.message });
    return t("httpError", { status: status });
  }

  // -- server-sent events over fetch (EventSource cannot POST) -----------------------------
  function parseSSEBlock(block, onEvent) {
    var event = "message";
    var data = [];
    block.split("\n").forEach(function (line) {
      if (!line || line.charAt(0) === ":") return;
      var colon = line.indexOf(":");
      var field = colon < 0 ? line : line.slice(0, colon);
      var value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    });
    if (!data.length) return;
    var payload;
    try { payload = JSON.parse(data.join("\n")); } catch (e) { payload = { text: data.join("\n") }; }
    onEvent(event, payload);
  }

  function parseSSEBlocks(text, onEvent) {
    text.replace(/\r\n?/g, "\n").split("\n\n").forEach(function (block) {
      parseSSEBlock(block, onEvent);
    });
  }

  function readEventStream(response, onEvent) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder("utf-8");
    var buffer = "";
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) {
          buffer += decoder.decode();
          if (buffer.trim()) parseSSEBlocks(buffer, onEvent);
          return;
        }
        buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, "\n");
        var end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          var block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          parseSSEBlock(block, onEvent);
        }
        return pump();
      });
    }
    return pump();
  }

  // -- page-level messages -------------------------------------------------------------
  function showPageError(text) {
    el.pageError.textContent = text || "";
    el.pageError.hidden = !text;
  }

  // A short spoken status (visually hidden, role=status): "answering", "answered".
  function announce(text) {
    el.status.textContent = "";
    if (text) window.setTimeout(function () { el.status.textContent = text; }, 50);
  }

  // -- drawer (narrow screens) ---------------------------------------------------------
  /*
   * An open drawer is modal: everything behind it is inert (no focus, hidden from screen
   * readers), Esc, the close button and the backdrop close it, and focus goes back to the
   * toggle. Choosing a thread or a new conversation closes it too (focus then goes to
   * where the teacher continues).
   */
  var drawerMedia = window.matchMedia("(max-width: 720px)");

  function drawerIsOpen() { return el.app.classList.contains("drawer-open"); }

  function setDrawer(open, options) {
    var wasOpen = drawerIsOpen();
    open = open && drawerMedia.matches;
    el.app.classList.toggle("drawer-open", open);
    el.backdrop.hidden = !open;
    el.drawerToggle.setAttribute("aria-expanded", open ? "true" : "false");
    behindDrawer().forEach(function (node) { node.inert = open; });
    if (open) {
      var first = el.sidebar.querySelector("button:not([disabled])");
      if (first) first.focus();
    } else if (wasOpen && !(options && options.keepFocus)) {
      el.drawerToggle.focus();
    }
  }

  function behindDrawer() {
    var header = document.querySelector(".site-header");
    return [header, el.app.querySelector(".chat-main")].filter(Boolean);
  }

  // -- agents ------------------------------------------------------------------------------
  function loadAgents() {
    return request("agents").then(function (agents) {
      state.agents = Array.isArray(agents) ? agents : [];
      el.agentSelect.textContent = "";
      if (!state.agents.length) {
        showPageError(t("noAgents"));
        el.input.disabled = true;
        el.send.disabled = true;
        el.newThread.disabled = true;
        el.agentSelect.disabled = true;
        return;
      }
      var tenants = {};
      state.agents.forEach(function (agent) { tenants[agent.tenant_id] = true; });
      var manyTenants = Object.keys(tenants).length > 1;
      state.agents.forEach(function (agent) {
        var option = make("option", "", manyTenants ? agent.name + " · " + agent.tenant_name : agent.name);
        option.value = String(agent.id);
        el.agentSelect.appendChild(option);
      });
      // /chat/?thread=<id> (links from the memory panel) opens that conversation.
      var wanted = new URLSearchParams(window.location.search).get("thread");
      var linkFailed = false;
      var linked = wanted ? request("threads/" + encodeURIComponent(wanted)).then(
        function (thread) { return thread; },
        function () { linkFailed = true; return null; }
      ) : Promise.resolve(null);
      return linked.then(function (thread) {
        if (wanted && window.history && window.history.replaceState) {
          window.history.replaceState(null, "", window.location.pathname);
        }
        var saved = thread ? String(thread.agent_id) : store.get("agent");
        var chosen = state.agents.filter(function (a) { return String(a.id) === saved; })[0] || state.agents[0];
        el.agentSelect.value = String(chosen.id);
        return selectAgent(chosen, thread && String(thread.agent_id) === String(chosen.id) ? thread.id : null)
          .then(function () { if (linkFailed) showPageError(t("notFound")); });
      });
    });
  }

  function selectAgent(agent, openThreadId) {
    state.agent = agent;
    store.set("agent", String(agent.id));
    // Provider labels: the offline demo model is always visibly marked.
    var provider = agent.provider || {};
    el.offlineBadge.hidden = !provider.is_offline;
    el.offlineBadge.textContent = provider.is_offline ? provider.label : "";
    el.offlineBadge.title = provider.is_offline ? t("offlineBadgeTitle") : "";
    // The cross-provider memory notice, once per agent until dismissed.
    var memoryProvider = agent.memory_provider || {};
    var dismissed = store.get("memoryNoticeSeen." + agent.id) === "1";
    el.notice.hidden = !(agent.memory_notice && !dismissed);
    el.noticeText.textContent = agent.memory_notice ? t("memoryNotice", { label: memoryProvider.label || memoryProvider.name || "" }) : "";
    el.input.value = draftGet(agent.id);
    showPageError("");
    setBusy(state.busy);
    el.messages.setAttribute("aria-busy", "true");
    return loadThreads(true).then(function () {
      if (openThreadId) return openThread(openThreadId);
      var recent = state.threads[0];
      if (recent) return openThread(recent.id);
      startNewThread();
    });
  }

  // -- thread list -----------------------------------------------------------------------
  function loadThreads(reset) {
    var agent = state.agent;
    if (!agent) return Promise.resolve();
    var page = reset ? 1 : state.threadsPage + 1;
    return request("agents/" + agent.id + "/threads?status=active&page=" + page).then(function (data) {
      if (state.agent !== agent) return;
      var results = (data && data.results) || [];
      state.threads = reset ? results : state.threads.concat(results.filter(function (th) {
        return !state.threads.some(function (known) { return known.id === th.id; });
      }));
      state.threadsPage = page;
      state.threadsHasMore = Boolean(data && data.next);
      renderThreads();
    }, function (err) {
      showPageError(friendlyError(err));
    });
  }

  function renderThreads() {
    el.threadList.textContent = "";
    state.threads.forEach(function (thread) {
      el.threadList.appendChild(threadItem(thread));
    });
    el.threadEmpty.textContent = t("noThreads");
    el.threadEmpty.hidden = state.threads.length > 0;
    el.threadMore.textContent = t("loadMore");
    el.threadMore.hidden = !state.threadsHasMore;
    updateHeaderTitle();
  }

  function threadItem(thread) {
    var li = make("li", "thread-item");
    li.dataset.threadId = thread.id;
    if (thread.id === state.threadId) li.classList.add("current");
    var open = button("thread-open", null, function () {
      openThread(thread.id);
      if (drawerIsOpen()) {
        setDrawer(false, { keepFocus: true });
        el.input.focus();
      }
    });
    if (thread.id === state.threadId) open.setAttribute("aria-current", "true");
    open.appendChild(make("span", "thread-name", thread.title || t("untitled")));
    var meta = make("span", "thread-meta");
    var time = make("time", "", shortTime(thread.updated_at));
    time.dateTime = thread.updated_at;
    time.title = fullTime(thread.updated_at);
    meta.appendChild(time);
    if (thread.run_count) meta.appendChild(make("span", "", " · " + t("runs", { n: thread.run_count })));
    open.appendChild(meta);
    li.appendChild(open);

    var actions = make("div", "thread-actions");
    actions.appendChild(button("link-button thread-rename", t("rename"), function () {
      startRename(li, thread);
    }));
    actions.appendChild(button("link-button thread-archive", t("archive"), function (event) {
      event.currentTarget.disabled = true;
      archiveThread(thread);
    }));
    li.appendChild(actions);
    return li;
  }

  function startRename(li, thread) {
    li.textContent = "";
    var form = make("form", "thread-rename-form");
    var input = make("input");
    input.type = "text";
    input.maxLength = 200;
    input.value = thread.title || "";
    input.setAttribute("aria-label", t("renameLabel"));
    var save = make("button", "button primary small", t("save"));
    save.type = "submit";
    var cancel = button("button subtle small", t("cancel"), function () { renderThreads(); });
    form.appendChild(input);
    form.appendChild(save);
    form.appendChild(cancel);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var title = input.value.trim();
      if (!title || title === thread.title) { renderThreads(); return; }
      save.disabled = true;
      request("threads/" + thread.id, { method: "PATCH", body: { title: title } }).then(function (data) {
        thread.title = data.title;
        renderThreads();
      }, function (err) {
        save.disabled = false;
        showPageError(t("actionFailed", { message: friendlyError(err) }));
      });
    });
    input.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { event.preventDefault(); renderThreads(); }
    });
    li.appendChild(form);
    input.focus();
    input.select();
  }

  function archiveThread(thread) {
    request("threads/" + thread.id + "/archive", { method: "POST" }).then(function () {
      state.threads = state.threads.filter(function (th) { return th.id !== thread.id; });
      if (state.threadId === thread.id) startNewThread();
      renderThreads();
    }, function (err) {
      renderThreads();
      showPageError(t("actionFailed", { message: friendlyError(err) }));
    });
  }

  function updateHeaderTitle() {
    var current = null;
    for (var i = 0; i < state.threads.length; i++) {
      if (state.threads[i].id === state.threadId) current = state.threads[i];
    }
    var title = state.threadId ? (current ? current.title : el.threadTitle.textContent) : t("newThreadTitle");
    el.threadTitle.textContent = title || t("untitled");
  }

  function markCurrentThread() {
    Array.prototype.forEach.call(el.threadList.children, function (li) {
      var isCurrent = li.dataset.threadId === state.threadId;
      li.classList.toggle("current", isCurrent);
      var open = li.querySelector(".thread-open");
      if (open) {
        if (isCurrent) open.setAttribute("aria-current", "true");
        else open.removeAttribute("aria-current");
      }
    });
    updateHeaderTitle();
  }

  // -- conversation view -----------------------------------------------------------------
  function resetView(threadId) {
    state.viewSeq += 1;
    state.threadId = threadId;
    state.turnNumbers = {};
    state.turnCount = 0;
    clearContinue();
    el.messages.textContent = "";
    markCurrentThread();
  }

  function startNewThread() {
    resetView(null);
    el.messages.appendChild(make("p", "messages-hint muted", t("newThreadHint")));
    el.messages.setAttribute("aria-busy", "false");
  }

  function fetchAllRuns(threadId) {
    var runs = [];
    function page(n) {
      return request("threads/" + threadId + "/runs?page=" + n + "&page_size=100").then(function (data) {
        runs = runs.concat((data && data.results) || []);
        if (data && data.next) return page(n + 1);
        return runs;
      });
    }
    return page(1);
  }

  function openThread(threadId) {
    resetView(threadId);
    var seq = state.viewSeq;
    el.messages.setAttribute("aria-busy", "true");
    return fetchAllRuns(threadId).then(function (runs) {
      if (seq !== state.viewSeq) return;
      runs.forEach(renderStoredRun);
      scrollToEnd(true);
    }, function (err) {
      if (seq !== state.viewSeq) return;
      showPageError(err.status === 404 ? t("notFound") : t("loadFailed"));
    }).then(function () {
      if (seq === state.viewSeq) el.messages.setAttribute("aria-busy", "false");
    });
  }

  function renderStoredRun(run) {
    var continued = run.context && run.context.run_id ? state.turnNumbers[run.context.run_id] : null;
    el.messages.appendChild(userMessage(run.input, continued));
    var msg = assistantMessage();
    el.messages.appendChild(msg.node);
    if (run.status === "completed") {
      msg.complete(run.id, run.output);
    } else if (run.status === "failed") {
      msg.fail(run.id, run.error_message || t("failedRun"), function () { retrySend(run.input, null, msg); });
    } else {
      msg.body.textContent = t("thinking");
      msg.setRunId(run.id);
    }
  }

  function userMessage(text, continuedTurn) {
    var node = make("article", "msg user");
    var meta = make("div", "msg-meta", t("you"));
    if (continuedTurn) meta.appendChild(make("span", "msg-continued", " · " + t("continuedFrom", { n: continuedTurn })));
    node.appendChild(meta);
    node.appendChild(make("div", "msg-body", text));
    return node;
  }

  // Copy text to the clipboard; the fallback serves plain-http school servers, where
  // navigator.clipboard does not exist (it needs a secure context).
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = make("textarea", "visually-hidden");
      area.value = text;
      area.setAttribute("readonly", "");
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      area.remove();
      if (ok) resolve(); else reject(new Error("copy"));
    });
  }

  function copyButton(source) {
    var timer = null;
    var node = button("link-button action-copy", t("copy"), function () {
      copyText(source).then(function () { node.textContent = t("copied"); }, function () {
        node.textContent = t("copyFailed");
      }).then(function () {
        clearTimeout(timer);
        timer = setTimeout(function () { node.textContent = t("copy"); }, 2000);
      });
    });
    node.title = t("copyTitle");
    return node;
  }

  function downloadLink(runId) {
    var link = make("a", "link-button action-download", t("downloadWord"));
    link.href = config.apiRoot + "runs/" + encodeURIComponent(runId) + "/export?format=docx";
    link.setAttribute("download", "");
    link.title = t("downloadWordTitle");
    return link;
  }

  // An assistant bubble and the operations on it.
  function assistantMessage() {
    var node = make("article", "msg assistant");
    node.appendChild(make("div", "msg-meta", t("assistant")));
    var body = make("div", "msg-body md");
    var error = make("p", "msg-error");
    error.setAttribute("role", "alert");
    error.hidden = true;
    var actions = make("div", "msg-actions");
    node.appendChild(body);
    node.appendChild(error);
    node.appendChild(actions);
    var runId = null;

    function addRememberLink() {
      if (!runId) return;
      var id = runId;
      actions.appendChild(button("link-button action-remembered", t("remembered"), function () {
        openContext(id);
      }));
    }

    // Streamed text is re-rendered at most once a frame, whatever the delta rate.
    var streamText = null;
    var frame = null;
    function renderFrame() {
      frame = null;
      if (streamText === null) return;
      markdown.render(body, streamText, true);
      scrollToEnd(false);
    }

    var msg = {
      node: node,
      body: body,
      stream: function (text) {
        if (streamText === null) body.textContent = ""; // the "thinking" line
        streamText = text;
        if (frame === null) frame = window.requestAnimationFrame(renderFrame);
      },
      stopStream: function () {
        streamText = null;
        if (frame !== null) window.cancelAnimationFrame(frame);
        frame = null;
      },
      setRunId: function (id) {
        runId = id;
        node.dataset.runId = String(id);
        if (!(id in state.turnNumbers)) {
          state.turnCount += 1;
          state.turnNumbers[id] = state.turnCount;
        }
      },
      complete: function (id, output) {
        msg.stopStream();
        msg.setRunId(id);
        node.dataset.status = "completed";
        if (body.textContent === t("thinking")) body.textContent = "";
        markdown.render(body, output || "", false);
        node.dataset.rendered = "true";
        actions.textContent = "";
        addRememberLink();
        actions.appendChild(button("link-button action-continue", t("continueFrom"), function () {
          setContinue(id);
        }));
        actions.appendChild(copyButton(output || ""));
        actions.appendChild(downloadLink(id));
      },
      fail: function (id, message, onRetry) {
        if (id) msg.setRunId(id);
        node.dataset.status = "failed";
        node.classList.add("failed");
        if (!body.textContent || body.textContent === t("thinking")) body.hidden = true;
        error.textContent = message;
        error.hidden = false;
        actions.textContent = "";
        if (onRetry) {
          actions.appendChild(button("button small retry-button", t("retry"), function (event) {
            event.currentTarget.disabled = true;
            onRetry();
          }));
        }
        addRememberLink();
      },
    };
    return msg;
  }

  function nearBottom() {
    var box = el.messages;
    return box.scrollHeight - box.scrollTop - box.clientHeight < 80;
  }

  function scrollToEnd(force) {
    if (force || nearBottom()) el.messages.scrollTop = el.messages.scrollHeight;
  }

  // -- continue on an earlier artifact (explicit only, design v2 §2.2) ---------------------
  function setContinue(runId) {
    state.continueRunId = runId;
    el.chipText.textContent = t("continueChip", { n: state.turnNumbers[runId] || "?" });
    el.chip.hidden = false;
    el.input.focus();
  }

  function clearContinue() {
    state.continueRunId = null;
    el.chip.hidden = true;
    el.chipText.textContent = "";
  }

  // -- sending -----------------------------------------------------------------------------
  function setBusy(busy) {
    state.busy = busy;
    el.send.disabled = busy || !state.agent;
    el.composer.setAttribute("aria-busy", busy ? "true" : "false");
  }

  function retrySend(text, continueRunId) {
    if (state.busy) return;
    send(text, continueRunId);
  }

  function send(text, continueRunId) {
    var agent = state.agent;
    if (!agent || state.busy || !text.trim()) return;
    var seq = state.viewSeq;
    var body = { input: text };
    if (state.threadId) body.thread_id = state.threadId;
    if (continueRunId) body.context = { run_id: continueRunId };
    setBusy(true);
    showPageError("");
    var hint = el.messages.querySelector(".messages-hint");
    if (hint) hint.remove();
    el.messages.appendChild(userMessage(text, continueRunId ? state.turnNumbers[continueRunId] : null));
    var msg = assistantMessage();
    msg.node.classList.add("streaming");
    // A screen reader hears the bubble once it is complete, not every streamed frame.
    msg.node.setAttribute("aria-busy", "true");
    msg.body.textContent = t("thinking");
    el.messages.appendChild(msg.node);
    announce(t("answering"));
    scrollToEnd(true);

    var received = "";
    var outcome = null; // "done" | ApiError
    var runId = null;

    function onEvent(event, data) {
      if (event === "started") {
        runId = data.run_id;
        if (seq === state.viewSeq) {
          state.threadId = data.thread_id;
          markCurrentThread();
        }
        msg.setRunId(runId);
        // The server has the message now: the draft can go (unless a new one was typed).
        if (draftGet(agent.id) === text) draftSet(agent.id, "");
        if (state.agent === agent && el.input.value === text) el.input.value = ""; // a retry
      } else if (event === "delta") {
        received += data.text || "";
        msg.stream(received);
      } else if (event === "done") {
        outcome = "done";
        msg.complete(data.run.id, data.run.output);
        msg.node.setAttribute("aria-busy", "false");
        announce(t("answered"));
        scrollToEnd(false);
      } else if (event === "error") {
        outcome = new ApiError(200, data, "run");
      }
    }

    fetch(config.apiRoot + "agents/" + agent.id + "/run/stream", {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "X-CSRFToken": csrfToken(),
      },
      body: JSON.stringify(body),
    }).then(function (response) {
      if (!response.ok) {
        return response.text().then(function (raw) {
          throw new ApiError(response.status, parseBody(raw));
        });
      }
      return readEventStream(response, onEvent);
    }).then(function () {
      if (outcome === null) throw new ApiError(0, null, "network");
      if (outcome !== "done") throw outcome;
    }).catch(function (err) {
      if (!(err instanceof ApiError)) err = new ApiError(0, null, "network");
      var first = firstFieldError(err.data);
      var retryContinue = continueRunId;
      if (err.status === 400 && first.field === "thread_id" && seq === state.viewSeq) {
        state.threadId = null; // the thread is gone: the retry starts a new one
        markCurrentThread();
      }
      if (err.status === 400 && first.field.indexOf("context") === 0) retryContinue = null;
      if (err.kind === "run" && err.data && err.data.thread_id && seq === state.viewSeq) {
        state.threadId = err.data.thread_id;
      }
      var failedRunId = (err.kind === "run" && err.data && err.data.run_id) || runId;
      msg.node.classList.remove("streaming");
      msg.node.setAttribute("aria-busy", "false");
      msg.stopStream();
      msg.body.textContent = "";
      announce("");
      msg.fail(failedRunId, friendlyError(err), function () { retrySend(text, retryContinue); });
      // Never lose what the teacher typed.
      if (state.agent === agent && !el.input.value.trim()) {
        el.input.value = text;
        draftSet(agent.id, text);
      } else if (!draftGet(agent.id)) {
        draftSet(agent.id, text);
      }
      scrollToEnd(false);
    }).then(function () {
      msg.node.classList.remove("streaming");
      setBusy(false);
      if (state.agent === agent) loadThreads(true);
    });
  }

  function submitComposer() {
    var text = el.input.value;
    if (!text.trim() || state.busy || !state.agent) return;
    var continueRunId = state.continueRunId;
    clearContinue();
    el.input.value = ""; // the draft stays stored until the server accepts the message
    send(text, continueRunId);
  }

  // -- "what it remembered" ----------------------------------------------------------------
  function manifestRow(label, tokens, details, truncated) {
    var li = make("li", tokens ? "" : "muted");
    li.appendChild(make("strong", "", label));
    var parts = [t("tokens", { n: tokens || 0 })];
    details.forEach(function (detail) { if (detail) parts.push(detail); });
    if (truncated) parts.push(t("truncated"));
    li.appendChild(document.createTextNode(" · " + parts.join(" · ")));
    return li;
  }

  function idList(key, ids) {
    ids = (ids || []).filter(function (id) { return id !== null && id !== undefined; });
    return ids.length ? t(key, { ids: ids.join(", #") }) : "";
  }

  function renderContext(data) {
    var box = el.dialogBody;
    box.textContent = "";
    box.appendChild(make("p", "muted", t("contextIntro")));
    if (data.injected_text) {
      var injected = make("pre", "injected-text", data.injected_text);
      injected.tabIndex = 0; // it scrolls: reachable and scrollable by keyboard
      box.appendChild(injected);
    }
    else box.appendChild(make("p", "context-empty", t("contextEmpty")));

    var manifest = data.manifest || {};
    var sections = manifest.sections || {};
    box.appendChild(make("h3", "", t("manifestTitle")));
    var list = make("ul", "manifest");
    var core = sections.core || {};
    list.appendChild(manifestRow(t("sectionCore"), core.tokens, [idList("factIds", core.fact_ids)], core.truncated));
    var thread = sections.thread || {};
    list.appendChild(manifestRow(t("sectionThread"), thread.tokens, [
      thread.tokens ? t("summaryTokens", { n: thread.summary_tokens || 0, m: thread.recent_tokens || 0 }) : "",
      idList("runIds", thread.run_ids),
    ], thread.truncated));
    var recall = sections.recall || {};
    var entries = recall.entries || [];
    list.appendChild(manifestRow(t("sectionRecall"), recall.tokens, [
      idList("entryIds", entries.map(function (e) { return e.id; })),
      idList("runIds", entries.map(function (e) { return e.run_id; })),
    ], recall.truncated));
    var kb = sections.kb || {};
    list.appendChild(manifestRow(t("sectionKb"), kb.tokens, [idList("chunkIds", kb.chunk_ids)], kb.truncated));
    var cont = manifest.continue_prompt || {};
    if (cont.run_id) {
      list.appendChild(manifestRow(t("sectionContinue"), cont.tokens, [idList("runIds", [cont.run_id])], false));
    }
    box.appendChild(list);
    var ledger = manifest.ledger;
    if (ledger && typeof ledger.used === "number") {
      box.appendChild(make("p", "muted", t("ledgerTotal", { used: ledger.used, total: ledger.total })));
    }
  }

  var dialogOpener = null;

  function openContext(runId) {
    dialogOpener = document.activeElement;
    el.dialogBody.textContent = "";
    el.dialogBody.appendChild(make("p", "muted", t("contextLoading")));
    if (typeof el.dialog.showModal === "function") el.dialog.showModal();
    else el.dialog.setAttribute("open", "");
    request("runs/" + runId + "/context").then(renderContext, function (err) {
      el.dialogBody.textContent = "";
      el.dialogBody.appendChild(make("p", "form-error", friendlyError(err)));
    });
  }

  function closeDialog() {
    if (typeof el.dialog.close === "function") el.dialog.close();
    else el.dialog.removeAttribute("open");
  }

  // However it closes (Esc, the close button, the backdrop), focus goes back to the
  // button that opened it.
  el.dialog.addEventListener("close", function () {
    if (dialogOpener && dialogOpener.isConnected) dialogOpener.focus();
    dialogOpener = null;
  });

  // -- wiring --------------------------------------------------------------------------------
  el.chipDismiss.setAttribute("aria-label", t("continueChipDismiss"));
  el.chipDismiss.title = t("continueChipDismiss");

  el.composer.addEventListener("submit", function (event) {
    event.preventDefault();
    submitComposer();
  });
  el.input.addEventListener("keydown", function (event) {
    // Enter sends; Shift+Enter is a new line; never while an IME is composing Chinese.
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
      event.preventDefault();
      submitComposer();
    }
  });
  el.input.addEventListener("input", function () {
    if (state.agent) draftSet(state.agent.id, el.input.value);
  });
  el.agentSelect.addEventListener("change", function () {
    var agent = state.agents.filter(function (a) { return String(a.id) === el.agentSelect.value; })[0];
    if (agent) selectAgent(agent);
  });
  el.newThread.addEventListener("click", function () {
    startNewThread();
    setDrawer(false, { keepFocus: true });
    el.input.focus();
  });
  el.threadMore.addEventListener("click", function () { loadThreads(false); });
  el.chipDismiss.addEventListener("click", function () { clearContinue(); el.input.focus(); });
  el.noticeDismiss.addEventListener("click", function () {
    if (state.agent) store.set("memoryNoticeSeen." + state.agent.id, "1");
    el.notice.hidden = true;
  });
  el.drawerToggle.addEventListener("click", function () { setDrawer(!drawerIsOpen()); });
  el.drawerClose.addEventListener("click", function () { setDrawer(false); });
  el.backdrop.addEventListener("click", function () { setDrawer(false); });
  document.addEventListener("keydown", function (event) {
    // Not while the thread rename box handles its own Esc (it cancels the rename).
    if (event.key === "Escape" && drawerIsOpen() && !event.defaultPrevented) {
      event.preventDefault();
      setDrawer(false);
    }
  });
  // Wider than a phone, the sidebar is no drawer: nothing may stay inert.
  drawerMedia.addEventListener("change", function () { if (drawerIsOpen()) setDrawer(false); });
  el.dialogClose.addEventListener("click", closeDialog);
  el.dialog.addEventListener("click", function (event) {
    if (event.target === el.dialog) closeDialog(); // a click on the backdrop
  });

  setBusy(false);
  loadAgents().catch(function (err) {
    showPageError(err instanceof ApiError && err.status === 401 ? t("sessionExpired") : t("loadFailed"));
  });
})();
