"""What every recogniser shares: categories, results, the document and window helpers.

A recogniser (one per :class:`Category`) works on a :class:`Doc` — the text view of
:mod:`memory.textview` with lazily computed sentence and clause boundaries and the
person references of a sentence — in three steps, as Presidio's analyzer does:

1. ``find``: cheap pattern matching proposes :class:`Candidate` spans;
2. ``validate``: checks that need no context (a checksum, a date, a vocabulary);
3. ``score``: the context decides, returning a :class:`Finding` with a score and the
   reasons for it (``explain``). A finding at or above :data:`THRESHOLD` is a hit.
"""

from __future__ import annotations

import re
import re._constants as _sre
import re._parser as _sre_parse
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from ahocorasick_rs import AhoCorasick, Implementation

if TYPE_CHECKING:
    from memory.redline.persons import PersonRef

# A finding scoring at least this is blocked.
THRESHOLD: Final = 0.5


class Category(StrEnum):
    """What a hit is; the values are what audit logs store."""

    ID_NUMBER = "id_number"
    MOBILE = "mobile"
    BANK_CARD = "bank_card"
    GRADE = "grade"
    HEALTH = "health"


PLACEHOLDERS: Final[dict[Category, str]] = {
    Category.ID_NUMBER: "(涉及身份证号，略)",
    Category.MOBILE: "(涉及手机号，略)",
    Category.BANK_CARD: "(涉及银行卡号，略)",
    Category.GRADE: "(涉及学生成绩，略)",
    Category.HEALTH: "(涉及健康信息，略)",
}


@dataclass(frozen=True, slots=True)
class Hit:
    """One blocked span, as offsets into the original (un-normalised) input."""

    category: Category
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Candidate:
    """A span a recogniser proposes, in view offsets; ``kind`` names the pattern."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True, slots=True)
class Finding:
    """A scored candidate: what would be blocked, how sure, and why.

    ``start``/``end`` are view offsets of the span to replace (for grades and health,
    the clause around the trigger); ``reasons`` explain the score in plain words.
    """

    category: Category
    start: int
    end: int
    score: float
    reasons: tuple[str, ...]
    trigger: str = ""

    @property
    def blocked(self) -> bool:
        return self.score >= THRESHOLD


class Recogniser(Protocol):
    """One category of the red line."""

    category: Category

    def find(self, doc: Doc) -> list[Candidate]: ...

    def validate(self, doc: Doc, candidate: Candidate) -> bool: ...

    def score(self, doc: Doc, candidate: Candidate) -> Finding: ...


# --------------------------------------------------------------------------------------
# Sentences and clauses
# --------------------------------------------------------------------------------------

# A full stop between two digits is a decimal point; a comma or colon between digits is
# a thousands separator or a time. (Every branch starts with a character, never with a
# lookbehind, so that the regex engine can skip ahead quickly.)
# (Runs are found by a plain class, which the engine skips to quickly; a run that is a
# lone full stop between two digits is then dropped.)
SENTENCE_DELIM_RE: Final = re.compile(r"[。!?;\n\r.]+")
_CLAUSE_DELIM_RE: Final = re.compile(
    r"(?=[。!?;\n\r、.,:])(?:[。!?;\n\r、]|[.,:](?:(?<![0-9][.,:])|(?![0-9])))"
)


def decimal_point(text: str, at: int) -> bool:
    """A full stop between two digits (3.5) is a decimal point, not a sentence end."""
    return 0 < at < len(text) - 1 and "0" <= text[at - 1] <= "9" and "0" <= text[at + 1] <= "9"


def ends_sentence(text: str, start: int, end: int) -> bool:
    """Whether the delimiter run ``text[start:end]`` (a match of ``SENTENCE_DELIM_RE``)
    ends a sentence: all do but a lone decimal point."""
    return not (end - start == 1 and text[start] == "." and decimal_point(text, start))


@dataclass(slots=True)
class Doc:
    """Normalised text with lazily computed boundaries and per-sentence person references."""

    text: str
    _sentences: tuple[list[int], list[int]] | None = None  # starts and ends of delimiter runs
    _clauses: dict[int, list[int]] = field(default_factory=dict)
    _persons: dict[tuple[int, int], list[PersonRef]] = field(default_factory=dict)
    _digits: list[tuple[Category, int, int, str]] | None = None
    # Set by the engine for a batch of sentences, from its trigger pass over the whole
    # text (None: the recognisers run their own automata): the anchor starts of each
    # grade kind and of the health cues, and the health vocabulary's matches.
    anchors: dict[str, list[int]] | None = None
    terms: list[tuple[int, int]] | None = None
    # Also set for a batch: whether the trigger pass found an English health word in it
    # (False: the English vocabulary has no match here, its automaton need not run).
    latin_terms: bool | None = None
    # The trigger pass's literal occurrences (literal, start, end) in this text.
    triggers: list[tuple[int, int, int]] | None = None

    def digits(
        self, compute: Callable[[str], list[tuple[Category, int, int, str]]]
    ) -> list[tuple[Category, int, int, str]]:
        """The number items of the text, computed once for the three number recognisers."""
        if self._digits is None:
            self._digits = compute(self.text)
        return self._digits

    def sentence_delims(self) -> tuple[list[int], list[int]]:
        """Where the runs of sentence delimiters start and end, in order (computed once;
        a run such as "。\\n" or the "......" of an ellipsis ends one sentence)."""
        if self._sentences is None:
            text = self.text
            spans = [m.span() for m in SENTENCE_DELIM_RE.finditer(text)]
            if "." in text:
                spans = [(a, b) for a, b in spans if ends_sentence(text, a, b)]
            self._sentences = ([a for a, _ in spans], [b for _, b in spans])
        return self._sentences

    def sentence(self, pos: int) -> tuple[int, int]:
        """[start, end) of the sentence holding ``pos`` (delimiters excluded; a position on
        a delimiter counts as inside the sentences on both sides of it)."""
        starts, ends = self.sentence_delims()
        k = bisect_right(starts, pos)
        if k and pos < ends[k - 1]:
            k -= 1
            lo = ends[k - 1] if k else 0
            return lo, starts[k + 1] if k + 1 < len(starts) else len(self.text)
        return (ends[k - 1] if k else 0), (starts[k] if k < len(starts) else len(self.text))

    def clause(self, pos: int) -> tuple[int, int]:
        """[start, end) of the clause holding ``pos``.

        Clause delimiters are the sentence delimiters and a few more, so a clause never
        crosses a sentence end: they are worked out for the sentence holding ``pos`` only
        (most sentences of a long text never need them).
        """
        lo, hi = self.sentence(pos)
        inner = self._clauses.get(lo)
        if inner is None:
            inner = [m.start() for m in _CLAUSE_DELIM_RE.finditer(self.text, lo, hi)]
            self._clauses[lo] = inner
        if not inner:
            return lo, hi
        k = bisect_right(inner, pos)
        if k and inner[k - 1] == pos:
            # pos is itself a delimiter (an item never starts on one); treat it as inside.
            return (inner[k - 2] + 1 if k > 1 else lo), (inner[k] if k < len(inner) else hi)
        return (inner[k - 1] + 1 if k else lo), (inner[k] if k < len(inner) else hi)

    def clause_span(self, start: int, end: int) -> tuple[int, int]:
        """The clauses covering [start, end), without surrounding whitespace."""
        lo, _ = self.clause(start)
        _, hi = self.clause(max(start, end - 1))
        while lo < start and self.text[lo].isspace():
            lo += 1
        while hi > end and self.text[hi - 1].isspace():
            hi -= 1
        return lo, hi

    def only_clause_gap(self, start: int, end: int) -> bool:
        """True when [start, end) holds only clause delimiters and spaces (no sentence end)."""
        gap = self.text[start:end]
        return all(ch.isspace() or ch in ",:、" for ch in gap) and "\n" not in gap


# --------------------------------------------------------------------------------------
# Windows and word helpers
# --------------------------------------------------------------------------------------

REACH: Final = 12.0  # "near": this many characters, in the same sentence
# English words are longer than Chinese ones: a Latin letter or space counts a third.
_LATIN_WEIGHT: Final = 0.34


def _weight(ch: str) -> float:
    return _LATIN_WEIGHT if ch == " " or "a" <= ch <= "z" or "A" <= ch <= "Z" else 1.0


_LATIN_RE: Final = re.compile("[A-Za-z ]")


def back(text: str, pos: int, lo: int, reach: float = REACH) -> int:
    """Start of the window of ``reach`` characters before ``pos``, not before ``lo``."""
    plain = max(lo, pos - int(reach))
    if not _LATIN_RE.search(text, plain, pos):
        return plain  # no Latin letters: every character counts one
    used = 0.0
    while pos > lo and used < reach:
        pos -= 1
        used += _weight(text[pos])
    return pos


def ahead(text: str, pos: int, hi: int, reach: float = REACH) -> int:
    """End of the window of ``reach`` characters after ``pos``, not after ``hi``."""
    plain = min(hi, pos + int(reach))
    if not _LATIN_RE.search(text, pos, plain):
        return plain
    used = 0.0
    while pos < hi and used < reach:
        used += _weight(text[pos])
        pos += 1
    return pos


def words(spaced: str) -> tuple[str, ...]:
    return tuple(spaced.split())


DATA_DIR: Final = Path(__file__).with_name("data")


def data_words(name: str) -> tuple[str, ...]:
    """The words of the red line's data file ``name`` (``data/``): whitespace-separated,
    lines that start with ``#`` are comments."""
    text = (DATA_DIR / name).read_text(encoding="utf-8")
    return tuple(w for line in text.splitlines() if not line.startswith("#") for w in line.split())


def en(*terms: str) -> str:
    """A regex for English words in any case, not inside a longer word.

    ``\\b`` in ASCII mode treats CJK characters as non-word characters, so 有ADHD matches;
    this form scans about ten times faster than per-word lookbehinds.
    """
    ordered = sorted({t.lower() for t in terms}, key=len, reverse=True)
    return r"(?ai:\b(?:" + "|".join(re.escape(t) for t in ordered) + r")\b)"


def alternation(terms: tuple[str, ...] | list[str] | frozenset[str]) -> str:
    """Longest-first alternation with a lookahead on the first characters (fast skip)."""
    ordered = sorted(set(terms), key=len, reverse=True)
    firsts = re.escape("".join(sorted({t[0] for t in ordered})))
    return f"(?=[{firsts}])(?:{'|'.join(re.escape(t) for t in ordered)})"


# --------------------------------------------------------------------------------------
# Fast scanning: a first-character lookahead where the regex engine has none
# --------------------------------------------------------------------------------------

# A set of first characters, as (low, high) code point ranges; None when unknown.
_Firsts = set[tuple[int, int]]
_REPEATS: Final = (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT)
_ZERO_WIDTH: Final = (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT)


def _literal_firsts(code: int, flags: int) -> _Firsts:
    ch = chr(code)
    if flags & re.IGNORECASE and ch.lower() != ch.upper():
        return {(ord(ch.lower()),) * 2, (ord(ch.upper()),) * 2}
    return {(code, code)}


def _item_firsts(op: Any, av: Any, flags: int) -> tuple[_Firsts, bool] | None:
    """The first characters of one parsed item and whether it can match empty."""
    if op is _sre.LITERAL:
        assert isinstance(av, int)
        return _literal_firsts(av, flags), False
    if op is _sre.IN:
        out: _Firsts = set()
        for in_op, in_av in av:
            if in_op is _sre.LITERAL:
                out |= _literal_firsts(in_av, flags)
            elif in_op is _sre.RANGE:
                lo, hi = in_av
                cased = any(chr(c).lower() != chr(c).upper() for c in range(lo, hi + 1))
                if flags & re.IGNORECASE and cased:
                    if hi - lo > 64:
                        return None
                    for c in range(lo, hi + 1):
                        out |= _literal_firsts(c, flags)
                else:
                    out.add((lo, hi))
            else:
                return None  # a negated class or a category: anything may come first
        return out, False
    if op is _sre.BRANCH:
        out = set()
        nullable = False
        for branch in av[1]:
            got = _seq_firsts(branch, flags)
            if got is None:
                return None
            out |= got[0]
            nullable = nullable or got[1]
        return out, nullable
    if op is _sre.SUBPATTERN:
        _, add, delete, sub = av
        return _seq_firsts(sub, (flags | add) & ~delete)
    if op in _REPEATS:
        low, _, sub = av
        got = _seq_firsts(sub, flags)
        return None if got is None else (got[0], got[1] or low == 0)
    if op is _sre.ATOMIC_GROUP:
        return _seq_firsts(av, flags)
    return None


def _seq_firsts(items: Any, flags: int) -> tuple[_Firsts, bool] | None:
    out: _Firsts = set()
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        got = _item_firsts(op, av, flags)
        if got is None:
            return None
        out |= got[0]
        if not got[1]:
            return out, False
    return out, True


def _engine_skips(parsed: Any, flags: int) -> bool:
    """Whether the regex engine already skips ahead by itself: the pattern starts with a
    literal or a class, or is an alternation of literals, and is case-sensitive (measured:
    a lookahead there only adds work)."""
    if flags & re.IGNORECASE:
        return False
    data = [item for item in parsed.data if item[0] is not _sre.AT]
    if not data:
        return True
    op, av = data[0]
    if op in (_sre.LITERAL, _sre.IN):
        return True
    if op in _REPEATS and av[0] >= 1 and len(av[2]) == 1 and av[2][0][0] in (_sre.LITERAL, _sre.IN):
        return True
    if op is _sre.BRANCH:
        return all(b and b[0][0] is _sre.LITERAL for b in av[1])
    if op is _sre.SUBPATTERN:
        return _engine_skips(av[3], (flags | av[1]) & ~av[2])
    return False


def fast_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, prefixed with a lookahead on the characters a match
    can start with when the engine would otherwise try every alternative at every
    position (alternations whose branches start with lookbehinds, classes or groups).

    The lookahead changes no match — only where the engine bothers to try (``re``
    compiles a leading class into a fast skip): a long alternation scans five to ten
    times faster. Patterns whose first characters cannot be worked out, or that can
    match the empty string, are compiled as they are.
    """
    compiled = re.compile(pattern, flags)
    try:
        parsed = _sre_parse.parse(pattern, flags)
    except re.error:  # pragma: no cover - compiled above
        return compiled
    if _engine_skips(parsed, parsed.state.flags):
        return compiled
    got = _seq_firsts(parsed, parsed.state.flags)
    if got is None or got[1]:
        return compiled
    ranges = sorted(got[0])
    first = "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
        for lo, hi in ranges
    )
    try:
        return re.compile(f"(?=[{first}])(?:{pattern})", flags)
    except re.error:  # global inline flags cannot be wrapped in a group
        return compiled


# --------------------------------------------------------------------------------------
# Anchors: where a pattern can match at all
# --------------------------------------------------------------------------------------


def latin_variants(*terms: str) -> tuple[str, ...]:
    """An English anchor as people type it: lower case, Capitalised, UPPER."""
    return tuple(v for t in terms for v in {t.lower(), t.capitalize(), t.upper()})


# The last text lower-cased and its lower-cased form: the recognisers of one scan ask for
# the same text in turn (one tuple, replaced whole, so threads never see a mixed pair).
_LAST_LOWERED: tuple[str, str] = ("", "")


def lowered(text: str) -> str:
    """``text.lower()``, computed once for the recognisers of one scan."""
    global _LAST_LOWERED
    last = _LAST_LOWERED
    if last[0] is text:
        return last[1]
    folded = text.lower()
    _LAST_LOWERED = (text, folded)
    return folded


class Anchors:
    """One Aho-Corasick pass over a text finds the sentences each pattern must look at.

    Every match of a pattern contains at least one of its anchor literals, so running
    the pattern only over the sentences that hold one of them finds the same matches as
    running it over the whole text, at a fraction of the cost on long texts. Literals are
    matched on the lower-cased text (Latin ones in any case). (ahocorasick-rs: a Rust
    automaton, character offsets, overlapping matches.)
    """

    def __init__(self, table: dict[str, tuple[str, ...]]) -> None:
        self.keys = tuple(table)
        literals = sorted({lit.lower() for lits in table.values() for lit in lits})
        index = {lit: i for i, lit in enumerate(literals)}
        keys: list[list[str]] = [[] for _ in literals]
        for key, lits in table.items():
            for lit in {lit.lower() for lit in lits}:
                keys[index[lit]].append(key)
        self._keys = tuple(tuple(k) for k in keys)
        self._automaton = AhoCorasick(literals, implementation=Implementation.DFA)

    def positions(self, text: str) -> dict[str, list[int]] | None:
        """For each key, the start offsets of its anchors in ``text`` (None: a character
        lower-cases to two, so offsets would not match; scan everything)."""
        folded = lowered(text)
        if len(folded) != len(text):
            return None
        found: dict[str, list[int]] = {}
        for literal, start, _ in self._automaton.find_matches_as_indexes(folded, overlapping=True):
            for key in self._keys[literal]:
                found.setdefault(key, []).append(start)
        return found


def sentence_windows(doc: Doc, positions: list[int]) -> list[tuple[int, int]]:
    """The sentences holding ``positions``, in order (each once)."""
    starts, ends = doc.sentence_delims()
    length = len(doc.text)
    last = len(starts)
    return [
        (ends[k - 1] if k else 0, starts[k] if k < last else length)
        for k in sorted({bisect_right(starts, pos) for pos in positions})
    ]


def anchored_matches(
    doc: Doc, pattern: re.Pattern[str], positions: list[int] | None
) -> list[re.Match[str]]:
    """The matches of ``pattern`` in the sentences holding ``positions`` (its anchors).

    (Measured on teacher texts: a scan per anchored sentence beats one scan of the whole
    text even when most sentences hold an anchor.)
    """
    if not positions:
        return []
    text = doc.text
    return [
        m for lo, hi in sentence_windows(doc, positions) for m in pattern.finditer(text, lo, hi)
    ]


# --------------------------------------------------------------------------------------
# Precise anchors
# --------------------------------------------------------------------------------------

# Whitespace a view can hold where a pattern says \s (other spaces fold to " " or "\n").
VIEW_SPACES: Final = " \t\n\x0b\x0c\x1c\x1d\x1e\x1f\u1680"
DIGITS: Final = "0123456789"
CN_NUMERALS: Final = "零一二三四五六七八九十百两〇"


def followed_by(
    prefixes: tuple[str, ...] | list[str], chars: str | tuple[str, ...]
) -> tuple[str, ...]:
    """Every prefix followed by each of ``chars``: a precise anchor for "prefix + number"
    (才 alone is everywhere in Chinese; 才6 and 才六 are not)."""
    return tuple(p + c for p in prefixes for c in chars)


def _is_word(ch: str) -> bool:
    return ch == "_" or ("0" <= ch <= "9") or ("a" <= ch <= "z") or ("A" <= ch <= "Z")


class LatinWords:
    """English words in any case, not inside a longer word: the matches of :func:`en`
    (``\\b(?:longest|…|shortest)\\b`` in ASCII mode) found by an automaton over the
    lower-cased text instead of a regex trying every alternative at every letter."""

    def __init__(self, terms: tuple[str, ...] | list[str]) -> None:
        self._terms = sorted({t.lower() for t in terms})
        self._automaton = AhoCorasick(self._terms, implementation=Implementation.DFA)
        self._fallback = re.compile(en(*terms))
        # The boundary checks below assume every term starts and ends with a word character.
        self._exact = all(_is_word(t[0]) and _is_word(t[-1]) for t in self._terms)

    def spans(self, text: str) -> list[tuple[int, int]]:
        folded = lowered(text)
        if not self._exact or len(folded) != len(text):
            return [m.span() for m in self._fallback.finditer(text)]
        by_start: dict[int, int] = {}
        length = len(text)
        for _, start, end in self._automaton.find_matches_as_indexes(folded, overlapping=True):
            if (end == length or not _is_word(text[end])) and by_start.get(start, 0) < end:
                by_start[start] = end  # the longest term ending at a word boundary
        out: list[tuple[int, int]] = []
        pos = 0
        for start in sorted(by_start):
            if start >= pos and (start == 0 or not _is_word(text[start - 1])):
                out.append((start, by_start[start]))
                pos = by_start[start]
        return out
