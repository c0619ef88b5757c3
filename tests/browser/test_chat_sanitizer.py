"""The answer renderer (static/web/markdown.js) against hostile input, in Chromium.

Table-driven known vectors and a hypothesis property over generated mixtures of them:
whatever a model writes, the rendered bubble holds no script, no event handler, no link
other than http(s)/mailto, nothing that loads a resource, and the page makes no request.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.browser.conftest import login
from tests.factories import make_teacher

pytestmark = pytest.mark.browser

REMOTE = "198.51.100.7"

# Everything the renderer may produce outside KaTeX's own markup.
RENDERED_TAGS = {
    "a", "b", "blockquote", "br", "code", "del", "div", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "ins", "kbd", "li", "mark", "ol", "p", "pre", "s", "span", "strong",
    "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
}  # fmt: skip

CHECK = """([source, streaming, allowed]) => {
    const box = document.getElementById('sanitizer-box');
    window.__renderer.render(box, source, streaming);
    const problems = [];
    const fetching = ['src', 'srcset', 'poster', 'background', 'formaction', 'action', 'data',
                      'xlink:href', 'ping', 'cite', 'longdesc', 'lowsrc', 'dynsrc'];
    for (const n of box.querySelectorAll('*')) {
        const inKatex = n.closest('.katex') !== null;
        if (!inKatex && !allowed.includes(n.localName)) problems.push('tag ' + n.localName);
        const katexTag = /^(span|svg|path|line|math|semantics|annotation|m[a-z]+)$/;
        if (inKatex && !katexTag.test(n.localName)) problems.push('katex tag ' + n.localName);
        for (const a of n.attributes) {
            const name = a.name.toLowerCase(), value = a.value;
            if (name.startsWith('on')) problems.push('handler ' + name);
            if (fetching.includes(name)) problems.push('attr ' + name);
            if (name === 'href' && !/^(https?:|mailto:)/i.test(value))
                problems.push('href ' + value);
            if (name === 'style' && /url\\(|expression|@import|fixed/i.test(value))
                problems.push('style ' + value);
            const align = /^text-align:\\s*(left|center|right);?$/;
            if (name === 'style' && !inKatex && !align.test(value))
                problems.push('style outside math ' + value);
            if (name === 'class' && /(^|\\s)(msg|visually|site|chat|notice|composer)/.test(value))
                problems.push('page class ' + value);
        }
        if (n.localName === 'a' && n.hasAttribute('href')
            && (n.target !== '_blank' || n.rel !== 'noopener noreferrer'))
            problems.push('link without noopener');
    }
    if (window.__pwned !== undefined) problems.push('executed ' + window.__pwned);
    return problems;
}"""

VECTORS = [
    "<script>window.__pwned='script'</script>",
    "<img src=x onerror=\"window.__pwned='img'\">",
    f"![alt](http://{REMOTE}/a.png)",
    f'![alt](http://{REMOTE}/a.png "title")',
    f"![ref][img]\n\n[img]: http://{REMOTE}/r.png",
    "[x](javascript:window.__pwned='md')",
    "[x](JaVaScRiPt:window.__pwned='case')",
    "[x](ｊａｖａｓｃｒｉｐｔ:window.__pwned='fullwidth')",
    "[x](java\u200bscript:window.__pwned='zwsp')",
    "[x](&#106;avascript:window.__pwned='entity')",
    "[x](&#x6A;avascript:window.__pwned='hex')",
    "[x](\tjavascript:window.__pwned='tab')",
    "[x](vbscript:msgbox(1))",
    "[x](data:text/html,<script>window.__pwned='data'</script>)",
    "[x][r]\n\n[r]: javascript:window.__pwned='ref'",
    "<javascript:window.__pwned='autolink'>",
    "javascript:window.__pwned='linkify'",
    "<a href=\"&#0000106avascript:window.__pwned='pad'\">x</a>",
    "<a href=\"javascript&colon;window.__pwned='colon'\">x</a>",
    "<a href=\"java&#x09;script:window.__pwned='tabent'\">x</a>",
    f'<a href="http://{REMOTE}/" ping="http://{REMOTE}/ping">x</a>',
    "<svg><a xlink:href=\"javascript:window.__pwned='svga'\"><text>x</text></a></svg>",
    "<svg><script>window.__pwned='svgscript'</script></svg>",
    f'<svg><image href="http://{REMOTE}/s.png"/></svg>',
    '<svg><use href="data:image/svg+xml,<svg id=x onload=window.__pwned=1>"/></svg>',
    "<svg onload=\"window.__pwned='svgload'\"></svg>",
    "<math href=\"javascript:window.__pwned='math'\">x</math>",
    "<math><mtext><table><mglyph><style><img src=x onerror=\"window.__pwned='mxss'\">",
    "<form><math><mtext></form><form><mglyph><style></math>"
    "<img src onerror=\"window.__pwned='mxss2'\">",
    "<noscript><p title=\"</noscript><img src=x onerror=window.__pwned='noscript'>\">",
    "<style>@import 'http://198.51.100.7/x.css'; body{display:none}</style>",
    f'<div style="background:url(http://{REMOTE}/bg.png)">x</div>',
    '<div style="position:fixed;inset:0;z-index:99999;background:#fff">cover</div>',
    f'<table background="http://{REMOTE}/t.png"><tr><td>x</td></tr></table>',
    f'<picture><source srcset="http://{REMOTE}/p.png"><img></picture>',
    f'<video poster="http://{REMOTE}/v.png"></video><audio src="http://{REMOTE}/a.mp3"></audio>',
    f'<iframe src="http://{REMOTE}/"></iframe><embed src="http://{REMOTE}/e">',
    f'<object data="http://{REMOTE}/o"></object>',
    f'<link rel=stylesheet href="http://{REMOTE}/l.css"><meta http-equiv=refresh content="0;url=http://{REMOTE}/">',
    f'<base href="http://{REMOTE}/">[rel](x.html)',
    "<input autofocus onfocus=\"window.__pwned='focus'\">",
    "<details open ontoggle=\"window.__pwned='toggle'\">x</details>",
    "<body onload=\"window.__pwned='body'\">",
    "<marquee onstart=\"window.__pwned='marquee'\">x</marquee>",
    '<span class="msg-actions visually-hidden">x</span>',
    '<p id="composer-input" name="cookie">clobber</p>',
    "<!--><img src=x onerror=\"window.__pwned='comment'\">-->",
    "```html\n<script>window.__pwned='fence'</script>\n```",
    "`<img src=x onerror=window.__pwned='code'>`",
    "$\\href{javascript:window.__pwned='katexhref'}{x}$",
    "$\\url{javascript:window.__pwned='katexurl'}$",
    f"$\\includegraphics{{http://{REMOTE}/k.png}}$",
    "$\\htmlClass{msg-actions}{x}$ $\\htmlId{composer-input}{x}$ $\\htmlData{x=1}{y}$",
    "$\\htmlStyle{position:fixed;inset:0}{x}$",
    "$\\color{url(http://198.51.100.7/c)}{x}$",
    "$\\rule{10000em}{10000em}$",
    "$$\\def\\a{\\a\\a}\\a$$",
    "$$\\begin{matrix}" + "x&" * 500 + "\\end{matrix}$$",
    "\\(\\text{<img src=x onerror=window.__pwned='text'>}\\)",
    "$x$<img src=x onerror=\"window.__pwned='after'\">$y$",
]


@pytest.fixture
def renderer_page(page: Any, live_server: Any) -> Any:
    teacher = make_teacher(tenant_name="第一中学", username="sanitizer")
    origin = urlsplit(live_server.url).netloc
    page.outside = []

    def watch(route: Any) -> None:
        if urlsplit(route.request.url).netloc != origin:
            page.outside.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", watch)
    page.on("dialog", lambda dialog: (page.outside.append("dialog"), dialog.dismiss()))
    login(page, live_server.url, teacher.user.username, "pw-" + teacher.user.username)
    page.evaluate(
        """() => {
            const box = document.createElement('div');
            box.id = 'sanitizer-box';
            box.className = 'msg-body md';
            document.getElementById('messages').appendChild(box);
            const s = JSON.parse(document.getElementById('chat-strings').textContent);
            window.__renderer = window.ChatMarkdown.create({
                image: s.imagePlaceholder, imageNoAlt: s.imageNoAlt,
                formulaPending: s.formulaPending,
            });
        }"""
    )
    return page


def problems(page: Any, source: str, *, streaming: bool = False) -> list[str]:
    result: list[str] = page.evaluate(CHECK, [source, streaming, sorted(RENDERED_TAGS)])
    return result


@pytest.mark.parametrize("vector", VECTORS)
def test_known_vectors_render_harmless(renderer_page: Any, vector: str) -> None:
    assert problems(renderer_page, vector) == []
    assert problems(renderer_page, vector, streaming=True) == []
    renderer_page.wait_for_timeout(50)
    assert renderer_page.evaluate("window.__pwned") is None
    assert renderer_page.outside == []
    # The page itself is intact.
    assert renderer_page.locator("#composer-input").is_visible()


FRAGMENTS = [
    "<", ">", "/", '"', "'", "=", " ", "\n", "\n\n", "`", "```", "](", "[x", ")", "![",
    "$", "$$", "\\(", "\\)", "\\[", "\\]", "{", "}", "\\href{", "\\url{", "\\htmlClass{",
    "<img src=x ", "<svg ", "<a href=", "<math>", "<mglyph>", "<style>", "</style>",
    "<script>", "</script>", "<!--", "-->", "<noscript>", "<template>", "<iframe ",
    "onerror=", "onload=", "onclick=", "style=", "srcset=", "xlink:href=",
    "javascript:", "JAVAscript:", "ｊａｖａｓｃｒｉｐｔ:", "java\u200bscript:", "&#106;", "&#x09;",
    "window.__pwned=1", "alert(1)", f"http://{REMOTE}/x.png", "data:text/html,",
    "position:fixed;", "url(", "| a | b |\n|---|---|\n", "1. ", "- ", "# ", "> ",
]  # fmt: skip

payloads = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), min_size=1, max_size=30
).map("".join)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(source=payloads, streaming=st.booleans())
def test_any_mixture_renders_harmless(renderer_page: Any, source: str, streaming: bool) -> None:
    assert problems(renderer_page, source, streaming=streaming) == []
    assert renderer_page.outside == []


@pytest.mark.parametrize(
    ("text", "held_from"),
    [
        ("a $x", "$x"),
        ("a $x$ b", None),
        ("a $x$ b $y", "$y"),
        ("$$\n\\int_0^1", "$$\n\\int_0^1"),
        ("$$\n\\int_0^1\n$$\n后文", None),
        ("公式 $$x", "$$x"),
        ("\\(x+1", "\\(x+1"),
        ("\\(x+1\\) 完", None),
        ("\\[\n\\frac{1}{2}", "\\[\n\\frac{1}{2}"),
        ("结尾是一个反斜杠\\", "\\"),
        ("结尾是一个美元符号$", "$"),
        ("转义的 \\$5 不是公式", None),
        ("`$x` 是代码", None),
        ("```\n$x\n", None),  # an open code fence: its dollars are code
        ("```\n$x\n```\n然后 $y", "$y"),
        ("价格 $5\n\n下一段没有公式", None),  # inline math cannot cross a blank line
        ("$$\na\n\nb", "$$\na\n\nb"),  # display math can
    ],
)
def test_unfinished_formulas_are_held_back(
    renderer_page: Any, text: str, held_from: str | None
) -> None:
    start = renderer_page.evaluate("t => window.ChatMarkdown.openMathStart(t)", text)
    assert (text[start:] if start >= 0 else None) == held_from
