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
* **Look-alike letters** (optional, off by default): a letter that Unicode's confusables
  data (TR39, through the ``confusable-homoglyphs`` package) names as a look-alike of one
  ASCII letter becomes that letter (Cyrillic ``Ѕуѕtеm`` → ``System``), and a Latin
  letter with diacritics becomes its base letter (``Sÿstém`` → ``System``). The
  sanitizer needs it to see a forged role word; the red line and fact keys do not use it.

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

from confusable_homoglyphs.confusables import confusables_data

__all__ = [
    "DASHES",
    "INVISIBLE_RE",
    "TextView",
    "fold",
    "is_invisible",
    "strip_invisible",
    "text_view",
    "unify_line_breaks",
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
_UNSTABLE_RE: Final = re.compile(f"[^{_STABLE}]")
# Runs of unstable characters are folded in one callback each; where the text has a
# carriage return, \r\n is one line break (a run may then hold the \n).
_UNSTABLE_RUN_RE: Final = re.compile(f"[^{_STABLE}]+")
_UNSTABLE_CRLF_RUN_RE: Final = re.compile(f"(?:\r\n|[^{_STABLE}])+")

# One bounded cache of character views per combination of options, keyed by code point
# so that a run whose characters all map one to one is folded by ``str.translate``.
_CACHE_LIMIT: Final = 1 << 16
_CACHES: dict[tuple[bool, bool, bool], dict[int, str]] = {}
# Up to this many distinct unstable characters, the view is built by one ``str.replace``
# per character (each a fast C scan) rather than by a callback per run.
_FAST_DISTINCT: Final = 24

# Emoji keep their joiners in the visible text: ZWJ sequences (👨‍👩‍👧) and the emoji
# presentation selectors (❤️), right after a symbol, or before the keycap mark (1️⃣).
_EMOJI_JOINERS: Final = frozenset("\u200d\ufe0e\ufe0f")
_KEYCAP: Final = "\u20e3"
_LINE_BREAK_RE: Final = re.compile("\r\n?|[\u0085\u2028\u2029]")


def _ascii_lookalikes() -> dict[str, str]:
    """Letters that TR39 lists as confusable with exactly one ASCII letter.

    TR39's prototype of the I-like capitals (Cyrillic І, Greek Ι) is a lower-case ``l``;
    an upper-case look-alike is taken as ``I`` so that case folding reads ``i``.
    """
    table: dict[str, str] = {}
    for ch, entries in confusables_data.items():
        if len(ch) != 1 or ch.isascii() or not unicodedata.category(ch).startswith("L"):
            continue
        letters = {entry["c"] for entry in entries if len(entry["c"]) == 1 and entry["c"].isascii()}
        letters = {c for c in letters if c.isalpha()}
        if len(letters) == 1:
            letter = letters.pop()
            table[ch] = "I" if letter == "l" and ch.isupper() else letter
    return table


_LOOKALIKES: Final = _ascii_lookalikes()


def _lookalike(ch: str) -> str:
    """The ASCII letter ``ch`` imitates, or ``ch`` itself."""
    letter = _LOOKALIKES.get(ch)
    if letter is not None:
        return letter
    if ch.isascii() or not ch.isalpha():
        return ch
    base = unicodedata.normalize("NFD", ch)
    if base[0].isascii() and base[0].isalpha() and all(unicodedata.combining(c) for c in base[1:]):
        return base[0]
    return ch


def is_invisible(ch: str) -> bool:
    """Whether the single character ``ch`` is removed from every view."""
    return INVISIBLE_RE.fullmatch(ch) is not None or unicodedata.category(ch) == "Cf"


def strip_invisible(text: str, *, keep_emoji_joiners: bool = False) -> str:
    """``text`` without invisible characters; nothing else changes.

    With ``keep_emoji_joiners``, a run made only of ZWJ and emoji presentation selectors
    stays where it follows a symbol (``So``/``Sk``) or precedes a keycap mark, so that
    ``❤️`` and ``👨‍👩‍👧`` come back as they were written. Such a run sits between
    symbols, never inside a word, so it cannot split one.
    """
    if not keep_emoji_joiners:
        return INVISIBLE_RE.sub("", text)

    def drop(match: re.Match[str]) -> str:
        run = match.group()
        if set(run) <= _EMOJI_JOINERS:
            start, end = match.span()
            before = text[start - 1] if start else ""
            if (before and unicodedata.category(before) in ("So", "Sk")) or text[
                end : end + 1
            ] == _KEYCAP:
                return run
        return ""

    return INVISIBLE_RE.sub(drop, text)


def unify_line_breaks(text: str) -> str:
    """``\\r\\n``, ``\\r``, NEL, LINE and PARAGRAPH SEPARATOR as ``\\n``; nothing else changes."""
    if "\r" not in text and not any(ch in text for ch in _LINE_BREAKS):
        return text
    return _LINE_BREAK_RE.sub("\n", text)


def _char_view(ch: str, *, dashes: bool, confusables: bool, fold_case: bool) -> str:
    """The view of one character (uncached)."""
    if is_invisible(ch):
        return ""
    if ch in _LINE_BREAKS or ch == "\r":
        return "\n"
    if dashes and ch in DASHES:
        return "-"
    out = "".join(c for c in unicodedata.normalize("NFKC", ch) if not is_invisible(c))
    if dashes and any(c in DASHES for c in out):
        out = "".join("-" if c in DASHES else c for c in out)
    if confusables:
        out = "".join(_lookalike(c) for c in out)
    if fold_case and out != out.lower():
        out = out.replace(_LOWER_EXPANDING, "i").lower()
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
    _events: tuple[tuple[int, int, int], ...] = field(default=(), repr=False, compare=False)
    _view_starts: tuple[int, ...] = field(default=(), repr=False, compare=False)
    # Set by the fast path instead of the events: the characters whose view is not one
    # character, the length of their view, and the text (case folded or not) they were
    # found in. The events are worked out from them on the first mapping: most views are
    # never mapped back (nothing in them is matched), and a teacher's ellipses (……) would
    # cost an event each.
    _pending: tuple[tuple[str, int], ...] = field(default=(), repr=False, compare=False)
    _base: str = field(default="", repr=False, compare=False)

    def _mapping(self) -> tuple[tuple[tuple[int, int, int], ...], tuple[int, ...]]:
        """The events and the view offsets where they start (worked out once)."""
        pending = self._pending
        if pending:
            events = sorted(
                (at, 1, view_length)
                for ch, view_length in pending
                for at in _positions(self._base, ch)
            )
            # (set before _pending is cleared: a thread that sees it cleared sees them)
            object.__setattr__(self, "_view_starts", _view_starts(events))
            object.__setattr__(self, "_events", tuple(events))
            object.__setattr__(self, "_pending", ())
        return self._events, self._view_starts

    @property
    def identity(self) -> bool:
        """True when every view character is the original character at the same offset."""
        return not self._pending and not self._events and self.text == self.original

    def offset(self, index: int) -> int:
        """The original offset of the character that produced view offset ``index``.

        ``index == len(text)`` maps to ``len(original)``.
        """
        if index >= len(self.text):
            return len(self.original)
        events, starts = self._mapping()
        if not events:
            return index
        i = bisect_right(starts, index) - 1
        if i < 0:
            return index
        position, length, view_length = events[i]
        start = starts[i]
        if index < start + view_length:
            return position
        return position + length + (index - start - view_length)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The smallest original span that produced the view span ``[start, end)``.

        An empty view span maps to an empty original span at the mapped start.
        """
        events, starts = self._mapping()
        if not events:
            return start, end
        if end <= start:
            at = self.offset(start)
            return at, at
        first = self.offset(start)
        last = self.offset(end - 1)
        i = bisect_right(starts, end - 1) - 1
        if i >= 0 and starts[i] <= end - 1 < starts[i] + events[i][2]:
            # The last view character came from a multi-character source (\r\n).
            return first, events[i][0] + events[i][1]
        return first, last + 1


def _positions(text: str, ch: str) -> list[int]:
    """Every offset of the character ``ch`` in ``text``."""
    out: list[int] = []
    at = text.find(ch)
    while at >= 0:
        out.append(at)
        at = text.find(ch, at + 1)
    return out


def _view_starts(events: list[tuple[int, int, int]]) -> tuple[int, ...]:
    """The view offset where each event's view starts (events sorted by position)."""
    starts: list[int] = []
    shift = 0
    for position, length, view_length in events:
        starts.append(position + shift)
        shift += view_length - length
    return tuple(starts)


def _distinct_unstable(base: str) -> set[str] | None:
    """The distinct characters of ``base`` that are not stable, or None when there are
    more than :data:`_FAST_DISTINCT`. One search per distinct character: everything
    before the first match is stable, so once each found character is removed from the
    rest, the next search starts there (a ``findall`` made a string per occurrence)."""
    distinct: set[str] = set()
    rest = base
    m = _UNSTABLE_RE.search(rest)
    while m is not None:
        ch = m.group()
        distinct.add(ch)
        if len(distinct) > _FAST_DISTINCT:
            return None
        rest = rest[m.end() :].replace(ch, "")
        m = _UNSTABLE_RE.search(rest)
    return distinct


def _cached_view(
    table: dict[int, str], ch: str, *, dashes: bool, confusables: bool, fold_case: bool
) -> str:
    """``_char_view`` of ``ch``, through the per-option cache ``table``."""
    out = table.get(ord(ch))
    if out is None:
        out = _char_view(ch, dashes=dashes, confusables=confusables, fold_case=fold_case)
        if len(table) >= _CACHE_LIMIT:
            table.clear()
        table[ord(ch)] = out
    return out


def _fast_view(
    base: str,
    table: dict[int, str],
    dashes: bool,
    confusables: bool,
    fold_case: bool,
) -> tuple[str, tuple[tuple[str, int], ...]] | None:
    """The view built by one ``str.replace`` per distinct unstable character (each a fast
    C scan) instead of a callback per run, and the characters whose view is not one
    character with the length of their view (the ellipsis … is "...", invisible ones are
    ""; their positions become the events when the view is first mapped back); None
    when the text has too many distinct ones or a view that is itself replaced later (it
    would be folded twice)."""
    distinct = _distinct_unstable(base)
    if distinct is None:
        return None
    views: list[tuple[str, str]] = []
    pending: list[tuple[str, int]] = []
    for ch in distinct:
        out = _cached_view(table, ch, dashes=dashes, confusables=confusables, fold_case=fold_case)
        if out == ch:
            continue
        if any(c in distinct for c in out):
            return None
        views.append((ch, out))
        if len(out) != 1:
            pending.append((ch, len(out)))
    view = base
    for ch, out in views:
        view = view.replace(ch, out)
    return view, tuple(pending)


def text_view(
    text: str, *, fold_case: bool = False, dashes: bool = True, confusables: bool = False
) -> TextView:
    """The view of ``text`` (see the module docstring)."""
    # Case is folded first, except for look-alikes, which are looked up in the case they
    # were written in (Cyrillic Т is a look-alike of T, its lower case т of nothing);
    # there every unstable character is folded on its own and the stable ones (ASCII)
    # after.
    fold_first = fold_case and not confusables
    base = text.replace(_LOWER_EXPANDING, "i").lower() if fold_first else text
    if _UNSTABLE_RE.search(base) is None:
        if fold_case and len(base) != len(text):  # unreachable: İ is unstable
            raise AssertionError("case folding changed the length")
        return TextView(original=text, text=base.lower() if fold_case else base)
    table = _CACHES.setdefault((dashes, confusables, fold_case), {})
    fast = None if "\r" in base else _fast_view(base, table, dashes, confusables, fold_case)
    events: list[tuple[int, int, int]] = []

    def view_of(ch: str) -> str:
        return _cached_view(table, ch, dashes=dashes, confusables=confusables, fold_case=fold_case)

    def fold_run(match: re.Match[str]) -> str:
        run = match.group()
        if len(run) == 1:
            out = view_of(run)
            if len(out) != 1:
                events.append((match.start(), 1, len(out)))
            return out
        views = {ord(ch): view_of(ch) for ch in set(run)}
        if "\r" not in run and all(len(out) == 1 for out in views.values()):
            return run.translate(views)
        start = match.start()
        parts: list[str] = []
        i = 0
        while i < len(run):
            if run.startswith("\r\n", i):
                parts.append("\n")
                events.append((start + i, 2, 1))
                i += 2
                continue
            out = views[ord(run[i])]
            if len(out) != 1:
                events.append((start + i, 1, len(out)))
            parts.append(out)
            i += 1
        return "".join(parts)

    if fast is not None:
        view, pending = fast
        if fold_case and not fold_first:
            view = view.lower()  # only ASCII is left to fold: its length does not change
        return TextView(original=text, text=view, _pending=pending, _base=base)
    runs = _UNSTABLE_CRLF_RUN_RE if "\r" in base else _UNSTABLE_RUN_RE
    view = runs.sub(fold_run, base)
    if fold_case and not fold_first:
        view = view.lower()  # only ASCII is left to fold: its length does not change
    if not events:
        return TextView(original=text, text=view)
    return TextView(
        original=text, text=view, _events=tuple(events), _view_starts=_view_starts(events)
    )


def fold(text: str, *, fold_case: bool = True) -> str:
    """The view string alone (no offset map): for keys and comparisons."""
    return text_view(text, fold_case=fold_case).text
