"""A run's output as a file a teacher can print: Word (.docx) or the Markdown source.

Pure: no Django, no database, no I/O. The Markdown is parsed by markdown-it-py with the
syntax the chat page renders (CommonMark, tables, strikethrough, and math as ``$…$``,
``$$…$$``, ``\\(…\\)``, ``\\[…\\]``) and written with python-docx: headings, numbered and
bulleted lists (each list restarts its numbering), tables, bold, italics, code and quotes
are kept.

Formulas are kept as their TeX source, in a math font, display formulas centred on their
own line: lossless, and Word turns it into an equation itself (Insert → Equation → LaTeX
→ Convert). Measured on 50 exam formulas (benchmarks/export_formulas.py): latex2mathml +
mathml2omml (last release 2019) wrote malformed OMML for accents (``\\vec``, ``\\bar``,
``\\overrightarrow``, ``\\underbrace``) in 5 of 50; mathml-to-omml wrote well-formed OMML for
all 50 but is a young one-author package (six releases) whose rendering in Word could not
be checked here; pylatexenc's plain text changed the meaning of about a quarter
(``\\frac{a+b}{2}`` became ``a+b/2``, ``\\dfrac{1}{2}`` became ``12``, arrows and accents
vanished). So no Word equations and no lossy "readable" rewrite.
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Literal
from urllib.parse import quote

from docx import Document
from docx.document import Document as DocumentObject
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK
from docx.oxml.ns import qn
from docx.shared import Pt, RGBColor
from docx.text.paragraph import Paragraph
from docx.text.run import Run
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.texmath.index import make_block_func, make_inline_func, rules

ExportFormat = Literal["docx", "md"]
FORMATS: tuple[ExportFormat, ...] = ("docx", "md")

DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
MD_TYPE = "text/markdown; charset=utf-8"

MATH_FONT = "Cambria Math"
CODE_FONT = "Consolas"
# Chinese exam papers are set in 宋体; Word substitutes it where it is missing.
EAST_ASIAN_FONT = "宋体"
FILENAME_MAX_CHARS = 60
FALLBACK_TITLE = "对话导出"

_MATH_INLINE = {"math_inline", "math_inline_double", "math_inline_bracket"}
_MATH_BLOCK = {"math_block", "math_block_label", "math_block_bracket", "math_block_eqno"}
# Characters no file system or browser accepts in a file name.
_UNSAFE_FILENAME = re.compile(r'[\\/:*?"<>|]+')
# What XML 1.0 (and so a .docx) cannot hold: C0 controls but tab and newline, lone
# surrogates, U+FFFE/U+FFFF. A model's output may contain any of them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True)
class ExportFile:
    content: bytes
    filename: str
    content_type: str


@cache
def markdown_parser() -> MarkdownIt:
    """CommonMark + tables + strikethrough + the chat page's four math delimiters.

    As on the chat page: a model's single newlines are line breaks, and raw HTML is text
    (only ``<br>`` breaks a line).
    """
    md = MarkdownIt("commonmark", {"breaks": True, "html": False})
    md.enable(["table", "strikethrough"])
    dollarmath_plugin(md, allow_space=False, allow_digits=False, double_inline=True)
    # texmath's bracket rules under their own names: dollarmath already owns "math_inline".
    for rule in rules["brackets"]["inline"]:
        renamed = rule.copy()
        renamed["name"] = rule["name"] + "_bracket"
        md.inline.ruler.before("escape", renamed["name"], make_inline_func(renamed))
    for rule in rules["brackets"]["block"]:
        renamed = rule.copy()
        renamed["name"] = rule["name"] + "_bracket"
        md.block.ruler.before("fence", renamed["name"], make_block_func(renamed))
    return md


def export_filename(*, title: str, day: date, extension: str) -> str:
    """``<thread title> <YYYY-MM-DD>.<ext>``: unsafe characters dropped, length capped."""
    name = unicodedata.normalize("NFC", title)
    # Controls, zero-width and other format characters, unassigned and private code points.
    name = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in name)
    name = _UNSAFE_FILENAME.sub(" ", name)
    name = " ".join(name.split()).strip(" .")[:FILENAME_MAX_CHARS].strip(" .")
    return f"{name or FALLBACK_TITLE} {day.isoformat()}.{extension}"


def content_disposition(filename: str, *, fallback: str) -> str:
    """``attachment`` with an ASCII ``filename`` and the UTF-8 one as RFC 5987 ``filename*``."""
    ascii_name = fallback.encode("ascii", "ignore").decode().replace('"', "") or "export"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename, safe='')}"


def run_export(*, output: str, title: str, day: date, fmt: ExportFormat) -> ExportFile:
    """The output of a run as a file named after its thread and day."""
    if fmt == "md":
        return ExportFile(
            content=output.encode("utf-8"),
            filename=export_filename(title=title, day=day, extension="md"),
            content_type=MD_TYPE,
        )
    return ExportFile(
        content=markdown_to_docx(output, title=title),
        filename=export_filename(title=title, day=day, extension="docx"),
        content_type=DOCX_TYPE,
    )


def markdown_to_docx(source: str, *, title: str = "") -> bytes:
    document = Document()
    _set_base_fonts(document)
    document.core_properties.title = _NOT_XML.sub("", title)
    _Writer(document).write(markdown_parser().parse(_NOT_XML.sub("", source)))
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _set_base_fonts(document: DocumentObject) -> None:
    for name in ("Normal", "Heading 1", "Heading 2", "Heading 3", "Heading 4", "Title"):
        style = document.styles[name]
        rpr = style.element.get_or_add_rPr()
        rpr.get_or_add_rFonts().set(qn("w:eastAsia"), EAST_ASIAN_FONT)


_BR = re.compile(r"<br\s*/?>", re.I)


@dataclass
class _Marks:
    bold: int = 0
    italic: int = 0
    strike: int = 0


@dataclass
class _ListState:
    ordered: bool
    num_id: int | None  # the list's own numbering instance (ordered lists restart at start)


class _Writer:
    """Walks markdown-it block tokens and writes paragraphs, lists and tables."""

    def __init__(self, document: DocumentObject) -> None:
        self.document = document
        self.lists: list[_ListState] = []
        self.quote_depth = 0
        self.paragraph_in_item = False

    # -- blocks -------------------------------------------------------------------------
    def write(self, tokens: Sequence[Token]) -> None:
        index = 0
        while index < len(tokens):
            token = tokens[index]
            kind = token.type
            if kind == "heading_open":
                level = int(token.tag[1])
                paragraph = self.document.add_heading(level=min(level, 6))
                self._inline(paragraph, tokens[index + 1].children or [])
                index += 3
                continue
            if kind == "paragraph_open":
                paragraph = self._paragraph()
                self._inline(paragraph, tokens[index + 1].children or [])
                index += 3
                continue
            if kind in ("bullet_list_open", "ordered_list_open"):
                self._open_list(token)
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.lists.pop()
            elif kind == "list_item_open":
                self.paragraph_in_item = False
            elif kind == "blockquote_open":
                self.quote_depth += 1
            elif kind == "blockquote_close":
                self.quote_depth -= 1
            elif kind in ("fence", "code_block"):
                self._code(token.content)
            elif kind in _MATH_BLOCK:
                self._display_math(token.content)
            elif kind == "table_open":
                index = self._table(tokens, index)
                continue
            elif kind == "hr":
                self._rule()
            index += 1

    def _paragraph(self) -> Paragraph:
        if self.lists:
            return self._list_paragraph()
        if self.quote_depth:
            return self.document.add_paragraph(style="Quote")
        return self.document.add_paragraph()

    def _list_paragraph(self) -> Paragraph:
        state = self.lists[-1]
        depth = min(len(self.lists), 3)
        if self.paragraph_in_item:
            # A second paragraph of one item: indented like the item, not numbered again.
            style = "List Continue" if depth == 1 else f"List Continue {depth}"
            return self.document.add_paragraph(style=style)
        self.paragraph_in_item = True
        base = "List Number" if state.ordered else "List Bullet"
        paragraph = self.document.add_paragraph(style=base if depth == 1 else f"{base} {depth}")
        if state.num_id is not None:
            num_pr = paragraph._p.get_or_add_pPr().get_or_add_numPr()
            num_pr.get_or_add_ilvl().val = 0
            num_pr.get_or_add_numId().val = state.num_id
        return paragraph

    def _open_list(self, token: Token) -> None:
        ordered = token.type == "ordered_list_open"
        num_id = None
        if ordered:
            depth = min(len(self.lists) + 1, 3)
            style_name = "List Number" if depth == 1 else f"List Number {depth}"
            start = int(str(token.attrs.get("start", 1)))
            num_id = self._restarted_numbering(style_name, start)
        self.lists.append(_ListState(ordered=ordered, num_id=num_id))

    def _restarted_numbering(self, style_name: str, start: int) -> int | None:
        """A new numbering instance of the style's list, starting at ``start``.

        python-docx's list styles share one instance, so a second list would go on
        counting from the first (一、选择题 1–3, then 二、简答题 4–5).
        """
        style_ppr = self.document.styles[style_name].element.pPr
        if style_ppr is None or style_ppr.numPr is None or style_ppr.numPr.numId is None:
            return None
        numbering = self.document.part.numbering_part.element
        style_num = numbering.num_having_numId(style_ppr.numPr.numId.val)
        num = numbering.add_num(style_num.abstractNumId.val)
        num.add_lvlOverride(ilvl=0).add_startOverride(start)
        return int(num.numId)

    def _code(self, text: str) -> None:
        paragraph = self._paragraph()
        for number, line in enumerate(text.rstrip("\n").split("\n")):
            if number:
                paragraph.add_run().add_break(WD_BREAK.LINE)
            run = paragraph.add_run(line)
            run.font.name = CODE_FONT
            run.font.size = Pt(10)

    def _display_math(self, tex: str) -> None:
        paragraph = self._paragraph()
        paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
        self._math_run(paragraph, tex.strip())

    def _rule(self) -> None:
        paragraph = self.document.add_paragraph()
        paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
        paragraph.add_run("* * *").font.color.rgb = RGBColor(0x99, 0x99, 0x99)

    def _table(self, tokens: Sequence[Token], index: int) -> int:
        """Write the table starting at ``tokens[index]``; return the index after it."""
        rows: list[list[tuple[list[Token], bool]]] = []
        alignments: list[str] = []
        index += 1
        while tokens[index].type != "table_close":
            token = tokens[index]
            if token.type == "tr_open":
                rows.append([])
            elif token.type in ("th_open", "td_open"):
                style = str(token.attrs.get("style", ""))
                if len(rows) == 1:
                    alignments.append(style.removeprefix("text-align:"))
                rows[-1].append((tokens[index + 1].children or [], token.type == "th_open"))
            index += 1
        columns = max((len(row) for row in rows), default=0)
        if not rows or not columns:
            return index + 1
        table = self.document.add_table(rows=len(rows), cols=columns)
        table.style = self.document.styles["Table Grid"]
        align = {"center": WD_ALIGN_PARAGRAPH.CENTER, "right": WD_ALIGN_PARAGRAPH.RIGHT}
        for row_number, row in enumerate(rows):
            for column, (children, header) in enumerate(row):
                cell = table.cell(row_number, column)
                paragraph = cell.paragraphs[0]
                if column < len(alignments) and alignments[column] in align:
                    paragraph.alignment = align[alignments[column]]
                self._inline(paragraph, children, bold=header)
        # An empty paragraph after the table: Word glues two adjacent tables together.
        self.document.add_paragraph()
        return index + 1

    # -- inline -----------------------------------------------------------------------------
    def _inline(
        self, paragraph: Paragraph, children: Sequence[Token], *, bold: bool = False
    ) -> None:
        marks = _Marks(bold=int(bold))
        link_stack: list[str] = []
        for child in children:
            kind = child.type
            if kind == "text":
                for number, part in enumerate(_BR.split(child.content)):
                    if number:
                        paragraph.add_run().add_break(WD_BREAK.LINE)
                    if part:
                        self._text_run(paragraph, part, marks)
            elif kind == "softbreak" or kind == "hardbreak":
                paragraph.add_run().add_break(WD_BREAK.LINE)
            elif kind == "strong_open":
                marks.bold += 1
            elif kind == "strong_close":
                marks.bold -= 1
            elif kind == "em_open":
                marks.italic += 1
            elif kind == "em_close":
                marks.italic -= 1
            elif kind == "s_open":
                marks.strike += 1
            elif kind == "s_close":
                marks.strike -= 1
            elif kind == "code_inline":
                run = self._text_run(paragraph, child.content, marks)
                run.font.name = CODE_FONT
            elif kind in _MATH_INLINE:
                self._math_run(paragraph, child.content.strip())
            elif kind == "link_open":
                link_stack.append(str(child.attrs.get("href", "")))
            elif kind == "link_close":
                href = link_stack.pop() if link_stack else ""
                # Printed, a link is only useful with its address beside it.
                if href.startswith(("http://", "https://")):
                    self._text_run(paragraph, f"（{href}）", marks)
            elif kind == "image":
                # Never fetched: the alt text stands in for the picture.
                self._text_run(paragraph, f"[图片：{child.content or '无说明'}]", marks)

    def _text_run(self, paragraph: Paragraph, text: str, marks: _Marks) -> Run:
        run = paragraph.add_run(text)
        run.bold = marks.bold > 0 or None
        run.italic = marks.italic > 0 or None
        run.font.strike = marks.strike > 0 or None
        return run

    def _math_run(self, paragraph: Paragraph, tex: str) -> None:
        run = paragraph.add_run(tex)
        run.font.name = MATH_FONT
        run.font.color.rgb = RGBColor(0x1F, 0x3A, 0x68)
