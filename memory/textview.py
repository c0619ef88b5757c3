"""One text view for every module that must see text the same way. Pure, Django-free.

The sanitizer, the red line and the fact keys all match rules on a *view* of a text
rather than on the text itself, because what a reader sees and what the code matches
must agree: ``１３８ ００１３`` is a mobile number, ``身\u200b份证`` is 身份证, ``ＳＹＳＴＥＭ``
is SYSTEM. A character one module drops and another keeps is exactly the gap an
attacker uses, so the decisions live here, once:

* **Invisible characters** (:data:`INVISIBLE_RE`, :func:`is_invisible`): every ``Cf``
  (format) character of Unicode — zero-width space/joiners, bidi controls, the soft
  hyphen, word joiners, Unicode tags, Arabic and other prepended marks — plus the
  characters that are not ``Cf`` but render as nothing or blank and can split a word:
  the combining grapheme joiner, variation selectors, Mongolian free variation
  selectors, Khmer inherent vowels and Hangul fillers. They are removed from the view.
* **NFKC per character**: compatibility forms fold (full-width ``Ａ１，`` → ``A1,``,
  circled and parenthesised numbers, ligatures). Normalising each character on its own,
  rather than the whole string, keeps every view character attributable to exactly one
  text character (combining marks stay separate instead of composing with their base).
* **Dashes** (optional, on by default): the hyphen and dash variants that NFKC leaves
  alone (‐ ‑ ‒ – — ― − ⁃ ﹘) become ``-``, as people use them between digit groups.
* **Line breaks** (always): ``\\r\\n``, ``\\r``, NEL, LINE and PARAGRAPH SEPARATOR become
  ``\\n``.
* **Case folding** (optional): ``str.lower`` with ``İ`` taken as ``i`` so that the length
  never changes.

:func:`text_view` returns a :class:`TextView`: the view string and a map back to the
original. Any view span maps to the smallest original span that produced it
(:meth:`TextView.span`), so a caller can replace what it found in the text the user
wrote, not in the view. Text made only of characters the view leaves unchanged (ASCII,
CJK ideographs, the common CJK punctuation that NFKC keeps) costs one regex scan; other
characters are looked up in a bounded per-character cache.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "DASHES",
    "INVISIBLE_RE",
    "TextView",
    "fold",
    "is_invisible",
    "strip_invisible",
    "text_view",
]

# Every Cf character of Unicode 15.1 (tests check the list against ``unicodedata``, and
# the per-character path also drops any ``Cf`` a later Unicode adds), plus the
# characters that render as nothing but are not Cf: U+034F combining grapheme joiner,
# U+115F/U+1160/U+3164/U+FFA0 Hangul fillers, U+17B4/U+17B5 Khmer inherent vowels,
# U+180B-U+180F Mongolian variation selectors, U+FE00-U+FE0F and U+E0100-U+E01EF
# variation selectors, the whole tag block U+E0000-U+E007F and U+2065 (unassigned inside
# the bidi range). This is the union of what the sanitizer, the red line and the fact
# keys each removed before they shared this module.
_INVISIBLE_CLASS: Final = (
    "\u00ad\u034f\u061c\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
INVISIBLE_RE: Final = re.compile(f"[{_INVISIBLE_CLASS}]+")

# Dash variants that NFKC leaves alone but people use between digit groups.
DASHES: Final = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58")
_LINE_BREAKS: Final = "\u0085\u2028\u2029"
# str.lower() keeps the length of every character but this one (İ -> i̇).
_LOWER_EXPANDING: Final = "\u0130"

# Characters that NFKC, invisible-stripping, dash and line-break unification all leave
# unchanged (a test checks every one): ASCII but CR, CJK ideographs (BMP block and
# extension A), CJK punctuation that NFKC keeps (、。〈〉《》「」『』【】〔〕 …), the
# curly quotes, the middle dot and guillemets. Only the others need a lookup.
_STABLE: Final = (
    "\x00-\x0c\x0e-\x7f\u00ab\u00b7\u00bb\u2018-\u2023\u2027\u2030-\u2032\u2039\u203a"
    "\u3001-\u3035\u3037\u303b-\u303f\u3400-\u4dbf\u4e00-\u9fff"
)
# \r\n is one line break; every other unstable character is looked up on its own.
_UNSTABLE_RE: Final = re.compile(f"\r\n?|[^{_STABLE}]")

_CACHE_LIMIT: Final = 1 << 16
_CHAR_CACHE: dict[tuple[str, bool], str] = {}


def is_invisible(ch: str) -> bool:
    """Whether the single character ``ch`` is removed from every view."""
    return INVISIBLE_RE.fullmatch(ch) is not None or unicodedata.category(ch) == "Cf"


def strip_invisible(text: str) -> str:
    """``text`` without invisible characters; nothing else changes."""
    return INVISIBLE_RE.sub("", text)


def _char_view(ch: str, dashes: bool) -> str:
    """The view of one character (before case folding)."""
    key = (ch, dashes)
    out = _CHAR_CACHE.get(key)
    if out is not None:
        return out
    if is_invisible(ch):
        out = ""
    elif ch in _LINE_BREAKS or ch == "\r":
        out = "\n"
    elif dashes and ch in DASHES:
        out = "-"
    else:
        out = "".join(c for c in unicodedata.normalize("NFKC", ch) if not is_invisible(c))
        if dashes and any(c in DASHES for c in out):
            out = "".join("-" if c in DASHES else c for c in out)
    if len(_CHAR_CACHE) >= _CACHE_LIMIT:
        _CHAR_CACHE.clear()
    _CHAR_CACHE[key] = out
    return out


@dataclass(frozen=True, slots=True)
class TextView:
    """A normalised view of ``original`` with a map back to its offsets.

    ``text`` is the view. Characters whose view is not exactly one character are
    recorded as events ``(original start, original length, view length)``; every other
    character maps one to one, so the map costs nothing for plain text.
    """

    original: str
    text: str
    _events: tuple[tuple[int, int, int], ...] = field(default=(), repr=False)
    _view_starts: tuple[int, ...] = field(default=(), repr=False)

    @property
    def identity(self) -> bool:
        """True when every view character is the original character at the same offset."""
        return not self._events and self.text == self.original

    def offset(self, index: int) -> int:
        """The original offset of the character that produced view offset ``index``.

        ``index == len(text)`` maps to ``len(original)``.
        """
        if index >= len(self.text):
            return len(self.original)
        if not self._events:
            return index
        i = bisect_right(self._view_starts, index) - 1
        if i < 0:
            return index
        position, length, view_length = self._events[i]
        start = self._view_starts[i]
        if index < start + view_length:
            return position
        return position + length + (index - start - view_length)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The smallest original span that produced the view span ``[start, end)``.

        An empty view span maps to an empty original span at the mapped start.
        """
        if not self._events:
            return start, end
        if end <= start:
            at = self.offset(start)
            return at, at
        first = self.offset(start)
        last = self.offset(end - 1)
        i = bisect_right(self._view_starts, end - 1) - 1
        if i >= 0 and self._view_starts[i] <= end - 1 < self._view_starts[i] + self._events[i][2]:
            # The last view character came from a multi-character source (\r\n).
            return first, self._events[i][0] + self._events[i][1]
        return first, last + 1


def text_view(text: str, *, fold_case: bool = False, dashes: bool = True) -> TextView:
    """The view of ``text`` (see the module docstring)."""
    base = text.replace(_LOWER_EXPANDING, "i").lower() if fold_case else text
    if _UNSTABLE_RE.search(base) is None:
        if fold_case and len(base) != len(text):  # unreachable: İ is unstable
            raise AssertionError("case folding changed the length")
        return TextView(original=text, text=base)
    events: list[tuple[int, int, int]] = []

    def fold_one(match: re.Match[str]) -> str:
        source = match.group()
        if source[0] == "\r":
            out = "\n"
        else:
            out = _char_view(source, dashes)
            if fold_case and out != out.lower():
                out = out.replace(_LOWER_EXPANDING, "i").lower()
        if len(out) != len(source):
            events.append((match.start(), len(source), len(out)))
        return out

    view = _UNSTABLE_RE.sub(fold_one, base)
    if not events:
        return TextView(original=text, text=view)
    starts: list[int] = []
    shift = 0
    for position, length, view_length in events:
        starts.append(position + shift)
        shift += view_length - length
    return TextView(original=text, text=view, _events=tuple(events), _view_starts=tuple(starts))


def fold(text: str, *, fold_case: bool = True) -> str:
    """The view string alone (no offset map): for keys and comparisons."""
    return text_view(text, fold_case=fold_case).text
