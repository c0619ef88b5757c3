"""Parsing uploads and cutting them into passages (memory/kb/): pure, real files."""

from __future__ import annotations

import io

import pytest
from fpdf import FPDF
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.tokens import count_tokens
from memory.kb.chunking import MAX_TOKENS, chunk_blocks, split_sentences
from memory.kb.parse import (
    Block,
    FileKind,
    ParseError,
    ParseFailure,
    decode_text,
    kind_for_filename,
    parse,
    text_blocks,
)
from tests.kbfiles import CJK_FONT, SCHOOL_RULES, docx_file, gbk_text, pdf_file, utf16_text

RULES_LINE = "学生每天早上七点半前到校，迟到三次记警告一次。"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (SCHOOL_RULES.encode("utf-8"), "utf-8"),
        (b"\xef\xbb\xbf" + SCHOOL_RULES.encode("utf-8"), "utf-8"),
        (gbk_text(), "gb18030"),
        (SCHOOL_RULES.encode("gb18030"), "gb18030"),
        (utf16_text(), "utf-16-le"),
        (SCHOOL_RULES.encode("utf-16-be"), "utf-16-be"),
    ],
    ids=["utf8", "utf8-bom", "gbk-crlf", "gb18030", "utf16-bom", "utf16be-no-bom"],
)
def test_text_files_are_read_in_their_encoding(data: bytes, encoding: str) -> None:
    text, found = decode_text(data)
    assert found == encoding
    assert RULES_LINE in text


@pytest.mark.parametrize("text", ["三年级二班", "你好", "期末考试安排：6月20日上午数学"])
def test_short_gbk_is_read_as_chinese_not_as_another_legacy_encoding(text: str) -> None:
    decoded, found = decode_text(text.encode("gbk"))
    assert (decoded, found) == (text, "gb18030")


def test_gb18030_only_characters_survive() -> None:
    text = "生僻字㐀䶵与常用字" * 3
    assert decode_text(text.encode("gb18030"))[0] == text


def test_undecodable_bytes_are_an_encoding_error() -> None:
    with pytest.raises(ParseError) as caught:
        parse(FileKind.TXT, b"\xff\xfe" + b"\x00\xd8" * 5)  # UTF-16 with lone surrogates
    assert caught.value.code is ParseFailure.ENCODING


def test_numbered_chinese_headings_and_markdown_headings_become_headings() -> None:
    blocks = text_blocks(SCHOOL_RULES)
    assert [(b.level, b.text) for b in blocks[:3]] == [
        (1, "第一章 总则"),
        (2, "一、作息时间"),
        (0, RULES_LINE),
    ]
    md = text_blocks("# 校规\n\n## 作息\n正文一行\n正文二行\n\n```\n# 不是标题\n```", markdown=True)
    assert [(b.level, b.text) for b in md] == [
        (1, "校规"),
        (2, "作息"),
        (0, "正文一行\n正文二行"),
        (0, "```\n# 不是标题\n```"),
    ]


def test_a_sentence_is_never_taken_for_a_heading() -> None:
    assert all(b.level == 0 for b in text_blocks("一、本条规定自发布之日起施行。\n1.2 见上文，"))


def test_word_headings_paragraphs_and_tables() -> None:
    parsed = parse(FileKind.DOCX, docx_file())
    assert [(b.level, b.text) for b in parsed.blocks[:3]] == [
        (1, "光合作用教案"),
        (2, "教学目标"),
        (0, "理解光合作用的概念，知道光反应在类囊体薄膜上进行，暗反应在叶绿体基质中进行。"),
    ]
    assert parsed.blocks[-1] == Block("阶段 | 场所\n光反应 | 类囊体薄膜")


def test_word_paragraph_text_is_python_docxs() -> None:
    """The parser reads a paragraph's text in one compiled XPath; it is what
    python-docx's ``Paragraph.text`` reads: runs, tabs, breaks, non-breaking hyphens,
    hyperlinks' runs, in order, and nothing of deleted text or field codes."""
    import docx
    from docx.enum.text import WD_BREAK
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    from memory.kb.parse import _PARAGRAPH_STYLE, _paragraph_text

    document = docx.Document()
    document.add_heading("第一章 总则", level=2)
    rich = document.add_paragraph("学号")
    run = rich.add_run("12")
    run.add_tab()
    run.add_text("号同学")
    run.add_break(WD_BREAK.LINE)
    run.add_text("换行后")
    run._r.append(OxmlElement("w:noBreakHyphen"))
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), "rId99")
    for words in ("链接", "文字"):
        link_run = OxmlElement("w:r")
        text = OxmlElement("w:t")
        text.text = words
        link_run.append(text)
        link.append(link_run)
    rich._p.append(link)
    deleted = OxmlElement("w:r")
    deleted_text = OxmlElement("w:delText")
    deleted_text.text = "删除的字"
    deleted.append(deleted_text)
    rich._p.append(deleted)
    rich.add_run("结尾")
    document.add_paragraph("")
    document.add_paragraph("普通段落", style="List Bullet")

    paragraphs = document.paragraphs
    assert [_paragraph_text(p._p) for p in paragraphs] == [p.text for p in paragraphs]
    assert _paragraph_text(rich._p) == "学号12\t号同学\n换行后-链接文字结尾"
    assert [str(_PARAGRAPH_STYLE(p._p)) for p in paragraphs] == [
        p._p.style or "" for p in paragraphs
    ]


def test_word_table_cells_are_python_docxs() -> None:
    """The parser reads a table's rows in one pass; each row's cells are python-docx's
    ``row.cells`` texts: spans repeated, a vertical merge's first text below it, a cell
    of several paragraphs joined by line breaks."""
    import docx

    from memory.kb.parse import _table_rows

    document = docx.Document()
    table = document.add_table(rows=5, cols=4)
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            cell.text = f"第{r}行第{c}列"
    table.cell(0, 0).merge(table.cell(0, 1))  # a horizontal span
    table.cell(1, 2).merge(table.cell(3, 2))  # a vertical merge over three rows
    table.cell(2, 0).merge(table.cell(3, 1))  # a block: two rows, two columns
    table.cell(4, 3).add_paragraph("第二段")
    table.cell(4, 1).text = ""

    expected = [[cell.text for cell in row.cells] for row in table.rows]
    assert _table_rows(table) == expected
    assert expected[3][2] == expected[1][2] and expected[0][0] == expected[0][1]
    assert "\n第二段" in expected[4][3]
    blocks = parse(FileKind.DOCX, _saved(document)).blocks
    assert blocks[-1].text.startswith("第0行第0列\n第0行第1列 | 第0行第2列 | 第0行第3列\n")


def _saved(document) -> bytes:  # type: ignore[no-untyped-def]
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_pdf_text_in_chinese_is_extracted() -> None:
    parsed = parse(FileKind.PDF, pdf_file())
    assert parsed.blocks[0] == Block("第二单元 二次函数", level=1)
    assert "抛物线" in parsed.blocks[1].text


def _pdf(build) -> bytes:  # type: ignore[no-untyped-def]
    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("wqy", fname=str(CJK_FONT), collection_font_number=0)
    pdf.set_font("wqy", size=12)
    build(pdf)
    return bytes(pdf.output())


def test_a_pdf_of_images_only_has_no_text() -> None:
    data = _pdf(lambda pdf: pdf.rect(10, 10, 50, 50, style="F"))
    with pytest.raises(ParseError) as caught:
        parse(FileKind.PDF, data)
    assert caught.value.code is ParseFailure.NO_TEXT


def test_a_password_protected_pdf_is_refused_as_such() -> None:
    def build(pdf: FPDF) -> None:
        pdf.set_encryption(owner_password="o", user_password="u")
        pdf.multi_cell(0, 8, "机密试卷")

    with pytest.raises(ParseError) as caught:
        parse(FileKind.PDF, _pdf(build))
    assert caught.value.code is ParseFailure.ENCRYPTED


@pytest.mark.parametrize(
    ("kind", "data", "code"),
    [
        (FileKind.TXT, b"", ParseFailure.EMPTY),
        (FileKind.TXT, b"  \r\n\t ", ParseFailure.EMPTY),
        (FileKind.PDF, b"this is not a pdf", ParseFailure.CORRUPT),
        (FileKind.PDF, b"%PDF-1.7\n garbage, no objects", ParseFailure.CORRUPT),
        (FileKind.DOCX, b"PK\x03\x04 not really a zip", ParseFailure.CORRUPT),
        (FileKind.DOCX, pdf_file(), ParseFailure.CORRUPT),
    ],
)
def test_broken_and_empty_files_are_refused_with_a_reason(
    kind: FileKind, data: bytes, code: ParseFailure
) -> None:
    with pytest.raises(ParseError) as caught:
        parse(kind, data)
    assert caught.value.code is code


def test_a_zip_that_is_not_a_word_document_is_corrupt() -> None:
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(ParseError) as caught:
        parse(FileKind.DOCX, out.getvalue())
    assert caught.value.code is ParseFailure.CORRUPT


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("大纲.TXT", FileKind.TXT),
        ("a.md", FileKind.MD),
        ("教案.docx", FileKind.DOCX),
        ("卷.PDF", FileKind.PDF),
        ("x.doc", None),
        ("x.exe", None),
        ("pdf", None),
        ("x.pdf.exe", None),
    ],
)
def test_file_kinds_come_from_the_name(name: str, kind: FileKind | None) -> None:
    assert kind_for_filename(name) == kind


# -- chunking ------------------------------------------------------------------------------
CHAPTER = "细胞膜主要由脂质和蛋白质组成，具有控制物质进出细胞的功能。"


def test_passages_keep_their_heading_path_and_never_span_sibling_sections() -> None:
    blocks = [
        Block("第一章 细胞", 1),
        Block("1.1 细胞膜", 2),
        Block(CHAPTER * 30),
        Block("1.2 细胞核", 2),
        Block("细胞核是遗传信息库。"),
        Block("第二章 光合作用", 1),
        Block("光反应在类囊体薄膜上进行。"),
    ]
    chunks = chunk_blocks(blocks)
    paths = [c.heading_path for c in chunks]
    assert paths[0] == "第一章 细胞 > 1.1 细胞膜"
    assert "第一章 细胞 > 1.2 细胞核" in paths
    assert paths[-1] == "第二章 光合作用"
    assert chunks[-1].text == "光反应在类囊体薄膜上进行。"
    long = [c for c in chunks if c.heading_path.endswith("细胞膜")]
    assert len(long) >= 2
    assert all(c.tokens <= MAX_TOKENS for c in chunks)
    # Consecutive passages of a long section overlap by at least one sentence.
    assert split_sentences(long[0].text)[-1] in long[1].text


def test_a_short_chapter_introduction_runs_on_into_its_first_section() -> None:
    chunks = chunk_blocks(
        [Block("第一章 细胞", 1), Block("本章介绍细胞。"), Block("1.1 细胞膜", 2), Block(CHAPTER)]
    )
    assert len(chunks) == 1
    assert chunks[0].heading_path == "第一章 细胞"
    assert chunks[0].text == f"本章介绍细胞。\n1.1 细胞膜\n{CHAPTER}"


def test_a_sentence_longer_than_a_passage_is_cut_at_tokens() -> None:
    chunks = chunk_blocks([Block("光" * 3000)])
    assert len(chunks) > 2
    assert all(count_tokens(c.text) <= MAX_TOKENS for c in chunks)
    assert "".join(c.text for c in chunks).count("光") >= 3000


paragraph = st.text(
    alphabet=st.sampled_from(list("光合作用细胞膜的是在和。，！？；abc 1\n")),
    min_size=1,
    max_size=900,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), paragraph), min_size=1, max_size=12))
def test_every_passage_fits_and_every_word_of_the_document_is_in_one(
    items: list[tuple[int, str]],
) -> None:
    blocks = [Block(text, level) for level, text in items]
    chunks = chunk_blocks(blocks)
    assert all(count_tokens(c.text) <= c.tokens <= MAX_TOKENS for c in chunks)
    assert all(c.tokens - count_tokens(c.text) <= c.text.count("\n") for c in chunks)
    joined = "".join(c.text for c in chunks).replace("\n", "").replace(" ", "")
    for block in blocks:
        if block.level == 0:
            for piece in block.text.split():
                for sentence in split_sentences(piece):
                    assert sentence.strip() == "" or sentence.strip() in joined
