"""The analyzer: runs every recogniser on the text view and turns findings into hits."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Final

from ahocorasick_rs import AhoCorasick, Implementation

from memory.redline import grades, health, persons
from memory.redline.base import (
    PLACEHOLDERS,
    SENTENCE_DELIM_RE,
    Category,
    Doc,
    Finding,
    Hit,
    Recogniser,
    decimal_point,
    ends_sentence,
    lowered,
)
from memory.redline.grades import GradeRecogniser
from memory.redline.health import HealthRecogniser
from memory.redline.numbers import BankCardRecogniser, IdNumberRecogniser, MobileRecogniser
from memory.textview import text_view

# Numbers are matched on the whole text (their context may reach across a sentence end);
# grades and health are decided sentence by sentence (see _clause_spans).
NUMBER_RECOGNISERS: Final[tuple[Recogniser, ...]] = (
    IdNumberRecogniser(),
    MobileRecogniser(),
    BankCardRecogniser(),
)
CLAUSE_RECOGNISERS: Final[tuple[Recogniser, ...]] = (GradeRecogniser(), HealthRecogniser())
RECOGNISERS: Final[tuple[Recogniser, ...]] = NUMBER_RECOGNISERS + CLAUSE_RECOGNISERS

# Tie-break when two hits cover exactly the same span.
_PRIORITY: Final[dict[Category, int]] = {c: i for i, c in enumerate(Category)}
# Grade and health spans are clauses, merged when they touch; numbers stay exact.
_CLAUSE_CATEGORIES: Final = frozenset({Category.GRADE, Category.HEALTH})

_Span = tuple[Category, int, int]

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


def _run(recognisers: tuple[Recogniser, ...], doc: Doc) -> list[Finding]:
    out: list[Finding] = []
    for recogniser in recognisers:
        for candidate in recogniser.find(doc):
            if recogniser.validate(doc, candidate):
                out.append(recogniser.score(doc, candidate))
    return out


# --------------------------------------------------------------------------------------
# Grades and health, sentence by sentence
# --------------------------------------------------------------------------------------


# Every literal a grade or health match contains (grade anchors, health cue anchors, the
# health vocabulary, English health words, the condition heads): a sentence holding none
# of them can hold no grade or health finding and is skipped after one automaton pass.
# (The letter grade, A-F after a verb as short as 是, has its own gate below.)
def _health_literals() -> set[str]:
    """The health rules' literals (cue anchors, the vocabulary, condition heads)."""
    literals = {lit.lower() for lits in health.CUE_ANCHORS_TABLE.values() for lit in lits}
    literals |= {t.lower() for t in health.vocabulary()}
    literals |= {t.lower() for t in health.EN_TERMS}
    return literals | set(health.HEAD_LITERALS)


def _trigger_literals() -> list[str]:
    literals = {lit.lower() for lits in grades.GATE_LITERALS.values() for lit in lits}
    return sorted(literals | _health_literals())


_LITERALS: Final = _trigger_literals()
# The characters of SENTENCE_DELIM_RE but the full stop: the same automaton finds them,
# after the literals (an index from len(_LITERALS) on is a delimiter), so the sentences
# around the triggers are delimited without another pass over the text. Full stops are
# left out (an ellipsis, …… in the view, is six of them: most matches of a teacher text
# were full stops); the nearest ones around a trigger are found by str.find and rfind.
_DELIM_CHARS: Final = "。!?;\n\r"
_N_LITERALS: Final = len(_LITERALS)
# (Overlapping matches: a short English literal inside a longer word is no trigger, but
# must not hide a literal that overlaps it.)
_TRIGGERS: Final = AhoCorasick([*_LITERALS, *_DELIM_CHARS], implementation=Implementation.DFA)
# Short English literals (CT, HIV, flu) count only as whole words: inside longer words
# (project, fluent) they are everywhere. Longer ones count anywhere (a superset).
_WORD_ONLY: Final = frozenset(
    i for i, lit in enumerate(_LITERALS) if lit.isascii() and lit.isalpha() and len(lit) <= 3
)


_Check = Callable[[str, int, int], bool]


def _any_of(checks: tuple[_Check, ...]) -> _Check:
    if len(checks) == 1:
        return checks[0]

    def confirm(text: str, start: int, end: int) -> bool:
        for check in checks:  # noqa: SIM110 (a loop: cheaper than any() over a generator)
            if check(text, start, end):
                return True
        return False

    return confirm


def _literal_checks() -> dict[int, _Check]:
    """For each literal that only grade kinds with a confirming check own (10分, 期末,
    满分 …), those checks: an occurrence none of them confirms marks no sentence. A
    literal a health rule or an unchecked kind owns always counts."""
    owners: dict[str, set[str]] = {}
    for kind, lits in grades.GATE_LITERALS.items():
        for lit in lits:
            owners.setdefault(lit.lower(), set()).add(kind)
    health_literals = _health_literals()
    checks: dict[int, _Check] = {}
    for i, lit in enumerate(_LITERALS):
        kinds = owners.get(lit, set())
        if kinds and lit not in health_literals and kinds <= grades.CONFIRMS.keys():
            checks[i] = _any_of(tuple(grades.CONFIRMS[k] for k in sorted(kinds)))
    return checks


_CHECKS: Final = _literal_checks()
# A letter grade's capital is confirmed by what stands before it (Part A is none).
_CONFIRM_LETTER: Final = grades.CONFIRMS["letter"]


def _anchor_keys() -> tuple[tuple[str, ...], ...]:
    """For each literal, the grade kinds and the health cue key it is an anchor of (the
    keys of :class:`memory.redline.base.Anchors` in the recognisers)."""
    keys: dict[str, list[str]] = {}
    for table in (grades.GATE_LITERALS, health.CUE_ANCHORS_TABLE):
        for key, lits in table.items():
            for lit in {lit.lower() for lit in lits}:
                keys.setdefault(lit, []).append(key)
    return tuple(tuple(keys.get(lit, ())) for lit in _LITERALS)


_ANCHOR_KEYS: Final = _anchor_keys()
_TERM_LITERALS: Final = frozenset(
    i for i, lit in enumerate(_LITERALS) if lit in {t.lower() for t in health.term_set()}
)
# The English health words (matched in any case): a batch holding none of them needs no
# pass of their automaton (every one is a literal of the trigger automaton).
_LATIN_TERM_LITERALS: Final = frozenset(
    i for i, lit in enumerate(_LITERALS) if lit in {t.lower() for t in health.latin_words()}
)
_ANY_CAPITAL_RE: Final = re.compile("[A-F]")
# The separator of the sentences scanned together: a sentence delimiter that no grade or
# health pattern can match across (unlike a line break, which \s matches).
_JOIN: Final = "\u3002"
# Blocked grade and health spans of a sentence, by its text (offsets relative to it): long
# texts repeat their sentences (summaries and facts are scanned again at every injection,
# templates recur). Cleared whole when full.
_SENTENCE_CACHE: dict[str, tuple[tuple[Category, int, int], ...]] = {}
_SENTENCE_CACHE_LIMIT: Final = 1 << 14


def clear_sentence_cache() -> None:
    """Forget everything cached by sentence text: the blocked spans here, and the
    segmentations and person references of :mod:`memory.redline.persons` (benchmarks
    measure text never seen before with it)."""
    _SENTENCE_CACHE.clear()
    persons.forget_sentences()


def _is_word(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


# From this many trigger positions on, the sentences are delimited by the delimiters the
# trigger pass found; with fewer, by two regex searches per sentence (tests compare them).
_DELIMIT_ALL_FROM: Final = 0


def _triggered(doc: Doc) -> list[tuple[int, int]]:
    """The sentences of ``doc`` that hold a grade or health trigger, in order: a literal of
    the automaton (short English ones as whole words) or a letter grade's capital.

    Only the sentences around the triggers are delimited (most of a long text never is),
    as :meth:`Doc.sentence` would find them: by the delimiter characters the trigger
    automaton found and the nearest full stops on either side (a full stop between two
    digits is a decimal point), or, for a trigger on a delimiter, by searches for the next
    delimiter run and for the previous one (on the reversed text).
    """
    text = doc.text
    folded = lowered(text)
    length = len(text)
    if len(folded) != length:  # a character lower-cases to two: take every sentence
        starts, ends = doc.sentence_delims()
        bounds = zip([0, *ends], [*starts, length], strict=True)
        return [(lo, hi) for lo, hi in bounds if hi > lo]
    # (start, end, check): a check, when the literal is loose, is asked only for the
    # sentences not in the cache (a cached one is served from it anyway).
    entries: list[tuple[int, int, _Check | None]] = []
    occurrences: list[tuple[int, int, int]] = []
    delims: list[int] = []  # positions of the delimiter characters, in order
    for occurrence in _TRIGGERS.find_matches_as_indexes(folded, overlapping=True):
        i, start, end = occurrence
        if i >= _N_LITERALS:
            delims.append(start)
            continue
        occurrences.append(occurrence)
        if i in _WORD_ONLY and (
            (start and _is_word(text[start - 1])) or (end < length and _is_word(text[end]))
        ):
            continue
        entries.append((start, end, _CHECKS.get(i)))
    doc.triggers = occurrences
    if _ANY_CAPITAL_RE.search(text):
        # A capital its lead does not confirm (Part A, option C: nearly every capital of a
        # teacher's text) marks no sentence, so it is dropped before its sentence is
        # delimited; the check is asked even where the sentence is cached.
        entries += [
            (m.start(), m.end(), None)
            for m in grades.LETTER_GATE_RE.finditer(text)
            if _CONFIRM_LETTER(text, m.start(), m.end())
        ]
    if not entries:
        return []
    entries.sort(key=itemgetter(0))
    reversed_text = ""
    found = len(entries) > _DELIMIT_ALL_FROM
    dots = "." in text
    n_delims = len(delims)
    out: list[tuple[int, int]] = []
    n = len(entries)
    i = 0
    while i < n:
        pos = entries[i][0]
        k = bisect_left(delims, pos) if found else -1
        if (
            k >= 0
            and (k == n_delims or delims[k] != pos)
            and not (dots and text[pos] == "." and not decimal_point(text, pos))
        ):
            lo = delims[k - 1] + 1 if k else 0
            hi = delims[k] if k < n_delims else length
            if dots:  # the nearest full stops that are no decimal points, within [lo, hi)
                j = text.rfind(".", lo, pos)
                while j >= 0 and decimal_point(text, j):
                    j = text.rfind(".", lo, j)
                if j >= 0:
                    lo = j + 1
                j = text.find(".", pos, hi)
                while j >= 0 and decimal_point(text, j):
                    j = text.find(".", j + 1, hi)
                if j >= 0:
                    hi = j
        else:  # on a delimiter: the searches decide, as Doc.sentence does
            if not reversed_text:
                reversed_text = text[::-1]
            lo = _previous_end(text, reversed_text, pos)
            hi = _next_start(text, pos)
        j = i + 1
        while j < n and entries[j][0] < hi:
            j += 1  # in the same sentence
        group, i = entries[i:j], j
        if hi <= lo or (out and out[-1] == (lo, hi)):
            continue
        sentence = text[lo:hi]
        if sentence in _SENTENCE_CACHE or _confirmed(text, group):
            out.append((lo, hi))
        elif len(_SENTENCE_CACHE) < _SENTENCE_CACHE_LIMIT:
            # Every trigger of the sentence is a loose anchor no match can hold: it has
            # no finding, and is remembered as such.
            _SENTENCE_CACHE[sentence] = ()
    return out


def _confirmed(text: str, group: list[tuple[int, int, _Check | None]]) -> bool:
    """Whether a trigger of the group counts: a literal without a check, or one its check
    confirms. (A loop rather than any() over a generator, which ruff prefers: this runs
    for every triggered sentence, and the generator cost several times the loop.)"""
    for start, end, check in group:  # noqa: SIM110
        if check is None or check(text, start, end):
            return True
    return False


def _next_start(text: str, pos: int) -> int:
    """Where the first sentence delimiter run at or after ``pos`` starts (or the end)."""
    while True:
        m = SENTENCE_DELIM_RE.search(text, pos)
        if m is None:
            return len(text)
        a, b = m.span()
        if ends_sentence(text, a, b):
            return a
        pos = b


def _previous_end(text: str, reversed_text: str, pos: int) -> int:
    """Where the last sentence delimiter run before ``pos`` ends (or 0)."""
    length = len(text)
    at = length - pos
    while True:
        m = SENTENCE_DELIM_RE.search(reversed_text, at)
        if m is None:
            return 0
        a, b = m.span()  # in the reversed text: [a, b) is text[length - b : length - a]
        if ends_sentence(text, length - b, length - a):
            return length - a
        at = b


def _batch(
    text: str, sentences: list[tuple[int, int]], triggers: list[tuple[int, int, int]] | None = None
) -> tuple[list[int], list[Finding]]:
    """The grade and health findings of the sentences, scanned together: each sentence's
    start in the batch and the findings in batch offsets.

    Every grade and health rule looks no further than the sentence of its trigger, so a
    sentence's findings depend on its text alone. The sentences are joined by a full stop
    and scanned in one pass of the recognisers (one pass per pattern over a short text
    rather than one per sentence).
    """
    offsets: list[int] = []
    at = 0
    for lo, hi in sentences:
        offsets.append(at)
        at += hi - lo + 1
    return offsets, _run(CLAUSE_RECOGNISERS, _batch_doc(text, sentences, offsets, triggers))


def _batch_doc(
    text: str,
    sentences: list[tuple[int, int]],
    offsets: list[int],
    triggers: list[tuple[int, int, int]] | None,
) -> Doc:
    """The batch of the sentences, carrying what the trigger pass over the whole text
    found in them (the anchors of every grade kind and of the health cues, the health
    vocabulary's leftmost-longest matches), so the recognisers run no automaton again."""
    batch = Doc(_JOIN.join(text[lo:hi] for lo, hi in sentences))
    if triggers is None:
        return batch
    starts = [lo for lo, _ in sentences]
    anchors: dict[str, list[int]] = {}
    terms: list[tuple[int, int]] = []
    term_set = health.term_set()
    latin = False
    for i, start, end in triggers:
        k = bisect_right(starts, start) - 1
        if k < 0 or end > sentences[k][1]:
            continue  # in no sentence of the batch, or across its end
        at = start - starts[k] + offsets[k]
        for key in _ANCHOR_KEYS[i]:
            anchors.setdefault(key, []).append(at)
        if i in _TERM_LITERALS and text[start:end] in term_set:
            terms.append((at, at + end - start))
        latin = latin or i in _LATIN_TERM_LITERALS
    terms.sort(key=lambda t: (t[0], -t[1]))
    longest: list[tuple[int, int]] = []
    for term in terms:  # leftmost-longest, as the vocabulary's automaton matches
        if not longest or term[0] >= longest[-1][1]:
            longest.append(term)
    batch.anchors, batch.terms, batch.latin_terms = anchors, longest, latin
    return batch


def _by_sentence(text: str, sentences: list[tuple[int, int]]) -> list[list[Finding]]:
    """The grade and health findings of each sentence, offsets relative to it."""
    offsets, findings = _batch(text, sentences)
    found: list[list[Finding]] = [[] for _ in sentences]
    for f in findings:
        k = bisect_right(offsets, f.start) - 1
        found[k].append(replace(f, start=f.start - offsets[k], end=f.end - offsets[k]))
    return found


def _clause_spans(doc: Doc) -> list[_Span]:
    """Blocked grade and health spans of ``doc``, decided sentence by sentence (cached by
    the sentence's text; the sentences not in the cache are scanned in one batch, each
    distinct one once)."""
    text = doc.text
    out: list[_Span] = []
    missing: dict[str, list[int]] = {}  # sentence text -> its starts in ``text``
    for lo, hi in _triggered(doc):
        sentence = text[lo:hi]
        cached = _SENTENCE_CACHE.get(sentence)
        if cached is not None:
            out += [(c, lo + a, lo + b) for c, a, b in cached]
        elif sentence in missing:
            missing[sentence].append(lo)
        else:
            missing[sentence] = [lo]
    if not missing:
        return out
    if len(_SENTENCE_CACHE) + len(missing) > _SENTENCE_CACHE_LIMIT:
        _SENTENCE_CACHE.clear()
    sentences = [(starts[0], starts[0] + len(s)) for s, starts in missing.items()]
    offsets, findings = _batch(text, sentences, doc.triggers)
    own: list[list[_Span]] = [[] for _ in sentences]
    for f in findings:
        if f.blocked and f.end > f.start:
            k = bisect_right(offsets, f.start) - 1
            own[k].append((f.category, f.start - offsets[k], f.end - offsets[k]))
    for (sentence, starts), spans in zip(missing.items(), own, strict=True):
        _SENTENCE_CACHE[sentence] = tuple(spans)
        out += [(c, lo + a, lo + b) for lo in starts for c, a, b in spans]
    return out


def _findings(doc: Doc) -> list[Finding]:
    """Every scored candidate, numbers on the whole text, grades and health by sentence."""
    out = _run(NUMBER_RECOGNISERS, doc)
    sentences = _triggered(doc)
    for (lo, _), own in zip(sentences, _by_sentence(doc.text, sentences), strict=True):
        out += [replace(f, start=f.start + lo, end=f.end + lo) for f in own]
    return out


def _merge_clauses(doc: Doc, blocked: list[_Span]) -> list[_Span]:
    """Join the blocked clause spans of one category that touch or sit side by side."""
    merged: list[_Span] = []
    for category in _CLAUSE_CATEGORIES:
        spans = sorted((start, end) for c, start, end in blocked if c is category)
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
    exact = [
        (f.category, f.start, f.end)
        for f in _run(NUMBER_RECOGNISERS, doc)
        if f.blocked and f.end > f.start
    ]
    clauses = _merge_clauses(doc, _clause_spans(doc))
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
