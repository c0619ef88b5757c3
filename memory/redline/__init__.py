"""Red-line filter: personal data that memory must never keep (design v2 §4, DESIGN "Red lines").

A pure, deterministic filter. It runs on every candidate fact (any hit means the
candidate is never saved), replaces spans in every rolling summary before it is saved,
and re-checks facts and summaries when they are injected. The LLM prompts forbid the
same things; this filter is what we rely on when a prompt fails.

One recogniser per category (``numbers``, ``grades``, ``health``), each proposing spans,
validating them and scoring their context (:mod:`memory.redline.base`); grades and
health share the person-reference detection of :mod:`memory.redline.persons`, because
they are on the red line only when they are about an identifiable person. The engine
(:mod:`memory.redline.engine`) runs them on the shared text view of
:mod:`memory.textview` and maps every hit back to the original text. Grades and health
are decided sentence by sentence: one automaton pass over every trigger literal finds the
sentences worth scanning, and a sentence's blocked spans are cached by its text.

:func:`redact` repeats the scan until nothing matches, so its output is clean and
``redact(redact(x).text) == redact(x).text``. Placeholders are masked before matching and
never match any rule, even when a user types one. :func:`explain` tells why each span
was or was not blocked.
"""

from __future__ import annotations

from memory.redline.base import PLACEHOLDERS, THRESHOLD, Category, Finding, Hit
from memory.redline.engine import Redaction, explain, is_clean, redact, scan

__all__ = [
    "PLACEHOLDERS",
    "THRESHOLD",
    "Category",
    "Finding",
    "Hit",
    "Redaction",
    "explain",
    "is_clean",
    "redact",
    "scan",
]
