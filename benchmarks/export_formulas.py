"""Formulas in the Word export: can they become Word equations, or readable text? (issue #16)

Measures, on 50 formulas typical of Chinese school exam papers:
- LaTeX → MathML with latex2mathml, then MathML → OMML (Word's equation XML) with
  mathml2omml and with mathml-to-omml: converted, well-formed, only OMML elements;
- LaTeX → plain text with pylatexenc (the "readable text" alternative), printed for review.

The converters are not project dependencies (this script records why runs/exports.py
keeps formulas as their TeX source). Run it in a throwaway venv:

    python -m venv /tmp/formulas && /tmp/formulas/bin/pip install latex2mathml \
        mathml2omml mathml-to-omml pylatexenc lxml
    /tmp/formulas/bin/python benchmarks/export_formulas.py
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from lxml import etree

FORMULAS = r"""
f(x)=x^2-2ax+1
\int_0^1 x^2\,dx
T(n)=2T\left(\frac{n}{2}\right)+n
O(n\log n)
\frac{a+b}{2}\ge\sqrt{ab}
x=\frac{-b\pm\sqrt{b^2-4ac}}{2a}
\sum_{i=1}^{n} i=\frac{n(n+1)}{2}
\lim_{x\to 0}\frac{\sin x}{x}=1
\sin^2\alpha+\cos^2\alpha=1
\vec{a}\cdot\vec{b}=|\vec{a}||\vec{b}|\cos\theta
\overrightarrow{AB}+\overrightarrow{BC}=\overrightarrow{AC}
a_n=a_1+(n-1)d
S_n=\frac{a_1(1-q^n)}{1-q}
\log_a(MN)=\log_a M+\log_a N
\begin{pmatrix}1&2\\3&4\end{pmatrix}
\begin{cases}x+y=3\\x-y=1\end{cases}
f'(x)=3x^2-6x
\angle ABC=90^\circ
\triangle ABC\cong\triangle DEF
A\cap B=\{x\mid 1<x<3\}
x\in\mathbb{R}
\sqrt[3]{8}=2
e^{i\pi}+1=0
\binom{n}{k}=\frac{n!}{k!(n-k)!}
P(A\mid B)=\frac{P(AB)}{P(B)}
\bar{x}=\frac{1}{n}\sum_{i=1}^n x_i
s^2=\frac{1}{n}\sum_{i=1}^{n}(x_i-\bar{x})^2
y=A\sin(\omega x+\varphi)
\left|x-1\right|\le 2
\frac{\partial f}{\partial x}
\int_a^b f(x)\,dx=F(b)-F(a)
a^2+b^2=c^2
\tan\theta=\frac{\sin\theta}{\cos\theta}
F=ma
E=mc^2
v=v_0+at
\rho=\frac{m}{V}
\mathrm{H_2O}
2\mathrm{H_2}+\mathrm{O_2}\xrightarrow{\text{点燃}}2\mathrm{H_2O}
\text{面积}=\pi r^2
\dfrac{1}{2}+\dfrac{1}{3}=\dfrac{5}{6}
x_{1,2}=1\pm\sqrt{2}
\overline{AB}
\hat{y}=bx+a
\prod_{k=1}^{n}k=n!
\left\{\begin{array}{l}x>0\\y>0\end{array}\right.
\underbrace{1+1+\cdots+1}_{n}=n
\operatorname{lcm}(4,6)=12
f^{-1}(x)
\{a_n\}
""".strip().splitlines()

M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
# ECMA-376 Part 1 §22.1: the OMML element names.
OMML = set(
    [
        "acc",
        "accPr",
        "aln",
        "alnScr",
        "argPr",
        "argSz",
        "bar",
        "barPr",
        "baseJc",
        "begChr",
        "borderBox",
        "borderBoxPr",
        "box",
        "boxPr",
        "brk",
        "brkBin",
        "brkBinSub",
        "cGp",
        "cGpRule",
        "chr",
        "count",
        "cSp",
        "ctrlPr",
        "d",
        "defJc",
        "deg",
        "degHide",
        "den",
        "diff",
        "dispDef",
        "dPr",
        "e",
        "endChr",
        "eqArr",
        "eqArrPr",
        "f",
        "fName",
        "fPr",
        "func",
        "funcPr",
        "groupChr",
        "groupChrPr",
        "grow",
        "hideBot",
        "hideLeft",
        "hideRight",
        "hideTop",
        "interSp",
        "intLim",
        "intraSp",
        "jc",
        "lim",
        "limLoc",
        "limLow",
        "limLowPr",
        "limUpp",
        "limUppPr",
        "lit",
        "lMargin",
        "m",
        "mathFont",
        "mathPr",
        "maxDist",
        "mc",
        "mcJc",
        "mcPr",
        "mcs",
        "mPr",
        "mr",
        "nary",
        "naryLim",
        "naryPr",
        "noBreak",
        "nor",
        "num",
        "objDist",
        "oMath",
        "oMathPara",
        "oMathParaPr",
        "opEmu",
        "phant",
        "phantPr",
        "plcHide",
        "pos",
        "postSp",
        "preSp",
        "r",
        "rad",
        "radPr",
        "rMargin",
        "rPr",
        "rSp",
        "rSpRule",
        "scr",
        "sepChr",
        "show",
        "shp",
        "smallFrac",
        "smoothAll",
        "sPre",
        "sPrePr",
        "sSub",
        "sSubPr",
        "sSubSup",
        "sSubSupPr",
        "sSup",
        "sSupPr",
        "strikeBLTR",
        "strikeH",
        "strikeTLBR",
        "strikeV",
        "sty",
        "sub",
        "subHide",
        "sup",
        "supHide",
        "t",
        "transp",
        "type",
        "vertJc",
        "wrapIndent",
        "wrapRight",
        "zeroAsc",
        "zeroDesc",
        "zeroWid",
    ]
)


def omml_check(convert: Callable[[str], str], mathml: str) -> str:
    """'ok', or why the OMML cannot go into a document."""
    try:
        omml = convert(mathml)
    except Exception as exc:
        return f"error {type(exc).__name__}"
    if not omml.lstrip().startswith("<m:oMath"):
        omml = f"<m:oMath>{omml}</m:oMath>"
    omml = omml.replace("<m:oMath", f'<m:oMath xmlns:m="{M}" xmlns:w="{W}"', 1)
    try:
        root = etree.fromstring(omml.encode())
    except etree.XMLSyntaxError as exc:
        return f"malformed ({exc.msg[:40]})"
    unknown = {
        etree.QName(el).localname
        for el in root.iter()
        if isinstance(el.tag, str) and etree.QName(el).namespace == M
    } - OMML
    return f"unknown elements {sorted(unknown)}" if unknown else "ok"


def main() -> None:
    latex2mathml: Any = importlib.import_module("latex2mathml.converter")
    converters = {}
    for module in ("mathml2omml", "math_ml2omml"):
        try:
            converters[module] = importlib.import_module(module).convert
        except ImportError:
            print(f"({module} not installed: skipped)")
    text: Any = importlib.import_module("pylatexenc.latex2text").LatexNodes2Text(math_mode="text")

    totals = {name: 0 for name in ["latex2mathml", *converters]}
    for tex in FORMULAS:
        mathml = latex2mathml.convert(tex)
        totals["latex2mathml"] += 1
        row = []
        for name, convert in converters.items():
            verdict = omml_check(convert, mathml)
            totals[name] += verdict == "ok"
            row.append(f"{name}: {verdict}")
        print(f"{tex}\n    {' | '.join(row)}\n    pylatexenc text: {text.latex_to_text(tex)}")
    print()
    for name, ok in totals.items():
        print(f"{name}: {ok}/{len(FORMULAS)} usable")


if __name__ == "__main__":
    main()
