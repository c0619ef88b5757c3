"""Run export (issue #16): the endpoint's access rules and errors, and the converter."""

from __future__ import annotations

import io
from datetime import date
from urllib.parse import unquote

import docx
import pytest
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from agents.models import Run
from memory.models import Thread
from runs import exports
from tests.factories import Teacher, make_teacher, run_via_api

pytestmark = pytest.mark.django_db

EXAM = "出一份数据结构试卷"


def export_url(run_id: int, fmt: str | None = "docx") -> str:
    return f"/api/runs/{run_id}/export" + (f"?format={fmt}" if fmt is not None else "")


def filename_star(header: str) -> str:
    _, _, encoded = header.partition("filename*=UTF-8''")
    return unquote(encoded)


def word_text(content: bytes) -> tuple[list[tuple[str, str]], list[list[list[str]]]]:
    document = docx.Document(io.BytesIO(content))
    paragraphs = [(p.style.name if p.style else "", p.text) for p in document.paragraphs]
    tables = [[[cell.text for cell in row.cells] for row in t.rows] for t in document.tables]
    return paragraphs, tables


# -- the endpoint ---------------------------------------------------------------------------
def test_owner_downloads_the_exam_paper_as_word(teacher: Teacher) -> None:
    run = run_via_api(teacher, EXAM)
    Thread.objects.filter(pk=run["thread_id"]).update(title="数据结构/期中卷")

    response = teacher.client.get(export_url(run["id"]))

    assert response.status_code == 200
    assert response["Content-Type"] == exports.DOCX_TYPE
    day = timezone.localdate(Run.objects.get(pk=run["id"]).created_at).isoformat()
    disposition = response["Content-Disposition"]
    assert disposition.startswith("attachment; ")
    assert f'filename="run-{run["id"]}-{day}.docx"' in disposition
    # The slash would make a path: dropped from the file name.
    assert filename_star(disposition) == f"数据结构 期中卷 {day}.docx"
    paragraphs, tables = word_text(response.content)
    styles = dict((text, style) for style, text in paragraphs)
    assert styles["演示产物：《数据结构试卷》"] == "Heading 2"
    assert styles["一、选择题（每题 10 分，共 30 分）"] == "Heading 3"
    numbered = [text for style, text in paragraphs if style == "List Number"]
    assert "简述数据结构的核心思想。" in numbered
    assert any("f(x)=x^2-2ax+1" in text for text in numbered)  # a formula, as readable TeX
    assert tables == [
        [
            ["题型", "题数", "分值"],
            ["选择题", "3", "30"],
            ["简答题", "2", "40"],
            ["计算题", "1", "30"],
        ]
    ]
    assert not any("$" in text or "**" in text or "|" in text for _, text in paragraphs)


def test_markdown_format_returns_the_source(teacher: Teacher) -> None:
    run = run_via_api(teacher, EXAM)
    response = teacher.client.get(export_url(run["id"], "md"))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response.content.decode("utf-8") == Run.objects.get(pk=run["id"]).output
    assert filename_star(response["Content-Disposition"]).endswith(".md")


def test_format_defaults_to_word_and_accepts_a_trailing_slash(teacher: Teacher) -> None:
    run = run_via_api(teacher, EXAM)
    response = teacher.client.get(f"/api/runs/{run['id']}/export/")
    assert response.status_code == 200
    assert response["Content-Type"] == exports.DOCX_TYPE


@pytest.mark.parametrize("fmt", ["pdf", "json", "DOCX", "docx;md", "ｄｏｃｘ", "docx\u200b"])
def test_bad_format_is_400_with_a_field_message(teacher: Teacher, fmt: str) -> None:
    run = run_via_api(teacher, EXAM)
    response = teacher.client.get(export_url(run["id"], fmt))
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert list(response.json()) == ["format"]


def test_another_schools_run_and_a_missing_one_are_both_404(
    teacher: Teacher, outsider: Teacher
) -> None:
    theirs = run_via_api(outsider, EXAM)
    for run_id in (theirs["id"], theirs["id"] + 1000):
        for fmt in ("docx", "md", "pdf"):
            response = teacher.client.get(export_url(run_id, fmt))
            assert response.status_code == 404, (run_id, fmt)
            assert response.json()["code"] == "not_found"


def test_a_colleague_and_the_school_admin_cannot_download_a_teachers_run(
    teacher: Teacher, colleague: Teacher
) -> None:
    run = run_via_api(teacher, EXAM)
    admin = make_teacher(
        tenant_name=teacher.tenant.name, username="admin", agent=teacher.agent, role="admin"
    )
    for other in (colleague, admin):
        assert other.client.get(export_url(run["id"])).status_code == 404


def test_anonymous_is_401(teacher: Teacher) -> None:
    run = run_via_api(teacher, EXAM)
    response = APIClient().get(export_url(run["id"]))
    assert response.status_code == 401
    assert "detail" in response.json()


def test_a_run_that_did_not_complete_is_409(teacher: Teacher) -> None:
    run = run_via_api(teacher, EXAM)
    Run.objects.filter(pk=run["id"]).update(status=Run.Status.FAILED)
    response = teacher.client.get(export_url(run["id"]))
    assert response.status_code == 409
    assert response.json()["code"] == "run_not_completed"


def test_the_schema_documents_the_export(teacher: Teacher) -> None:
    schema = teacher.client.get("/api/schema", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/runs/{run_id}/export/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"run_id", "format"}
    assert set(operation["responses"]) >= {"200", "400", "404", "409"}
    for status in ("400", "404", "409"):
        assert "application/json" in operation["responses"][status]["content"]
    assert exports.DOCX_TYPE in operation["responses"]["200"]["content"]


# -- the converter --------------------------------------------------------------------------
PAPER = r"""# 期中测验

**说明**：共 *两* 部分。

1. 求 $x^2=4$ 的解
2. 计算 \(\frac{1}{2}+\frac{1}{3}\)

## 第二部分

3. 第三题（编号从 3 开始）
4. 第四题

$$\int_0^1 x\,dx$$

\[
a^2+b^2=c^2
\]

| 项目 | 分值 |
|:--|--:|
| **选择** | 30 |

- 外层
  - 内层

> 引用 ~~删除~~

| 单元格 | 换<br>行 |
|---|---|
| a | b |

```
code line 1
code line 2
```

![远程图](http://203.0.113.9/x.png) [说明](https://example.org/a) <script>alert(1)</script>
"""


def test_converter_keeps_structure_bold_numbering_and_formulas() -> None:
    content = exports.markdown_to_docx(PAPER, title="期中")
    document = docx.Document(io.BytesIO(content))
    assert document.core_properties.title == "期中"
    paragraphs, tables = word_text(content)
    by_text = {text: style for style, text in paragraphs}
    assert by_text["期中测验"] == "Heading 1"
    assert by_text["第二部分"] == "Heading 2"
    assert by_text["求 x^2=4 的解"] == "List Number"
    assert by_text[r"计算 \frac{1}{2}+\frac{1}{3}"] == "List Number"
    assert r"\int_0^1 x\,dx" in by_text
    assert "a^2+b^2=c^2" in by_text
    assert by_text["内层"] == "List Bullet 2"
    assert by_text["引用 删除"] == "Quote"
    assert "code line 1\ncode line 2" in by_text
    assert tables == [[["项目", "分值"], ["选择", "30"]], [["单元格", "换\n行"], ["a", "b"]]]
    last = paragraphs[-1][1]
    assert "[图片：远程图]" in last and "（https://example.org/a）" in last
    # A model's raw HTML is text, as on the chat page (Word escapes it; nothing is markup).
    assert "<script>alert(1)</script>" in last

    bold = [r.text for p in document.paragraphs for r in p.runs if r.bold]
    assert "说明" in bold
    assert "选择" in [r.text for r in document.tables[0].cell(1, 0).paragraphs[0].runs if r.bold]
    math = [r.text for p in document.paragraphs for r in p.runs if r.font.name == "Cambria Math"]
    assert "x^2=4" in math and "a^2+b^2=c^2" in math


def test_each_numbered_list_restarts_at_its_own_start() -> None:
    document = docx.Document(io.BytesIO(exports.markdown_to_docx(PAPER)))
    numbered = [p for p in document.paragraphs if p.style and p.style.name == "List Number"]
    num_ids = [p._p.pPr.numPr.numId.val for p in numbered]
    assert num_ids[0] == num_ids[1] != num_ids[2] == num_ids[3]
    numbering = document.part.numbering_part.element
    starts = []
    for num_id in (num_ids[0], num_ids[2]):
        num = numbering.num_having_numId(num_id)
        starts.append(int(num.lvlOverride_lst[0].startOverride.val))
    assert starts == [1, 3]


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("数据结构期中卷", "数据结构期中卷 2026-03-05.docx"),
        ('a/b\\c:d*e?f"g<h>i|j', "a b c d e f g h i j 2026-03-05.docx"),
        ("  \t\n  ", "对话导出 2026-03-05.docx"),
        ("...", "对话导出 2026-03-05.docx"),
        ("x" * 200, "x" * exports.FILENAME_MAX_CHARS + " 2026-03-05.docx"),
        ("换行\r\n标题\x00", "换行 标题 2026-03-05.docx"),
    ],
)
def test_file_name_from_title_and_day(title: str, expected: str) -> None:
    assert exports.export_filename(title=title, day=date(2026, 3, 5), extension="docx") == expected


@given(st.text(max_size=300))
def test_any_title_gives_a_safe_file_name(title: str) -> None:
    name = exports.export_filename(title=title, day=date(2026, 3, 5), extension="docx")
    assert name.endswith(" 2026-03-05.docx")
    assert not set(name) & set('/\\:*?"<>|') and name.isprintable()
    header = exports.content_disposition(name, fallback="run-1.docx")
    assert header.isascii() and "\n" not in header and "\r" not in header
    assert filename_star(header) == name


@settings(deadline=None)  # python-docx's first load is slow on a busy machine
@given(st.text(max_size=400))
def test_any_markdown_converts_to_a_document_word_can_open(source: str) -> None:
    document = docx.Document(io.BytesIO(exports.markdown_to_docx(source)))
    assert document.paragraphs is not None
