/*
 * Model output as teachers expect it (issue #16): Markdown (CommonMark, tables, GFM-style
 * lists and code) with math by KaTeX, sanitised, re-rendered while the answer streams.
 *
 * Model output is untrusted. The pipeline:
 *   1. markdown-it turns the text into HTML. Raw HTML in the text is shown as text (only
 *      `<br>` becomes a line break, as models write it in table cells): an unclosed
 *      <style> or <math> could otherwise swallow the rest of an answer. Math becomes
 *      placeholders holding the TeX as escaped text (@mdit/plugin-tex: $…$, $$…$$, \(…\),
 *      \[…\]); images become their alt text, so nothing the model wrote can make the
 *      browser fetch anything.
 *   2. DOMPurify cleans that HTML with a short allowlist (no script, no event handlers, no
 *      style except table alignment, links only to http(s)/mailto, no images, no SVG), in
 *      an inert document, and returns a DOM fragment.
 *   3. Each placeholder is typeset by KaTeX (trust: false, sizes and macro expansion
 *      capped) and that markup passes a second DOMPurify with KaTeX's profile.
 *   4. This is done block by block: a top-level block whose HTML did not change since the
 *      last render is left alone, so a long answer neither flickers nor costs more to
 *      re-render as it streams.
 * While streaming, a formula whose closing delimiter has not arrived yet is held back
 * (a small "formula coming" mark is shown instead of half a formula or a KaTeX error).
 */
(function () {
  "use strict";

  var MD_TAGS = [
    "a", "b", "blockquote", "br", "code", "del", "div", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "ins", "kbd", "li", "mark", "ol", "p", "pre", "s", "span", "strong",
    "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
  ];
  var MD_ATTRS = ["href", "title", "start", "class", "style", "colspan", "rowspan"];
  // Classes the renderer itself sets; a model's own class names could mimic the page.
  var CLASS_OK = /^(md-math|md-math-display|md-image|md-pending|language-[A-Za-z0-9_+#-]{1,30})$/;
  var ALIGN_OK = /^text-align:\s*(left|center|right);?$/;
  var URL_OK = /^(?:https?:|mailto:)/i;
  var BR_ESCAPED = /&lt;br\s*\/?&gt;/gi;

  var KATEX_OPTIONS = {
    throwOnError: true,
    trust: false, // no \href, \url, \includegraphics, \htmlStyle…
    strict: "ignore",
    maxSize: 12, // em: a \rule cannot cover the page
    maxExpand: 300, // macro expansion bombs stop early
    output: "htmlAndMathml",
  };

  var mdPurify = window.DOMPurify(window);
  var texPurify = window.DOMPurify(window);

  mdPurify.addHook("uponSanitizeAttribute", function (node, data) {
    if (data.attrName === "class") {
      var kept = data.attrValue.split(/\s+/).filter(function (name) { return CLASS_OK.test(name); });
      if (kept.length) data.attrValue = kept.join(" ");
      else data.keepAttr = false;
    } else if (data.attrName === "style") {
      // Only the column alignment markdown-it writes on table cells.
      data.keepAttr = ALIGN_OK.test(data.attrValue.trim()) && /^(TD|TH)$/.test(node.nodeName);
    }
  });
  mdPurify.addHook("afterSanitizeAttributes", function (node) {
    if (node.nodeName === "A") {
      if (node.hasAttribute("href")) {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
    }
  });
  texPurify.addHook("uponSanitizeAttribute", function (node, data) {
    // KaTeX writes sizes and colours; anything able to fetch or escape the bubble goes.
    if (data.attrName === "style" && /url\(|expression|fixed|@import|behavior/i.test(data.attrValue)) {
      data.keepAttr = false;
    }
  });

  var MD_CONFIG = {
    ALLOWED_TAGS: MD_TAGS,
    ALLOWED_ATTR: MD_ATTRS,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    ALLOWED_URI_REGEXP: URL_OK,
    // DOMPurify checks every other attribute's value against the URI pattern too.
    ADD_URI_SAFE_ATTR: ["start", "colspan", "rowspan"],
    RETURN_DOM_FRAGMENT: true,
  };
  var TEX_CONFIG = {
    USE_PROFILES: { html: true, svg: true, mathMl: true },
    ADD_TAGS: ["semantics", "annotation"],
  };
  // Set once: sanitize() would otherwise parse its configuration again on every call.
  mdPurify.setConfig(MD_CONFIG);
  texPurify.setConfig(TEX_CONFIG);

  // -- markdown-it ------------------------------------------------------------------------
  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, function (ch) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[ch];
    });
  }

  function mathPlaceholder(tex, display) {
    return display
      ? '<div class="md-math md-math-display">' + escapeHtml(tex.trim()) + "</div>\n"
      : '<span class="md-math">' + escapeHtml(tex.trim()) + "</span>";
  }

  // `文字 $$x$$ 文字`: display math written inside a line. The plugin reads `$$` only at the
  // start of a line, so this inline rule keeps such formulas from showing as raw text.
  function inlineDoubleDollar(state, silent) {
    var src = state.src;
    var start = state.pos;
    if (src.charCodeAt(start) !== 0x24 || src.charCodeAt(start + 1) !== 0x24) return false;
    var end = src.indexOf("$$", start + 2);
    while (end > 0 && src.charCodeAt(end - 1) === 0x5c) end = src.indexOf("$$", end + 2);
    if (end < 0 || end === start + 2) return false;
    if (!silent) {
      var token = state.push("math_inline_double", "math", 0);
      token.markup = "$$";
      token.content = src.slice(start + 2, end);
    }
    state.pos = end + 2;
    return true;
  }

  function createMarkdown(strings) {
    var md = window.markdownit({ html: false, linkify: true, breaks: true, typographer: false });
    md.renderer.rules.text = function (tokens, idx) {
      return escapeHtml(tokens[idx].content).replace(BR_ESCAPED, "<br>");
    };
    md.use(window.mdItPluginTex.tex, {
      delimiters: "all",
      render: function (content, displayMode) { return mathPlaceholder(content, displayMode); },
    });
    md.inline.ruler.before("math_inline_dollar", "math_inline_double", inlineDoubleDollar);
    md.renderer.rules.math_inline_double = function (tokens, idx) {
      return '<span class="md-math md-math-display">' + escapeHtml(tokens[idx].content.trim()) + "</span>";
    };
    // Images are never loaded: a model could point one anywhere. Their alt text stays.
    md.renderer.rules.image = function (tokens, idx) {
      var alt = tokens[idx].content || "";
      var label = alt ? strings.image.replace("%(alt)s", alt) : strings.imageNoAlt;
      return '<span class="md-image">' + escapeHtml(label) + "</span>";
    };
    return md;
  }

  // -- math -------------------------------------------------------------------------------
  var texCache = new Map();
  var TEX_CACHE_MAX = 400;

  function typeset(tex, display) {
    var key = (display ? "D" : "I") + tex;
    var hit = texCache.get(key);
    if (hit !== undefined) return hit;
    var result;
    try {
      var options = Object.assign({}, KATEX_OPTIONS, { displayMode: display });
      // Parsed once into an inert <template>; every later use is a cheap clone.
      var template = document.createElement("template");
      template.innerHTML = texPurify.sanitize(window.katex.renderToString(tex, options));
      result = { template: template };
    } catch (err) {
      result = { error: String((err && err.message) || err) };
    }
    if (texCache.size >= TEX_CACHE_MAX) texCache.clear();
    texCache.set(key, result);
    return result;
  }

  function typesetAll(root) {
    var nodes = root.querySelectorAll(".md-math");
    Array.prototype.forEach.call(nodes, function (node) {
      var tex = node.textContent;
      var display = node.classList.contains("md-math-display");
      var result = typeset(tex, display);
      if (result.template !== undefined) {
        node.textContent = "";
        node.appendChild(result.template.content.cloneNode(true)); // DOMPurify's output
        node.setAttribute("data-tex", tex);
      } else {
        // A formula KaTeX cannot read: its source, readable, instead of a red error.
        node.textContent = "";
        var code = document.createElement("code");
        code.className = "md-math-source";
        code.textContent = tex;
        code.title = result.error;
        node.appendChild(code);
      }
    });
  }

  // -- formulas still arriving -----------------------------------------------------------
  /*
   * Where an unclosed math delimiter starts in `text` (outside code), or -1. Inline `$…$`
   * and `\(…\)` cannot cross a blank line; `$$…$$` and `\[…\]` can. A trailing `\` or `$`
   * may be the first half of a delimiter, so it waits too.
   */
  function openMathStart(text) {
    var i = 0;
    var n = text.length;
    var open = null; // { kind: "$" | "$$" | "\\(" | "\\[", at: index }
    var fence = null;
    var lineStart = true;
    while (i < n) {
      if (lineStart) {
        lineStart = false;
        var lineEnd = text.indexOf("\n", i);
        if (lineEnd < 0) lineEnd = n;
        var line = text.slice(i, lineEnd);
        var marker = /^ {0,3}(`{3,}|~{3,})/.exec(line);
        if (fence) {
          if (marker && marker[1].charAt(0) === fence.charAt(0) && marker[1].length >= fence.length &&
              !line.slice(marker[0].length).trim()) fence = null;
          i = lineEnd + 1;
          lineStart = true;
          continue;
        }
        if (marker && !open) {
          fence = marker[1];
          i = lineEnd + 1;
          lineStart = true;
          continue;
        }
        if (!line.trim() && open && (open.kind === "$" || open.kind === "\\(")) open = null;
      }
      var ch = text.charAt(i);
      if (ch === "\n") { lineStart = true; i += 1; continue; }
      if (ch === "\\") {
        var next = text.charAt(i + 1);
        if (!next) return open ? open.at : i;
        if (!open && (next === "(" || next === "[")) open = { kind: "\\" + next, at: i };
        else if (open && ((open.kind === "\\(" && next === ")") || (open.kind === "\\[" && next === "]"))) open = null;
        i += 2;
        continue;
      }
      if (ch === "`" && !open) {
        var run = /^`+/.exec(text.slice(i))[0];
        var close = text.indexOf(run, i + run.length);
        if (close < 0) { i += run.length; continue; }
        i = close + run.length;
        continue;
      }
      if (ch === "$") {
        var double = text.charAt(i + 1) === "$";
        if (!open) {
          if (i + (double ? 2 : 1) >= n) return i;
          open = { kind: double ? "$$" : "$", at: i };
        } else if (open.kind === (double ? "$$" : "$")) {
          open = null;
        }
        i += double ? 2 : 1;
        continue;
      }
      i += 1;
    }
    return open ? open.at : -1;
  }

  // -- rendering block by block ---------------------------------------------------------------
  /*
   * The text is parsed whole (references and lists need the whole text), then each
   * top-level block is rendered to HTML on its own. A block whose HTML did not change since
   * the last render keeps its DOM: while an answer streams, only the last block or two are
   * sanitised and typeset again, and nothing above them flickers or re-lays out.
   */
  function topLevelBlocks(tokens) {
    var blocks = [];
    var depth = 0;
    var current = null;
    tokens.forEach(function (token) {
      if (depth === 0) { current = []; blocks.push(current); }
      current.push(token);
      depth += token.nesting;
    });
    return blocks;
  }

  function blockNode(html) {
    var wrapper = document.createElement("div");
    wrapper.className = "md-block";
    var fragment = mdPurify.sanitize(html);
    typesetAll(fragment);
    // Code, tables and display formulas scroll sideways when wide: keyboard users reach
    // and scroll them too (set here, after sanitising; a model's own tabindex is dropped).
    Array.prototype.forEach.call(fragment.querySelectorAll("pre, table, .md-math-display"), function (node) {
      node.setAttribute("tabindex", "0");
    });
    wrapper.appendChild(fragment);
    wrapper.mdSource = html;
    return wrapper;
  }

  function Renderer(strings) {
    this.strings = strings;
    this.md = createMarkdown(strings);
  }

  /* Render `source` into `container`. With `streaming`, an unfinished formula waits. */
  Renderer.prototype.render = function (container, source, streaming) {
    var text = source || "";
    var pending = false;
    if (streaming) {
      var cut = openMathStart(text);
      if (cut >= 0) { text = text.slice(0, cut); pending = true; }
    }
    var md = this.md;
    var env = {};
    var html = topLevelBlocks(md.parse(text, env)).map(function (block) {
      return md.renderer.render(block, md.options, env);
    });
    if (pending) html.push('<p class="md-pending">' + escapeHtml(this.strings.formulaPending) + "</p>");
    // Whatever was in the bubble before (the "thinking" line) goes.
    Array.prototype.slice.call(container.childNodes).forEach(function (node) {
      if (node.mdSource === undefined) container.removeChild(node);
    });
    for (var i = 0; i < html.length; i++) {
      var old = container.children[i];
      if (old && old.mdSource === html[i]) continue;
      var node = blockNode(html[i]);
      if (old) container.replaceChild(node, old);
      else container.appendChild(node);
    }
    while (container.children.length > html.length) container.removeChild(container.lastElementChild);
  };

  window.ChatMarkdown = {
    create: function (strings) { return new Renderer(strings); },
    openMathStart: openMathStart,
  };
})();
