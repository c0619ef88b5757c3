"""Cost of re-rendering a streamed answer (static/web/markdown.js) in headless Chromium.

While an answer streams, the chat page re-renders the whole text at most once a frame
(Markdown → DOMPurify → KaTeX, cached per formula → block patch). This measures one such
render at the end of answers of growing length, and the whole stream at a real model's
pace of delivery (one render per ~30-character delta).

    .venv/bin/python benchmarks/render_answer.py     (needs /usr/bin/chromium)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = [
    "static/vendor/markdown-it/markdown-it.min.js",
    "static/vendor/mdit-plugin-tex/cdn.umd.js",
    "static/vendor/katex/katex.min.js",
    "static/vendor/dompurify/purify.min.js",
    "static/web/markdown.js",
]
QUESTION = "{n}. 已知 $f(x)=x^2-{n}ax+1$ 在区间 $[1,+\\infty)$ 上单调递增，求 **a** 的取值范围。\n"
BLOCK = (
    "### 第 {n} 部分\n\n{questions}\n$$\\int_0^{n} x^2\\,dx=\\frac{{{n}^3}}{{3}}$$\n\n"
    "| 题型 | 分值 |\n| --- | --: |\n| 选择 | {n} |\n\n"
)


def answer(chars: int) -> str:
    text, n = "", 1
    while len(text) < chars:
        questions = "".join(QUESTION.format(n=n * 10 + i) for i in range(1, 4))
        text += BLOCK.format(n=n, questions=questions)
        n += 1
    return text[:chars]


def main() -> None:
    chromium = "/usr/bin/chromium"
    if not Path(chromium).exists():
        sys.exit(f"no Chromium at {chromium}")
    tags = "".join(f'<script src="{(ROOT / s).as_uri()}"></script>' for s in SCRIPTS)
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False) as harness:
        harness.write(f'<!doctype html><meta charset="utf-8"><div id="box"></div>{tags}')
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(Path(harness.name).as_uri())
        page.evaluate(
            "() => { window.r = ChatMarkdown.create("
            "{image: '［图片：%(alt)s］', imageNoAlt: '［图片］', formulaPending: '…'}); }"
        )
        print(f"{'answer chars':>12} {'one render ms (median of 15)':>30} {'whole stream ms':>16}")
        for chars in (1_000, 4_000, 16_000):
            text = answer(chars)
            times = page.evaluate(
                """text => {
                    const box = document.getElementById('box'), out = [];
                    for (let i = 0; i < 15; i++) {
                        box.textContent = '';
                        const t = performance.now();
                        r.render(box, text, true);
                        out.push(performance.now() - t);
                    }
                    box.textContent = '';
                    const t = performance.now();
                    for (let end = 30; end < text.length + 30; end += 30)
                        r.render(box, text.slice(0, end), true);
                    return [out, performance.now() - t];
                }""",
                text,
            )
            print(f"{chars:>12} {statistics.median(times[0]):>30.1f} {times[1]:>16.0f}")
        browser.close()


if __name__ == "__main__":
    main()
