"""The analyzer: runs every recogniser on the text view and turns findings into hits."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Final

from memory.redline.base import PLACEHOLDERS, Category, Doc, Finding, Hit, Recogniser
from memory.redline.grades import GradeRecogniser
from memory.redline.health import HealthRecogniser
from memory.redline.numbers import BankCardRecogniser, IdNumberRecogniser, MobileRecogniser
from memory.textview import text_view

RECOGNISERS: Final[tuple[Recogniser, ...]] = (
    IdNumberRecogniser(),
    MobileRecogniser(),
    BankCardRecogniser(),
    GradeRecogniser(),
    HealthRecogniser(),
)

# Tie-break when two hits cover exactly the same span.
_PRIORITY: Final[dict[Category, int]] = {c: i for i, c in enumerate(Category)}
# Grade and health spans are clauses, merged when they touch; numbers stay exact.
_CLAUSE_CATEGORIES: Final = frozenset({Category.GRADE, Category.HEALTH})

# Placeholders as they look in the view (the full-width comma became ",").
_PLACEHOLDER_RE: Final = re.compile(r"\(涉及(?:身份证号|手机号|银行卡号|学生成绩|健康信息),略\)")
# A visible-nothing character no rule matches: not a digit, letter, CJK or delimiter.
_MASK: Final = "\ue000"


@dataclass(frozen=True, slots=True)
class Redaction:
    """The redacted text and how many spans of each category were replaced.

    ``counts`` only holds categories with at least one replaced span. A span swallowed by
    a larger one (an ID inside a redacted grade clause) is not counted separately.
    """

    text: str
    counts: dict[Category, int]


def _mask_placeholders(norm: str) -> str:
    if "涉及" not in norm:
        return norm
    return _PLACEHOLDER_RE.sub(lambda m: _MASK * len(m.group()), norm)


def _findings(doc: Doc) -> list[Finding]:
    out: list[Finding] = []
    for recogniser in RECOGNISERS:
        for candidate in recogniser.find(doc):
            if recogniser.validate(doc, candidate):
                out.append(recogniser.score(doc, candidate))
    return out


_Span = tuple[Category, int, int]


def _merge_clauses(doc: Doc, findings: list[Finding]) -> list[_Span]:
    """Join the blocked clause spans of one category that touch or sit side by side."""
    merged: list[_Span] = []
    for category in _CLAUSE_CATEGORIES:
        spans = sorted((f.start, f.end) for f in findings if f.category is category)
        own: list[_Span] = []
        for start, end in spans:
            if own:
                _, m_start, m_end = own[-1]
                if start <= m_end or doc.only_clause_gap(m_end, start):
                    own[-1] = (category, m_start, max(m_end, end))
                    continue
            own.append((category, start, end))
        merged += own
    return merged


def _resolve(spans: list[_Span]) -> list[_Span]:
    """Non-overlapping spans: an outer span swallows what it overlaps."""
    ordered = sorted(spans, key=lambda s: (s[1], -s[2], _PRIORITY[s[0]]))
    out: list[_Span] = []
    for category, start, end in ordered:
        if out and start < out[-1][2]:
            prev_category, prev_start, prev_end = out[-1]
            out[-1] = (prev_category, prev_start, max(prev_end, end))
            continue
        out.append((category, start, end))
    return out


def explain(text: str) -> list[Finding]:
    """Every scored candidate of ``text``, blocked or not, with its reasons (view offsets)."""
    view = text_view(text)
    return _findings(Doc(_mask_placeholders(view.text)))


def scan(text: str) -> list[Hit]:
    """Every red-line span of ``text``, sorted and non-overlapping, in original offsets."""
    view = text_view(text)
    doc = Doc(_mask_placeholders(view.text))
    blocked = [f for f in _findings(doc) if f.blocked and f.end > f.start]
    exact = [(f.category, f.start, f.end) for f in blocked if f.category not in _CLAUSE_CATEGORIES]
    clauses = _merge_clauses(doc, [f for f in blocked if f.category in _CLAUSE_CATEGORIES])
    hits: list[Hit] = []
    for category, start, end in _resolve(exact + clauses):
        lo, hi = view.span(start, end)
        hits.append(Hit(category, lo, hi))
    return hits


def redact(text: str) -> Redaction:
    """Replace every hit by its placeholder, repeating until the text is clean.

    Replacing a long span by a shorter placeholder can bring two words within reach of
    each other, so a single pass is not always a fixed point; each pass replaces at
    least one character that is not a placeholder, so the loop ends.
    """
    counts: Counter[Category] = Counter()
    while True:
        hits = scan(text)
        if not hits:
            return Redaction(text=text, counts=dict(counts))
        parts: list[str] = []
        pos = 0
        for hit in hits:
            parts.append(text[pos : hit.start])
            parts.append(PLACEHOLDERS[hit.category])
            pos = hit.end
        parts.append(text[pos:])
        text = "".join(parts)
        counts.update(hit.category for hit in hits)


def is_clean(text: str) -> bool:
    """True when ``text`` holds nothing on the red line."""
    return not scan(text)
