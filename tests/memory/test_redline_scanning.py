"""How the red line scans fast must never change what it finds.

The recognisers look only at the sentences that hold an anchor literal of a pattern and
put a first-character lookahead before alternations the regex engine cannot skip
(:func:`memory.redline.base.fast_compile`). Both are sound only if every match of a
pattern holds one of its anchors and the lookahead changes no match: these properties
check that on strings generated from the patterns themselves.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memory.redline import Hit, engine, grades, health, persons, scan
from memory.redline.base import Doc, LatinWords, en, fast_compile
from memory.textview import text_view

_GENERATED = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_GRADE_PATTERNS = {kind: pattern for pattern, kind, _, _ in grades._ITEMS}


@pytest.mark.parametrize("kind", sorted(grades.GATE_LITERALS))
def test_every_match_of_a_grade_pattern_holds_one_of_its_anchors(kind: str) -> None:
    pattern = _GRADE_PATTERNS[kind]
    literals = [lit.lower() for lit in grades.GATE_LITERALS[kind]]

    @_GENERATED
    @given(text=st.from_regex(_original(pattern)))
    def check(text: str) -> None:
        view = text_view(text).text  # the recognisers match on the view
        for match in pattern.finditer(view):
            found = match.group().lower()
            assert any(lit in found for lit in literals), (kind, match.group())

    check()


@pytest.mark.parametrize("kind", sorted(grades.CONFIRMS))
def test_the_checks_of_loose_anchors_keep_every_candidate(kind: str) -> None:
    # The trigger pass drops an anchor occurrence (10分钟, 期末复习, the capital of Part A)
    # only when no match of its kinds can hold it: every candidate of a generated match,
    # with the text around it that makes a check look twice (a paper's prefix, a number,
    # a delimiter), still lies in a sentence the pass marks. (A candidate across a
    # sentence end, 等级\nA, is none: grades are matched sentence by sentence.)
    pattern = _GRADE_PATTERNS[kind]
    recogniser = grades.GradeRecogniser()

    @_GENERATED
    # Found by the generator: a match starting inside a longer run of numerals, with a
    # paper's prefix before the run (the recogniser's veto read only before the match).
    @example(text="零一二三四五六七八九十百两〇两二多分谊P", before="每题", after="钟")
    @example(text="12345分", before="每题", after="")
    @given(
        text=st.from_regex(_original(pattern)),
        before=st.sampled_from(["", "满分", "每题", "期末", "考了", "。", "分", "5"]),
        after=st.sampled_from(["", "钟", "分", "。", "87", "/", "、"]),
    )
    def check(text: str, before: str, after: str) -> None:
        # A sentence served from the cache is marked whatever its checks say: the property
        # is about the checks, so every example starts without one.
        engine.clear_sentence_cache()
        doc = Doc(text_view(before + text + after).text)
        marked = engine._triggered(doc)
        for candidate in recogniser.find(doc):
            if candidate.kind == kind and doc.sentence(candidate.start)[1] >= candidate.end:
                assert any(lo <= candidate.start < hi for lo, hi in marked), (kind, doc.text)

    check()


def test_only_the_letter_grade_scans_the_whole_text() -> None:
    assert set(_GRADE_PATTERNS) - set(grades.GATE_LITERALS) == {"letter"}


def test_every_health_cue_holds_one_of_its_anchors() -> None:
    literals = [lit.lower() for lits in health.CUE_ANCHORS_TABLE.values() for lit in lits]

    @_GENERATED
    @given(text=st.from_regex(health._CUE_RE))
    def check(text: str) -> None:
        for match in health._CUE_RE.finditer(text_view(text).text):
            assert any(lit in match.group().lower() for lit in literals), match.group()

    check()


_MODULE_PATTERNS = [
    value
    for module in (grades, health, persons)
    for value in vars(module).values()
    if isinstance(value, re.Pattern)
]


@pytest.mark.parametrize("pattern", _MODULE_PATTERNS, ids=lambda p: p.pattern[:30])
def test_the_first_character_lookahead_changes_no_match(pattern: re.Pattern[str]) -> None:
    original = _original(pattern)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        text=st.from_regex(original)
        | st.text(alphabet="考了58分他她不及格数学 aA1，。", max_size=30)
    )
    def check(text: str) -> None:
        assert [m.span() for m in pattern.finditer(text)] == [
            m.span() for m in original.finditer(text)
        ]

    check()


def _original(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """The pattern without the lookahead fast_compile may have put in front of it."""
    source = pattern.pattern
    match = re.match(r"\(\?=\[(?:\\.|[^\]\\])*\]\)\(\?:", source)
    if match is None:
        return pattern
    return re.compile(source[match.end() : -1], pattern.flags)


@pytest.mark.parametrize(
    ("source", "prefixed"),
    [
        (r"不及格|(?<![A-Za-z])failed", True),  # a branch starts with a lookbehind
        (r"(?:考|测)得?(?:很|太)?差", False),  # literals only: the engine skips by itself
        (r"[0-9]+分", False),
        (r"(?ai:\b(?:fever|flu)\b)", True),
        (r"a*", False),  # can match the empty string
    ],
)
def test_fast_compile_prefixes_only_where_it_helps(source: str, prefixed: bool) -> None:
    compiled = fast_compile(source)
    assert compiled.pattern.startswith("(?=[") is prefixed
    assert re.compile(source).findall(
        "不及格 failed Failed 考得很差 12分 Fever"
    ) == compiled.findall("不及格 failed Failed 考得很差 12分 Fever")


_WORDS = ("asthma", "adhd", "flu", "fever", "allergy", "allergies", "sick", "c-section")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.lists(
        st.sampled_from([*_WORDS, "FLU", "Fever", "x", "_", "1", " ", "有", "İ", "-", "ies"]),
        max_size=12,
    ).map("".join),
    terms=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5),
)
def test_latin_words_find_what_the_word_regex_finds(text: str, terms: list[str]) -> None:
    words = LatinWords(terms)
    assert words.spans(text) == [m.span() for m in re.finditer(en(*terms), text)]


def test_every_letter_grade_opens_its_gate() -> None:
    pattern = _GRADE_PATTERNS["letter"]

    @_GENERATED
    @given(text=st.from_regex(_original(pattern)))
    def check(text: str) -> None:
        view = text_view(text).text
        for match in pattern.finditer(view):
            assert grades.LETTER_GATE_RE.search(view, match.start(), len(view)), match.group()

    check()


# --------------------------------------------------------------------------------------
# Grades and health are decided sentence by sentence (memory.redline.engine)
# --------------------------------------------------------------------------------------

_DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"


@cache
def _dev_texts() -> list[str]:
    rows = [
        json.loads(line)
        for name in ("redline_dev.jsonl", "redline_handwritten.jsonl")
        for line in (_DATA / name).open(encoding="utf-8")
    ]
    return [r["text"] for r in rows if r["split"] in ("dev", "check")]


def _every_sentence(doc: Doc) -> list[tuple[int, int]]:
    starts, ends = doc.sentence_delims()
    bounds = [0, *ends], [*starts, len(doc.text)]
    return [(lo, hi) for lo, hi in zip(*bounds, strict=True) if hi > lo]


def test_the_sentence_gate_and_the_sentence_cache_change_no_finding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Sentences scanned alone first (so the cache holds them from one-sentence batches),
    # then texts of seven rows each: every finding must be what a cold scan of every
    # sentence, gate off, finds.
    texts = _dev_texts()
    joined = ["\n".join(texts[i : i + 7]) for i in range(0, len(texts), 7)]
    for text in texts:
        scan(text)
    warm = [scan(text) for text in joined]
    monkeypatch.setattr(engine, "_triggered", _every_sentence)
    cold = []
    for text in joined:
        engine._SENTENCE_CACHE.clear()
        cold.append(scan(text))
    assert warm == cold
    assert sum(map(len, cold)) > 500  # the texts do hold grades and health


@pytest.mark.parametrize(
    "text",
    ["李华数学考了58分。", "他有哮喘\n王芳期中不及格", "等级A。他的成绩是B", "张三住院了;李四"],
)
def test_a_sentence_finds_the_same_whatever_its_neighbours(text: str) -> None:
    alone = scan(text)
    for before in ("", "全班平均分80分。", "有哮喘的同学请告诉老师\n"):
        shift = len(before)
        got = [Hit(h.category, h.start - shift, h.end - shift) for h in scan(before + text)]
        assert [h for h in got if h.start >= 0] == alone


def test_the_batch_reuses_what_its_own_automata_would_find() -> None:
    # The anchors and health terms a batch carries from the trigger pass over the whole
    # text are the ones the recognisers' automata find on the batch itself.
    texts = _dev_texts()
    joined = ["\n".join(texts[i : i + 7]) for i in range(0, len(texts), 7)]
    for text in [*joined, "Ｂ超显示他有肾结石。b超单在这里", "班长住院了\n期末87分"]:
        doc = Doc(text_view(text).text)
        sentences = engine._triggered(doc)
        offsets, _ = engine._batch(doc.text, sentences)
        carried = engine._batch_doc(doc.text, sentences, offsets, doc.triggers)
        plain = Doc(carried.text)
        expected = grades._ANCHORS.positions(plain.text) or {}
        expected |= health._CUE_ANCHORS.positions(plain.text) or {}
        assert carried.anchors is not None
        assert {k: sorted(v) for k, v in carried.anchors.items()} == {
            k: sorted(v) for k, v in expected.items()
        }
        own = [(s, e) for _, s, e in health._terms().find_matches_as_indexes(plain.text)]
        assert carried.terms == own
        # (the flag may be set by a word the English automaton then rejects: 'flu' in
        # 'fluent'; never unset where it finds one)
        assert carried.latin_terms or not health.latin_terms().spans(plain.text)


# Sentences that exercise the English vocabulary and its word boundaries (carried flag).
_ENGLISH = (
    "Tom has asthma, he told me.",
    "Lily的ADHD最近好转了",
    "我教English，very fluent的project",
    "他做了CT检查。",
    "She got the flu last week",
)
_SEPARATORS = ("\n", "。", "，", " ", "!", "……", "", ". ")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_prefiltered_batch_finds_what_the_full_batch_finds(data: st.DataObject) -> None:
    # Texts composed of labelled sentences (grades, health, ordinary text, English): the
    # batch scanned with what the trigger pass carries (anchors, health terms, whether an
    # English health word is there) finds exactly what the recognisers find on it alone,
    # and the gated scan finds what a scan of every sentence, nothing carried, finds.
    pool = [*_dev_texts(), *_ENGLISH]
    parts = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6))
    seps = data.draw(
        st.lists(st.sampled_from(_SEPARATORS), min_size=len(parts), max_size=len(parts))
    )
    text = "".join(p + sep for p, sep in zip(parts, seps, strict=True))
    engine.clear_sentence_cache()
    doc = Doc(text_view(text).text)
    sentences = engine._triggered(doc)
    offsets, _ = engine._batch(doc.text, sentences)
    carried = engine._batch_doc(doc.text, sentences, offsets, doc.triggers)
    run = engine._run
    assert run(engine.CLAUSE_RECOGNISERS, carried) == run(
        engine.CLAUSE_RECOGNISERS, Doc(carried.text)
    )
    engine.clear_sentence_cache()
    gated = scan(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "_triggered", _every_sentence)
        engine.clear_sentence_cache()
        full = scan(text)
    assert gated == full


def test_forgetting_sentences_forgets_their_segmentation_too() -> None:
    # Benchmarks measure text never seen before with it: nothing cached by a sentence's
    # text survives (the tags of a word or a probe, facts of the dictionary, do).
    scan("李华数学考了58分，他有哮喘")
    engine.clear_sentence_cache()
    assert not engine._SENTENCE_CACHE
    assert persons.segment.cache_info().currsize == 0
    assert persons._sentence_persons.cache_info().currsize == 0


@_GENERATED
@given(text=st.text(st.sampled_from("考了分5 .。\n!不到满分期末87李华住院…"), max_size=60))
def test_delimiting_the_whole_text_finds_the_same_sentences(text: str) -> None:
    # Many triggers: the whole text is delimited once; few: two searches per sentence.
    view = text_view(text).text
    threshold = engine._DELIMIT_ALL_FROM
    try:
        engine._DELIMIT_ALL_FROM = 0
        engine.clear_sentence_cache()  # (a cached sentence is marked without its checks)
        at_once = engine._triggered(Doc(view))
        engine._DELIMIT_ALL_FROM = 10**9
        engine.clear_sentence_cache()
        searched = engine._triggered(Doc(view))
    finally:
        engine._DELIMIT_ALL_FROM = threshold
    assert at_once == searched


def _possessed_by_anyone(doc: Doc, lo: int, start: int) -> bool:
    """grades._possessed without its possessive gate: every person reference asked."""
    return any(
        r.weight > 0.6
        and r.end <= start
        and grades._POSSESSIVE_GAP_RE.match(doc.text, r.end, start)
        for r in persons.persons(doc, lo, doc.sentence(start)[1])
    )


@_GENERATED
@given(
    who=st.sampled_from(
        ["李华", "宁宁", "Tom", "我家孩子", "他", "学生", "这位同学", "", "王老师"]
    ),
    mark=st.sampled_from(["的", "'s ", "", " 的 ", "的那份", "和"]),
    before=st.sampled_from(["", "请把", "麻烦签一下", "昨天拿到了"]),
    word=st.sampled_from(["成绩单", "素质报告册", "transcript", "各科成绩", "report card"]),
    after=st.sampled_from(["", "模板", "，签字后交回", "。"]),
)
def test_a_transcript_without_a_possessive_before_it_is_nobodys(
    who: str, mark: str, before: str, word: str, after: str
) -> None:
    # The possessive gate (no 的 or 's between the sentence start and the transcript: no
    # person reference is asked) decides as asking every reference does.
    doc = Doc(text_view(before + who + mark + word + after).text)
    start = doc.text.index(word)
    lo = doc.sentence(start)[0]
    assert grades._possessed(doc, lo, start) == _possessed_by_anyone(doc, lo, start)


_TOKENS = st.lists(
    st.tuples(
        st.text(st.sampled_from("小阿暖李梓萱王可欣谢谢,:x1 "), min_size=1, max_size=4),
        st.sampled_from(["nr", "nrfg", "n", "v", "x", "m", "d", "a", "nz", "uj", "q"]),
    ),
    min_size=1,
    max_size=8,
).map(tuple)


@_GENERATED
@given(tags=_TOKENS)
def test_the_name_helpers_take_only_tokens_of_the_lengths_they_are_asked_for(
    tags: tuple[tuple[str, str], ...],
) -> None:
    # persons._segmenter_names asks the one-character helpers only for one-character
    # tokens, and the unknown-word one only for two or three characters.
    for i, (word, _) in enumerate(tags):
        if len(word) != 1:
            assert not persons._doubled_given_name(tags, i)
            assert not persons._split_pet_name(tags, i)
            assert not persons._split_diminutive(tags, i)
        if not 2 <= len(word) <= 3:
            assert not persons._unknown_word_heading_a_clause(tags, i)


def test_every_letter_grade_lead_holds_one_of_the_gate_characters() -> None:
    # grades._confirm_letter tries the lead's pattern only in a window holding one of
    # _LETTER_LEAD_CHARS_RE's characters: every lead the pattern matches holds one.
    lead = re.compile(grades._LETTER_LEAD)

    @_GENERATED
    @example(text="A ")
    @example(text="Grade: ")
    @example(text="成绩是 ")
    @given(text=st.from_regex(lead, fullmatch=True))
    def check(text: str) -> None:
        for match in lead.finditer(text):
            if match.group():
                assert grades._LETTER_LEAD_CHARS_RE.search(match.group()), match.group()

    check()
