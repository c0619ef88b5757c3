"""Uploaded files to text blocks: .txt/.md in any common encoding, .docx and .pdf.

Libraries, each made for its job: ``charset-normalizer`` detects the encoding of text
files (Chinese teachers' files are often GBK/GB18030, sometimes UTF-16 from Notepad);
``python-docx`` reads Word documents (headings from paragraph styles, tables row by
row); ``pypdf`` extracts the text of PDF pages. What comes out is a list of
:class:`Block` (headings with a level, paragraphs), which :mod:`memory.kb.chunking` cuts.

Errors are :class:`ParseError` with a stable ``code``; the Django layer turns codes into
messages for the teacher (this module stays free of Django and of UI text).
"""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from dataclasses import dataclass
from enum import StrEnum

import docx
from charset_normalizer import from_bytes
from docx.document import Document as DocxDocument
from docx.oxml.ns import nsmap
from docx.oxml.text.paragraph import CT_P
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml import etree
from pypdf import PdfReader
from pypdf.errors import PdfReadError

from memory.textview import strip_invisible

__all__ = [
    "EXTENSIONS",
    "Block",
    "FileKind",
    "ParseError",
    "ParseFailure",
    "Parsed",
    "kind_for_filename",
    "parse",
    "precheck",
    "text_blocks",
]


class FileKind(StrEnum):
    TXT = "txt"
    MD = "md"
    DOCX = "docx"
    PDF = "pdf"
    TEXT = "text"  # text given directly (pasted, an archived artifact): already a str


#: File name endings accepted for upload, and what they are.
EXTENSIONS: dict[str, FileKind] = {
    ".txt": FileKind.TXT,
    ".text": FileKind.TXT,
    ".md": FileKind.MD,
    ".markdown": FileKind.MD,
    ".docx": FileKind.DOCX,
    ".pdf": FileKind.PDF,
}


class ParseFailure(StrEnum):
    EMPTY = "empty"  # nothing but whitespace
    ENCODING = "encoding"  # a text file in no encoding we can read
    CORRUPT = "corrupt"  # not the format its name says, or damaged
    ENCRYPTED = "encrypted"  # a password-protected PDF
    NO_TEXT = "no_text"  # a PDF of scanned images: no text layer


class ParseError(ValueError):
    def __init__(self, code: ParseFailure, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else str(code))
        self.code = code


@dataclass(frozen=True, slots=True)
class Block:
    """A heading (``level`` 1-6) or a paragraph (``level`` 0) of a document."""

    text: str
    level: int = 0


@dataclass(frozen=True, slots=True)
class Parsed:
    blocks: list[Block]
    encoding: str = ""

    @property
    def char_count(self) -> int:
        return sum(len(block.text) for block in self.blocks)


def kind_for_filename(filename: str) -> FileKind | None:
    name = filename.lower().strip()
    for ending, kind in EXTENSIONS.items():
        if name.endswith(ending):
            return kind
    return None


def precheck(kind: FileKind, data: bytes) -> None:
    """The cheap checks an upload gets before it is stored (the full parse is the worker's).

    Raises :class:`ParseError` for an empty file or one that is plainly not its format.
    """
    if not data.strip():
        raise ParseError(ParseFailure.EMPTY)
    if kind is FileKind.PDF and not data.lstrip()[:5] == b"%PDF-":
        raise ParseError(ParseFailure.CORRUPT, "no PDF header")
    if kind is FileKind.DOCX and not zipfile.is_zipfile(io.BytesIO(data)):
        raise ParseError(ParseFailure.CORRUPT, "not a zip container")


def parse(kind: FileKind, data: bytes) -> Parsed:
    """The blocks of a file. Raises :class:`ParseError`."""
    precheck(kind, data)
    if kind is FileKind.DOCX:
        parsed = Parsed(blocks=_docx_blocks(data))
    elif kind is FileKind.PDF:
        parsed = Parsed(blocks=_pdf_blocks(data))
    else:
        text, encoding = decode_text(data)
        parsed = Parsed(blocks=text_blocks(text, markdown=kind is FileKind.MD), encoding=encoding)
    if not parsed.blocks:
        raise ParseError(ParseFailure.NO_TEXT if kind is FileKind.PDF else ParseFailure.EMPTY)
    return parsed


# -- encodings ------------------------------------------------------------------------------
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
# Among encodings the detector finds equally clean, the ones a mainland school's files
# are written in come first: a two-character GBK file decodes without fault as Big5,
# Korean or BOM-less UTF-16 too, and the detector cannot tell them apart from so little
# text. (UTF-16 from Windows carries a byte-order mark, decided above; without one, any
# ASCII space or line break makes its zero bytes look like faults in GB18030.)
_PREFERRED = ("utf_8", "gb18030", "gbk", "gb2312", "utf_16", "utf_16_le", "utf_16_be")
# Mojibake a decode leaves behind; a text with more than this share of it is refused.
_MAX_REPLACEMENT_SHARE = 0.01


def decode_text(data: bytes) -> tuple[str, str]:
    """The text of a text file and the encoding it was read in.

    A byte-order mark decides; else strict UTF-8 (most files, and the cheapest test);
    else ``charset-normalizer``'s best guess, ties going to the encodings of
    :data:`_PREFERRED`.
    """
    for bom, name in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(name).lstrip("\ufeff"), name.removesuffix("-sig")
            except UnicodeDecodeError as exc:
                raise ParseError(ParseFailure.ENCODING, name) from exc
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    matches = list(from_bytes(data))
    if not matches:
        raise ParseError(ParseFailure.ENCODING, "no candidate encoding")
    cleanest = min(match.chaos for match in matches)
    tied = [match for match in matches if match.chaos <= cleanest]
    best = min(
        tied,
        key=lambda m: _PREFERRED.index(m.encoding) if m.encoding in _PREFERRED else len(_PREFERRED),
    )
    text = str(best)
    if text.count("\ufffd") > _MAX_REPLACEMENT_SHARE * max(1, len(text)):
        raise ParseError(ParseFailure.ENCODING, best.encoding)
    return text, best.encoding.replace("_", "-")


# -- plain text and Markdown ----------------------------------------------------------------
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_MD_FENCE = re.compile(r"^\s*(```|~~~)")
_CN_NUMERAL = "一二三四五六七八九十百零〇两"
# Headings teachers' plain-text files use, by level: 第一章 / 第一节 / 一、 / （一） / 1.2.
_TEXT_HEADINGS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(rf"^第[{_CN_NUMERAL}\d]+[编篇部章单元]"), 1),
    (re.compile(rf"^第[{_CN_NUMERAL}\d]+[节课讲]"), 2),
    (re.compile(rf"^[{_CN_NUMERAL}]+[、．.]\s*\S"), 2),
    (re.compile(rf"^[（(][{_CN_NUMERAL}]+[）)]\s*\S"), 3),
    (re.compile(r"^\d{1,2}(\.\d{1,2}){1,3}\s+\S"), 3),
)
# A heading line is short and does not end like a sentence.
_HEADING_MAX_CHARS = 40
_SENTENCE_END = tuple("。！？；：:;!?，,")


# C0/C1 control characters other than the tab: never text (and PostgreSQL refuses NUL).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _clean_line(line: str) -> str:
    line = strip_invisible(unicodedata.normalize("NFC", line)).replace("\u3000", " ")
    return _CONTROL.sub("", line).rstrip()


def _text_heading_level(line: str) -> int:
    stripped = line.strip()
    if not stripped or len(stripped) > _HEADING_MAX_CHARS or stripped.endswith(_SENTENCE_END):
        return 0
    for pattern, level in _TEXT_HEADINGS:
        if pattern.match(stripped):
            return level
    return 0


def text_blocks(text: str, *, markdown: bool = False) -> list[Block]:
    """Headings and paragraphs of a text: blank lines separate paragraphs; a heading is a
    Markdown ``#`` line (in Markdown) or a numbered Chinese heading line (in both)."""
    blocks: list[Block] = []
    paragraph: list[str] = []
    in_fence = False

    def flush() -> None:
        if paragraph:
            joined = "\n".join(paragraph).strip()
            if joined:
                blocks.append(Block(joined))
            paragraph.clear()

    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = _clean_line(raw)
        if markdown and _MD_FENCE.match(line):
            in_fence = not in_fence
            paragraph.append(line)
            continue
        if in_fence:
            paragraph.append(line)
            continue
        if not line.strip():
            flush()
            continue
        heading = _MD_HEADING.match(line) if markdown else None
        if heading:
            flush()
            blocks.append(Block(heading.group(2).strip(), level=len(heading.group(1))))
            continue
        level = _text_heading_level(line)
        if level:
            flush()
            blocks.append(Block(line.strip(), level=level))
            continue
        paragraph.append(line)
    flush()
    return blocks


# -- Word -----------------------------------------------------------------------------------
_STYLE_LEVEL = re.compile(r"^(?:heading|标题)\s*(\d)$", re.IGNORECASE)


# A paragraph's text as python-docx's ``Paragraph.text`` reads it (its runs and the runs
# of its hyperlinks; in a run: text, tabs, breaks, non-breaking hyphens, each element's
# ``str``), in one XPath compiled once: ``Paragraph.text`` compiles two per paragraph and
# run, half of the parsing time of a long document.
_RUN_CONTENT = ("w:br", "w:cr", "w:noBreakHyphen", "w:ptab", "w:t", "w:tab")
_PARAGRAPH_CONTENT = etree.XPath(
    " | ".join(
        f"{parent}/{part}" for parent in ("w:r", "w:hyperlink/w:r") for part in _RUN_CONTENT
    ),
    namespaces=nsmap,
)
# The paragraph's style id ("" when it has none), as ``CT_P.style`` reads it.
_PARAGRAPH_STYLE = etree.XPath("string(w:pPr/w:pStyle/@w:val)", namespaces=nsmap)


def _paragraph_text(p: CT_P) -> str:
    """The text of a ``w:p`` element (a paragraph's, a table cell's)."""
    return "".join(map(str, _PARAGRAPH_CONTENT(p)))


def _table_rows(table: Table) -> list[list[str]]:
    """Each row's cell texts by layout-grid column, as python-docx's ``row.cells`` gives
    them (a cell spanning columns repeated in each; a vertically merged cell below its
    first row showing that first cell's text; a cell's text its paragraphs' joined by
    line breaks), in one pass over the rows: ``row.cells`` looks for the cell above a
    merge by XPath, and reads a table at about 60 KB of text per second."""
    rows: list[list[str]] = []
    above: dict[int, tuple[str, int]] = {}  # grid offset -> (text, span), the row above
    for tr in table._tbl.tr_lst:
        offset = tr.grid_before
        cells: list[str] = []
        here: dict[int, tuple[str, int]] = {}
        for tc in tr.tc_lst:
            if tc.vMerge == "continue":
                # python-docx fails on a continued cell with none above; it is read as empty.
                text, span = above.get(offset, ("", tc.grid_span))
            else:
                text = "\n".join(_paragraph_text(p) for p in tc.p_lst)
                span = tc.grid_span
            here[offset] = (text, span)
            cells += [text] * span
            offset += span
        rows.append(cells)
        above = here
    return rows


def _docx_blocks(data: bytes) -> list[Block]:
    try:
        document: DocxDocument = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises many types for a damaged file
        raise ParseError(ParseFailure.CORRUPT, type(exc).__name__) from exc
    # Style names by id, read once: ``Paragraph.style`` searches the styles part on
    # every call (most of the parsing time of a long document).
    names = {style.style_id: style.name or "" for style in document.styles}
    blocks: list[Block] = []
    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            text = _clean_line(_paragraph_text(item._p)).strip()
            if not text:
                continue
            style = names.get(str(_PARAGRAPH_STYLE(item._p)), "")
            match = _STYLE_LEVEL.match(style)
            if match:
                blocks.append(Block(text, level=min(6, max(1, int(match.group(1))))))
            elif style.lower() == "title":
                blocks.append(Block(text, level=1))
            else:
                blocks.append(Block(text, level=_text_heading_level(text)))
        elif isinstance(item, Table):
            rows = []
            for texts in _table_rows(item):
                cells = [_clean_line(text).strip() for text in texts]
                # Merged cells repeat their text in every grid cell they span.
                deduped = [c for i, c in enumerate(cells) if c and (i == 0 or c != cells[i - 1])]
                if deduped:
                    rows.append(" | ".join(deduped))
            if rows:
                blocks.append(Block("\n".join(rows)))
    return blocks


# -- PDF ------------------------------------------------------------------------------------
def _pdf_blocks(data: bytes) -> list[Block]:
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ParseError(ParseFailure.ENCRYPTED)
        pages = [page.extract_text() or "" for page in reader.pages]
    except ParseError:
        raise
    except (PdfReadError, Exception) as exc:  # pypdf raises many types for a damaged file
        raise ParseError(ParseFailure.CORRUPT, type(exc).__name__) from exc
    blocks: list[Block] = []
    for page in pages:
        # A page break ends a paragraph; lines within a page are joined per paragraph.
        blocks.extend(text_blocks(page))
    return blocks
