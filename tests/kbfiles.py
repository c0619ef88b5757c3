"""Real files of every type the knowledge base accepts, made by the tests themselves.

GBK and UTF-16 text as Windows Notepad writes it, a Word document with heading styles
and a table (python-docx), and a PDF with Chinese text in an embedded CJK TrueType font
(fpdf2 with WenQuanYi Zen Hei, Debian's ``fonts-wqy-zenhei``, which .ci/run installs).
"""

from __future__ import annotations

import io
from pathlib import Path

import docx
from fpdf import FPDF

CJK_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc")

SCHOOL_RULES = (
    "第一章 总则\n"
    "一、作息时间\n"
    "学生每天早上七点半前到校，迟到三次记警告一次。\n"
    "二、请假制度\n"
    "因病请假须由家长向班主任说明，并在返校时交回假条。\n"
)


def gbk_text(text: str = SCHOOL_RULES) -> bytes:
    return text.replace("\n", "\r\n").encode("gbk")


def utf16_text(text: str = SCHOOL_RULES) -> bytes:
    return text.encode("utf-16")  # with a byte-order mark, as Notepad writes it


def docx_file(
    title: str = "光合作用教案",
    sections: tuple[tuple[str, str], ...] = (
        (
            "教学目标",
            "理解光合作用的概念，知道光反应在类囊体薄膜上进行，暗反应在叶绿体基质中进行。",
        ),
        ("重点难点", "光反应与暗反应的联系：光反应为暗反应提供 ATP 和 NADPH。"),
    ),
    table: tuple[tuple[str, ...], ...] = (("阶段", "场所"), ("光反应", "类囊体薄膜")),
) -> bytes:
    document = docx.Document()
    document.add_heading(title, level=1)
    for heading, body in sections:
        document.add_heading(heading, level=2)
        document.add_paragraph(body)
    grid = document.add_table(rows=len(table), cols=len(table[0]))
    for r, row in enumerate(table):
        for c, value in enumerate(row):
            grid.cell(r, c).text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def pdf_file(
    lines: tuple[str, ...] = (
        "第二单元 二次函数",
        "二次函数的图像是一条抛物线，顶点坐标为（-b/2a，(4ac-b²)/4a）。",
    ),
) -> bytes:
    if not CJK_FONT.exists():
        raise RuntimeError(f"the CJK font {CJK_FONT} is missing: apt-get install fonts-wqy-zenhei")
    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("wqy", fname=str(CJK_FONT), collection_font_number=0)
    pdf.set_font("wqy", size=12)
    for line in lines:
        pdf.multi_cell(0, 8, line)
        pdf.ln(4)
    return bytes(pdf.output())
