"""The engine: clean the text, defang every marker until nothing changes, flag overrides."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from memory.memo import TextMemo
from memory.sanitizer import markers, override_en, override_zh
from memory.sanitizer.markers import MarkerRule
from memory.sanitizer.patterns import QUOTE_CLOSE, QUOTE_OPEN, QUOTED_RE
from memory.textview import (
    TextView,
    fold,
    is_invisible,
    strip_invisible,
    text_view,
    unify_line_breaks,
)

# Reported when invisible characters were removed.
RULE_INVISIBLE: Final = "invisible_chars"

_OVERRIDES: Final = (*override_zh.RULES, *override_en.RULES)

# Every replacement removes a delimiter (or quotes a footer phrase that was not quoted),
# so the loop ends long before this; the bound only keeps a bug from looping forever.
_MAX_PASSES: Final = 64


@dataclass(frozen=True, slots=True)
class SanitizeResult:
    """The sanitised text and the names of the rules that matched (never raw text).

    ``neutralised``: rules that changed the text (markers defanged, invisible characters
    removed). ``flagged``: instruction-override rules that matched; their words are kept.
    """

    text: str
    neutralised: tuple[str, ...]
    flagged: tuple[str, ...] = ()


def detection_view(text: str) -> TextView:
    """The view every rule matches on: lower-cased, full-width and look-alikes folded."""
    return text_view(text, fold_case=True, confusables=True)


def _quoted(view: str) -> list[tuple[int, int]]:
    return [match.span() for match in QUOTED_RE.finditer(view)]


def _inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(lo < start and end < hi for lo, hi in spans)


def _words(rule: MarkerRule, match: re.Match[str], view: TextView) -> str:
    """The words of a match, from the text as written (not from the view)."""
    text = view.original
    if "w" in match.re.groupindex:
        lo, hi = view.span(*match.span("w"))
        words = text[lo:hi]
    else:
        lo, hi = view.span(*_span(match))
        words = "".join(
            " " if fold(ch, fold_case=False) in rule.strip else ch for ch in text[lo:hi]
        )
        words = " ".join(words.split())
    return "".join(ch for ch in words if not is_invisible(ch)).strip()


def _span(match: re.Match[str]) -> tuple[int, int]:
    return match.span("x") if "x" in match.re.groupindex else match.span()


def _defang(rule: MarkerRule, view: TextView) -> str | None:
    """The text with every match of ``rule`` quoted, or ``None`` when nothing matched."""
    quoted = _quoted(view.text) if rule.outside_quotes else []
    parts: list[str] = []
    last = 0
    for match in rule.pattern.finditer(view.text):
        start, end = _span(match)
        if end <= start or (quoted and _inside(quoted, start, end)):
            continue
        lo, hi = view.span(start, end)
        if lo < last:
            continue
        parts += [view.original[last:lo], QUOTE_OPEN, _words(rule, match, view), QUOTE_CLOSE]
        last = hi
    if not parts:
        return None
    parts.append(view.original[last:])
    return "".join(parts)


def _run_pass(view: TextView, fired: dict[str, None]) -> TextView:
    """Apply every marker rule once; returns the view of the (possibly) updated text."""
    for rule in markers.RULES:
        updated = _defang(rule, view)
        if updated is not None and updated != view.original:
            fired[rule.name] = None
            view = detection_view(updated)
    return view


def _flags(view: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for name, pattern in _OVERRIDES:
        if name not in found and pattern.search(view) is not None:
            found[name] = None
    return tuple(found)


def _sanitize(text: str) -> tuple[TextView, tuple[str, ...]]:
    """The view of the sanitised text and the names of the rules that changed it."""
    fired: dict[str, None] = {}
    stripped = strip_invisible(text, keep_emoji_joiners=True)
    if len(stripped) != len(text):
        fired[RULE_INVISIBLE] = None
    view = detection_view(unify_line_breaks(stripped))
    for _ in range(_MAX_PASSES):
        updated = _run_pass(view, fired)
        if updated.original == view.original:
            break
        view = updated
    return view, tuple(fired)


def sanitize_history_report(text: str) -> SanitizeResult:
    """Sanitise one history text and report which rules matched (rule names only)."""
    view, neutralised = _sanitize(text)
    return SanitizeResult(text=view.original, neutralised=neutralised, flagged=_flags(view.text))


def _sanitized(text: str) -> str:
    return _sanitize(text)[0].original


# The read path sanitises the same stored texts on every run (a thread's turns, facts,
# recalled entries): the result depends on the text alone, so it is memoised per process.
_MEMO: Final = TextMemo(_sanitized, max_chars=2_000_000, max_text=20_000)


def sanitize_history(text: str) -> str:
    """Sanitise one history text before it is wrapped in the untrusted boundary.

    The same text as :func:`sanitize_history_report` gives, without looking for
    override phrases (they change nothing).
    """
    return _MEMO(text)
