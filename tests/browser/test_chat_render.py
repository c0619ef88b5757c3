"""Rendered answers in a real headless Chromium (issue #16 "Done when").

Markdown and KaTeX while the answer streams and after a reload, hostile model output that
must execute nothing and fetch nothing, copy and the Word download, and screenshots of a
rendered exam paper on desktop and phone.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import docx
import pytest
from playwright.sync_api import expect

from agents.models import Run
from tests.browser.conftest import login
from tests.factories import Teacher, make_provider, make_teacher
from tests.fakellm import FakeLLMServer

pytestmark = pytest.mark.browser

EXAM_PAPER = r"""## 函数单元测验

**考试时间**：45 分钟　**满分**：100 分

### 一、选择题

1. 已知 $f(x)=x^2-2ax+1$，若 $f(1)=0$，则 $a=$（　）
2. 函数 \(y=\sin x\) 的最小正周期是（　），$\sqrt{2}$ 是无理数

### 二、计算题

3. 计算定积分：

$$
\int_0^1 x^2\,dx=\frac{1}{3}
$$

4. 解方程组：

\[
\begin{cases} x+y=3 \\ x-y=1 \end{cases}
\]

### 分值

| 题型 | 题数 | 分值 |
| --- | :-: | --: |
| 选择题 | 2 | 40 |
| 计算题 | 2 | 60 |

> 提示：写出**完整过程**。

```python
print("代码块原样显示 $x$")
```
"""

REMOTE = "198.51.100.7"  # TEST-NET-2: never routed; the browser must not even try it.

HOSTILE = f"""# 恶意输出

<script>window.__pwned = "script";</script>

<img src="http://{REMOTE}/a.png" onerror="window.__pwned = 'img'">

![远程图片](http://{REMOTE}/remote.png)

[点我](javascript:window.__pwned='md-link')

<a href="javascript:window.__pwned='a'">另一个链接</a>

<a href="http://{REMOTE}/x" onclick="window.__pwned='onclick'">普通链接</a>

<svg onload="window.__pwned='svg'"><script>window.__pwned='svg-script'</script></svg>

<svg><image href="http://{REMOTE}/svg.png" /></svg>

<style>body {{ display: none !important; }}</style>

<div style="position:fixed;inset:0;background:#fff;z-index:9999">盖住整个页面</div>

<iframe src="http://{REMOTE}/frame"></iframe>

<math><mtext><table><mglyph><style><img src=x onerror="window.__pwned='mxss'">

<details open ontoggle="window.__pwned='details'">x</details>

<form action="http://{REMOTE}/f"><button formaction="javascript:alert(1)">提交</button></form>

<link rel="stylesheet" href="http://{REMOTE}/x.css">

<object data="http://{REMOTE}/x.swf"></object>

<video src="http://{REMOTE}/v.mp4" poster="http://{REMOTE}/p.png"></video>

<p style="background:url(http://{REMOTE}/bg.png)">背景</p>

<span class="msg-actions visually-hidden">伪装</span>

公式：$\\href{{javascript:window.__pwned='katex'}}{{点}}$ 和 $\\includegraphics{{http://{REMOTE}/k.png}}$

巨大的方块：$\\rule{{1000em}}{{1000em}}$

[邮件](mailto:teacher@example.org) [正常链接](https://example.org/page)"""


@pytest.fixture
def fake_model() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(reply=EXAM_PAPER, chunk_size=7) as server:
        yield server


def teacher_on(fake: FakeLLMServer, username: str) -> Teacher:
    provider = make_provider(name="回环假模型", base_url=fake.base_url, price_in="0", price_out="0")
    return make_teacher(tenant_name="第一中学", username=username, provider=provider)


def log_in(page: Any, live_server: Any, teacher: Teacher) -> None:
    login(page, live_server.url, teacher.user.username, "pw-" + teacher.user.username)


def send(page: Any, text: str) -> Any:
    before = page.locator(".msg.assistant").count()
    box = page.locator("#composer-input")
    box.fill(text)
    box.press("Enter")
    reply = page.locator(".msg.assistant").nth(before)
    expect(reply).to_have_attribute("data-status", "completed")
    return reply


def rendered_summary(reply: Any) -> dict[str, Any]:
    """What the bubble shows, structurally: compared before and after a reload."""
    return reply.locator(".msg-body").evaluate(
        """body => ({
            headings: [...body.querySelectorAll('h1,h2,h3')].map(h => h.textContent),
            items: [...body.querySelectorAll('li')].map(li => li.textContent.trim()),
            cells: [...body.querySelectorAll('th,td')].map(c => c.textContent),
            inlineMath: body.querySelectorAll('.md-math:not(.md-math-display) .katex').length,
            displayMath: body.querySelectorAll('.md-math-display .katex-display').length,
            tex: [...body.querySelectorAll('[data-tex]')].map(n => n.getAttribute('data-tex')),
            strong: [...body.querySelectorAll('strong')].map(s => s.textContent),
            code: [...body.querySelectorAll('pre code')].map(c => c.textContent),
            olStarts: [...body.querySelectorAll('ol')].map(ol => ol.start),
            svgPaths: [...body.querySelectorAll('.katex svg path')].filter(
                p => (p.getAttribute('d') || '').length > 10).length,
            annotations: [...body.querySelectorAll('annotation')].map(
                a => a.getAttribute('encoding')),
            text: body.innerText,
        })"""
    )


WATCH_STREAM = """() => {
    // Records what a teacher could see at any moment while the answer streams.
    window.__seen = { renders: 0, rawDollar: 0, katexErrors: 0, mathWhileStreaming: 0 };
    const observer = new MutationObserver(() => {
        const bubble = document.querySelector('.msg.assistant.streaming .msg-body');
        if (!bubble || !bubble.childElementCount) return;
        window.__seen.renders += 1;
        const clone = bubble.cloneNode(true);
        clone.querySelectorAll('.katex, pre, code').forEach(n => n.remove());
        if (/\\$|\\\\\\(|\\\\\\[/.test(clone.textContent)) window.__seen.rawDollar += 1;
        if (bubble.querySelector('.katex-error, .md-math-source')) window.__seen.katexErrors += 1;
        if (bubble.querySelector('.katex')) window.__seen.mathWhileStreaming += 1;
    });
    observer.observe(document.getElementById('messages'),
                     { childList: true, subtree: true, characterData: true });
}"""


def test_streamed_exam_paper_renders_markdown_and_math_and_survives_reload(
    page: Any, live_server: Any, fake_model: FakeLLMServer, artifacts: Path
) -> None:
    fake_model.set_mode("slow_stream")
    fake_model.stream_delay = 0.03
    teacher = teacher_on(fake_model, "render")
    log_in(page, live_server, teacher)
    page.evaluate(WATCH_STREAM)

    reply = send(page, "出一份函数单元测验")

    seen = page.evaluate("window.__seen")
    # It was rendered many times while streaming, math appeared before the end, and no
    # half formula (raw delimiters) or KaTeX error was ever on screen.
    assert seen["renders"] > 10, seen
    assert seen["mathWhileStreaming"] > 0, seen
    assert seen["rawDollar"] == 0, seen
    assert seen["katexErrors"] == 0, seen

    body = reply.locator(".msg-body")
    expect(body.locator("h2")).to_have_text("函数单元测验")
    expect(body.locator("h3")).to_have_text(["一、选择题", "二、计算题", "分值"])
    expect(body.locator("table th")).to_have_text(["题型", "题数", "分值"])
    expect(body.locator("table tbody tr")).to_have_count(2)
    summary = rendered_summary(reply)
    assert summary["inlineMath"] == 5  # f(x)=…, f(1)=0, a=, y=\sin x, \sqrt{2}
    assert summary["olStarts"] == [1, 3, 4]  # "3." and "4." keep their numbers
    assert summary["svgPaths"] >= 1  # the radical sign KaTeX draws as SVG
    assert set(summary["annotations"]) == {"application/x-tex"}
    assert summary["displayMath"] == 2  # $$…$$ and \[…\]
    assert r"\int_0^1 x^2\,dx=\frac{1}{3}" in summary["tex"]
    assert any(r"\begin{cases}" in tex for tex in summary["tex"])
    assert "$" not in summary["text"].replace('print("代码块原样显示 $x$")', "")
    assert "\\[" not in summary["text"] and "\\(" not in summary["text"]
    assert "**" not in summary["text"] and "|---" not in summary["text"]
    assert summary["strong"] == ["考试时间", "满分", "完整过程"]
    assert summary["code"] == ['print("代码块原样显示 $x$")\n']
    # KaTeX's fonts come from this server.
    assert page.evaluate("document.fonts.check('16px KaTeX_Main')")

    # The teacher's own message stays plain text.
    expect(page.locator(".msg.user .msg-body")).to_have_text("出一份函数单元测验")
    assert page.locator(".msg.user .msg-body *").count() == 0

    # Reload: the same rendering from /api/threads/{id}/runs.
    page.reload()
    expect(page.locator("#messages")).to_have_attribute("aria-busy", "false")
    restored = page.locator(".msg.assistant").first
    expect(restored).to_have_attribute("data-rendered", "true")
    assert rendered_summary(restored) == summary
    page.screenshot(path=str(artifacts / "chat-render-reload.png"))


def test_hostile_output_executes_nothing_and_fetches_nothing(
    page: Any, live_server: Any, fake_model: FakeLLMServer, artifacts: Path
) -> None:
    fake_model.reply = HOSTILE
    teacher = teacher_on(fake_model, "hostile")
    origin = urlsplit(live_server.url).netloc
    requests: list[str] = []
    outside: list[str] = []

    def watch(route: Any) -> None:
        url = route.request.url
        requests.append(url)
        if urlsplit(url).netloc != origin:
            outside.append(url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", watch)
    page.on("dialog", lambda dialog: (outside.append("dialog:" + dialog.message), dialog.dismiss()))
    log_in(page, live_server, teacher)
    page.evaluate(
        """() => {
            window.__csp = [];
            document.addEventListener('securitypolicyviolation',
                e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
        }"""
    )
    before = len(requests)

    reply = send(page, "出一份试卷")
    body = reply.locator(".msg-body")
    expect(body.locator("h1")).to_have_text("恶意输出")
    page.wait_for_timeout(500)  # let any late load or event fire

    assert page.evaluate("window.__pwned") is None
    assert outside == []
    # Only the stream, the thread list and KaTeX's own fonts were asked for.
    after = [urlsplit(url).path for url in requests[before:]]
    assert all(p.startswith(("/api/", "/static/vendor/katex/fonts/")) for p in after), after
    # The CSP (the second line) saw no load to block: the sanitiser had stopped them all.
    # Chromium does report inline handlers and <style> met while DOMPurify parses the
    # dirty HTML in its inert document (it inherits the page's policy; nothing runs there,
    # and the rendered bubble has neither, as checked below).
    directives = {entry.split(" ")[0] for entry in page.evaluate("window.__csp")}
    assert directives <= {"script-src-attr", "style-src-elem"}, directives

    dom = body.evaluate(
        """body => ({
            tags: [...new Set([...body.querySelectorAll('*')].map(n => n.localName))],
            handlers: [...body.querySelectorAll('*')].flatMap(
                n => [...n.attributes].map(a => a.name).filter(a => a.startsWith('on'))),
            hrefs: [...body.querySelectorAll('[href]')].map(n => n.getAttribute('href')),
            links: [...body.querySelectorAll('a[href]')].map(a => [a.target, a.rel]),
            classes: [...body.querySelectorAll('[class]')].map(n => n.className)
                .filter(c => typeof c === 'string' && /msg-|visually/.test(c)),
            text: body.innerText,
        })"""
    )
    forbidden = {"script", "img", "iframe", "style", "link", "object", "video", "form", "image"}
    assert not forbidden & set(dom["tags"]), dom["tags"]
    assert dom["handlers"] == []
    # Links only to the web or mail (the addresses in the shown-as-text HTML are linkified
    # too: a click away, never loaded by themselves), each opening a new, unlinked tab.
    assert {"https://example.org/page", "mailto:teacher@example.org"} <= set(dom["hrefs"])
    assert all(href.startswith(("http://", "https://", "mailto:")) for href in dom["hrefs"])
    assert dom["links"] == [["_blank", "noopener noreferrer"]] * len(dom["hrefs"])
    assert dom["classes"] == []
    assert "［图片：远程图片］" in dom["text"]
    # Raw HTML is shown as the text it is, and an unclosed tag swallows nothing after it.
    assert '<script>window.__pwned = "script";</script>' in dom["text"]
    assert dom["text"].rstrip().endswith("邮件 正常链接")

    # The page is still there: nothing hid it or covered it.
    expect(page.locator("#composer-input")).to_be_visible()
    expect(page.locator(".site-header")).to_be_visible()
    box = body.bounding_box()
    messages = page.locator("#messages").bounding_box()
    assert box is not None and messages is not None
    assert box["width"] <= messages["width"]
    hit = page.evaluate(
        "(() => { const r = document.getElementById('composer-input').getBoundingClientRect();"
        " return document.elementFromPoint(r.x + 5, r.y + 5).id; })()"
    )
    assert hit == "composer-input"
    page.screenshot(path=str(artifacts / "chat-render-hostile.png"))

    # The same after a reload (rendered from the stored output).
    page.reload()
    expect(page.locator("#messages")).to_have_attribute("aria-busy", "false")
    expect(page.locator(".msg.assistant .msg-body h1")).to_have_text("恶意输出")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert outside == []


def test_copy_gives_the_markdown_and_word_download_opens_with_python_docx(
    page: Any, live_server: Any, fake_model: FakeLLMServer, tmp_path: Path
) -> None:
    teacher = teacher_on(fake_model, "download")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    log_in(page, live_server, teacher)
    reply = send(page, "出一份函数单元测验")
    run = Run.objects.get()

    reply.get_by_role("button", name="复制").click()
    expect(reply.get_by_role("button", name="已复制")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == run.output == EXAM_PAPER

    with page.expect_download() as info:
        reply.get_by_role("link", name="下载 Word").click()
    download = info.value
    assert download.suggested_filename.endswith(".docx")
    assert download.suggested_filename.startswith("出一份函数单元测验 ")
    target = tmp_path / download.suggested_filename
    download.save_as(target)
    document = docx.Document(io.BytesIO(target.read_bytes()))
    texts = [p.text for p in document.paragraphs]
    assert "函数单元测验" in texts
    assert "已知 f(x)=x^2-2ax+1，若 f(1)=0，则 a=（　）" in texts
    assert r"函数 y=\sin x 的最小正周期是（　），\sqrt{2} 是无理数" in texts
    assert r"\int_0^1 x^2\,dx=\frac{1}{3}" in texts
    rows = [[cell.text for cell in row.cells] for row in document.tables[0].rows]
    assert rows == [["题型", "题数", "分值"], ["选择题", "2", "40"], ["计算题", "2", "60"]]


def test_memory_features_still_work_on_rendered_answers(page: Any, live_server: Any) -> None:
    """它记得什么 and continue-run on the offline demo's rendered exam paper."""
    teacher = make_teacher(tenant_name="第一中学", username="demo")
    log_in(page, live_server, teacher)
    first = send(page, "出一份数据结构试卷")
    expect(first.locator(".msg-body h2")).to_have_text("演示产物：《数据结构试卷》")
    expect(first.locator(".msg-body table")).to_have_count(1)
    expect(first.locator(".msg-body .katex-display")).to_have_count(1)

    first.get_by_role("button", name="在上次产物上继续").click()
    second = send(page, "简答题换两道")
    expect(second.locator(".msg-body h2")).to_contain_text("（修改版）")
    runs = list(Run.objects.order_by("pk"))
    assert runs[1].context == {"run_id": runs[0].pk}

    second.get_by_role("button", name="它记得什么").click()
    dialog = page.locator("#context-dialog")
    expect(dialog.locator(".injected-text")).to_contain_text("出一份数据结构试卷")
    dialog.get_by_role("button", name="关闭").click()


@pytest.mark.parametrize("where", ["desktop", "phone"])
def test_screenshots_of_a_rendered_exam_paper(
    where: str, page: Any, phone_page: Any, live_server: Any, artifacts: Path
) -> None:
    view = page if where == "desktop" else phone_page
    teacher = make_teacher(tenant_name="第一中学", username=f"shot-{where}")
    log_in(view, live_server, teacher)
    reply = send(view, "出一份数据结构试卷")
    expect(reply.locator(".msg-body .katex").first).to_be_visible()
    view.evaluate("document.fonts.ready")
    # The template's own markup never leaks into the page.
    assert "{#" not in view.locator("body").inner_text()
    # Nothing is wider than the screen; wide tables and formulas scroll inside the bubble.
    width = view.viewport_size["width"]
    assert view.evaluate("document.documentElement.scrollWidth") <= width
    if where == "desktop":
        # Tall enough for the whole paper in one picture.
        view.set_viewport_size({"width": width, "height": 1500})
        view.screenshot(path=str(artifacts / "chat-exam-desktop.png"))
        return
    messages = view.locator("#messages")
    messages.evaluate("box => { box.scrollTop = 0; }")
    view.screenshot(path=str(artifacts / "chat-exam-phone.png"))
    reply.locator("table").scroll_into_view_if_needed()
    messages.evaluate("box => { box.scrollTop = box.scrollHeight; }")
    view.screenshot(path=str(artifacts / "chat-exam-phone-end.png"))
