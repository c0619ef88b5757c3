"""L3 recall: tokenizer, query builder, BM25 index (against a brute-force reference), gate.

Pure Python + numpy: runs without Django settings (``-p no:django``).
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from dataclasses import dataclass, replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.recall import query as query_module
from memory.recall.gating import (
    DEFAULT_THRESHOLD,
    Evidence,
    QueryEvidence,
    features,
    gate,
    relevance,
)
from memory.recall.index import BACKGROUND_RANK, RecallIndex, brute_force_raw
from memory.recall.kernel import SPAN
from memory.recall.query import ConversationTurn, QueryTerms, build_query
from memory.recall.tokenize import (
    CROSS_WEIGHT,
    is_cjk_unigram,
    name_terms,
    query_weights,
    stem,
    terms,
    weighted_terms,
)
from tests.cluster import ROOT

# --------------------------------------------------------------------------- tokenizer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("，。！？ ... ", []),
        ("试卷", ["试卷", "试", "卷"]),
        ("诗", ["诗"]),  # a one-character run is its own unigram
        (
            "出份Python试卷，共３题",
            ["出份", "出", "份", "python", "试卷", "试", "卷", "共", "3", "题"],
        ),
        ("ＡＢＣ１２３", ["abc123"]),  # full width -> ASCII (NFKC), lower case
        ("第２章：Linked Lists", ["第", "2", "章", "link", "list"]),
        ("C++ 与 Java", ["c", "java"]),  # "与" is a stop character
        ("我们的数据", ["们的", "的数", "数据", "数", "据"]),  # stop bigram 我们; 我 们 的
        ("the questions were answered", ["question", "answer"]),
        ("don't", ["don"]),  # "t" is a stop word
        ("3.14", ["3", "14"]),
        ("x² ①", ["x2", "1"]),  # NFKC unfolds compatibility characters
        ("ｶﾀｶﾅ", ["カタ", "タカ", "カナ", "カ", "タ", "カ", "ナ"]),  # half-width kana -> full
        ("数学math题", ["数学", "数", "学", "math", "题"]),
        # words of three or more characters are terms too (after the unigrams)
        ("光合作用", ["光合", "合作", "作用", "光", "合", "作", "用", "光合作用"]),
        ("像上次那样", ["像上", "次那", "像", "上", "次", "样"]),  # 上次, 那样: stop words
    ],
)
def test_terms_table(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("time", "time"),  # the old suffix stripper made it "tim"
        ("times", "time"),
        ("timing", "time"),
        ("dance", "danc"),
        ("danced", "danc"),
        ("dancing", "danc"),
        ("running", "run"),
        ("stopped", "stop"),
        ("parties", "parti"),
        ("glasses", "glass"),
        ("class", "class"),
        ("news", "news"),
        ("bus", "bus"),
        ("cat", "cat"),
        ("c3po", "c3po"),
        ("café", "café"),
    ],
)
def test_stem_table(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_bigrams_across_word_boundaries_weigh_less_in_a_query() -> None:
    weighted = dict(weighted_terms("出一份光合作用测验"))
    assert weighted["光合"] == weighted["测验"] == weighted["光合作用"] == 1.0
    assert weighted["用测"] == CROSS_WEIGHT  # 光合作用|测验: spans a word boundary
    assert weighted["光"] == 0.5


def test_terms_is_deterministic_and_keeps_duplicates() -> None:
    text = "二叉树二叉树 binary trees"
    assert terms(text) == terms(text)
    assert terms(text).count("二叉") == 2
    assert terms("Trees") == terms("TREE") == terms("tree")  # stems need not be words


def test_query_weights_decay_turn_weights_and_unigrams() -> None:
    weights = query_weights(["数据结构试卷", "简答题换两道"], decay=0.5)
    assert weights["简答"] == pytest.approx(1.0)  # newest turn, once: (k3+1)x/(k3+x) = 1
    assert weights["数据"] == pytest.approx(2 * 0.5 / 1.5)  # older turn: x = 0.5
    assert weights["答"] == pytest.approx(0.5)  # a unigram weighs half
    assert is_cjk_unigram("答") and not is_cjk_unigram("答题") and not is_cjk_unigram("a")
    only_new = query_weights(["数据结构", "试卷"], decay=0.0)
    assert set(only_new) == {"试卷", "试", "卷"}
    muted = query_weights(["数据结构", "试卷"], turn_weights=[1.0, 0.0])
    assert "试卷" not in muted and "数据" in muted
    assert query_weights("试卷 试卷")["试卷"] == pytest.approx(4 / 3)  # saturates
    with pytest.raises(ValueError):
        query_weights(["a"], turn_weights=[1.0, 2.0])


def test_build_query_weighs_the_conversation_toward_the_newest_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(query_module, "MAX_TERMS", 1000)
    alone = build_query(message="像上次那样出一份测验")
    assert "光合" not in alone
    query = build_query(
        message="像上次那样出一份测验",
        turns=[
            ConversationTurn("讲讲细胞呼吸", "线粒体……"),
            ConversationTurn("光合作用的实验怎么设计", "叶绿体……"),
        ],
        summary="本会话讨论了生物课",
    )
    assert query["测验"] > query["光合"] > query["呼吸"] > 0  # newest first
    assert query["叶绿"] < query["光合"]  # the assistant's side weighs less
    assert 0 < query["生物"] < query["呼吸"]  # the summary weighs least
    failed = build_query(message="再来", turns=[ConversationTurn("数据结构试卷", None)])
    assert "数据" in failed  # a failed turn still says what the teacher asked
    long_answer = build_query(message="好", turns=[ConversationTurn("x", "甲" * 5000 + "乙乙")])
    assert "乙乙" not in long_answer  # only the head of a long artifact


def test_build_query_keeps_the_strongest_terms() -> None:
    turns = [ConversationTurn(f"第{i}课 " + "植物动物细胞组织器官系统" * 3) for i in range(2)]
    query = build_query(message="出一份光合作用测验", turns=turns, summary="生态系统能量流动")
    assert len(query) == query_module.MAX_TERMS
    message_terms = build_query(message="出一份光合作用测验")
    assert all(term in query for term, w in message_terms.items() if w >= 1.0)


# ------------------------------------------------------------------ index vs reference

TERMS = st.sampled_from([f"t{i}" for i in range(12)] + ["数据", "结构", "x"])
DOC = st.lists(TERMS, min_size=0, max_size=12)
CORPUS = st.dictionaries(st.integers(min_value=0, max_value=10_000), DOC, min_size=1, max_size=25)
QUERY = st.dictionaries(TERMS, st.floats(min_value=0.1, max_value=3.0), min_size=1, max_size=6)


def _expected(corpus: dict[int, list[str]], query: dict[str, float], k: int) -> list[float]:
    reference = brute_force_raw(corpus, query)
    return sorted((v for v in reference.values() if v > 1e-9), reverse=True)[:k]


def _check(
    index: RecallIndex, corpus: dict[int, list[str]], query: dict[str, float], k: int
) -> None:
    reference = brute_force_raw(corpus, query)
    hits = index.search(query, k=k)
    expected = _expected(corpus, query, k)
    assert len(hits) == len(expected)
    for hit, raw in zip(hits, expected, strict=True):
        assert hit.raw == pytest.approx(raw, rel=1e-4, abs=1e-5)
        assert hit.raw == pytest.approx(reference[hit.doc_id], rel=1e-4, abs=1e-5)
        assert 0.0 <= hit.score <= 1.0
    raws = [h.raw for h in hits]
    assert raws == sorted(raws, reverse=True)
    # The knowledge base's ranking without the evidence: the same entries, same order.
    assert index.rank(query, k=k) == [(hit.doc_id, hit.raw) for hit in hits]


_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_SETTINGS
@given(corpus=CORPUS, query=QUERY, k=st.integers(min_value=1, max_value=8))
def test_bulk_index_matches_brute_force(
    corpus: dict[int, list[str]], query: dict[str, float], k: int
) -> None:
    _check(RecallIndex.from_documents(corpus.items()), corpus, query, k)


@_SETTINGS
@given(
    corpus=CORPUS,
    added=st.lists(st.tuples(st.integers(min_value=10_001, max_value=10_060), DOC), max_size=60),
    query=QUERY,
    k=st.integers(min_value=1, max_value=8),
)
def test_tails_in_the_arena_match_brute_force(
    corpus: dict[int, list[str]],
    added: list[tuple[int, list[str]]],
    query: dict[str, float],
    k: int,
) -> None:
    """Entries added one by one (tails moved and doubled in the shared arena, upserts
    among them) score as the reference does."""
    index = RecallIndex.from_documents(corpus.items())
    final = dict(corpus)
    for doc_id, doc_terms in added:
        index.add(doc_id, doc_terms)
        final[doc_id] = doc_terms
    _check(index, final, query, k)


@_SETTINGS
@given(
    corpus=CORPUS,
    added=st.lists(st.tuples(st.integers(min_value=0, max_value=10_060), DOC), max_size=30),
    asked=st.lists(st.integers(min_value=0, max_value=10_060), min_size=1, max_size=8),
    query=st.lists(st.sampled_from([f"t{i}" for i in range(14)] + ["数据", "x"]), max_size=8),
)
def test_holds_matches_the_entries_terms(
    corpus: dict[int, list[str]],
    added: list[tuple[int, list[str]]],
    asked: list[int],
    query: list[str],
) -> None:
    """Which terms an entry holds (the knowledge-base gate's coverage), for entries in
    the bulk block, in tails, replaced, and unknown, and for terms no entry has."""
    index = RecallIndex.from_documents(corpus.items())
    final = dict(corpus)
    for doc_id, doc_terms in added:
        index.add(doc_id, doc_terms)
        final[doc_id] = doc_terms
    expected = [[term in final.get(doc_id, ()) for term in query] for doc_id in asked]
    assert index.holds(asked, query).tolist() == expected


@_SETTINGS
@given(
    corpus=CORPUS,
    extra=CORPUS,
    removed=st.sets(st.integers(min_value=0, max_value=10_000), max_size=30),
    query=QUERY,
)
def test_incremental_add_remove_equals_rebuild(
    corpus: dict[int, list[str]],
    extra: dict[int, list[str]],
    removed: set[int],
    query: dict[str, float],
) -> None:
    index = RecallIndex.from_documents(corpus.items())
    final = dict(corpus)
    for doc_id, doc_terms in extra.items():  # adds and upserts
        index.add(doc_id, doc_terms)
        final[doc_id] = doc_terms
    for doc_id in sorted(removed | set(list(final)[::3])):
        assert index.remove(doc_id) == (doc_id in final)
        final.pop(doc_id, None)
    assert len(index) == len(final)
    assert sorted(index.doc_ids) == sorted(final)
    if not final:
        assert index.search(query, k=5) == []
        return
    rebuilt = RecallIndex.from_documents(final.items())
    got = index.search(query, k=len(final))
    want = rebuilt.search(query, k=len(final))
    # Equal up to float32 summation order (rounding both to a fixed digit could split a tie).
    assert [h.doc_id for h in got] == [h.doc_id for h in want]
    assert [h.raw for h in got] == pytest.approx([h.raw for h in want], rel=1e-5, abs=1e-6)
    assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-5, abs=1e-6)
    _check(index, final, query, 5)
    for term in set(query):
        assert index.document_frequency(term) == rebuilt.document_frequency(term)


def test_an_index_of_several_spans_with_tails_and_removals_matches_brute_force() -> None:
    """More entries than the kernel's span of slots (scores added a span at a time, each
    term's cursor carried from span to span), entries added after the bulk block, removed
    and excluded ones: every search agrees with the reference."""
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(400)]
    size = 2 * SPAN + 1234
    corpus = {doc_id: rng.choices(vocab, k=rng.randint(1, 6)) for doc_id in range(size)}
    index = RecallIndex.from_documents(corpus.items())
    for doc_id in range(size, size + 300):
        corpus[doc_id] = rng.choices(vocab, k=rng.randint(1, 6))
        index.add(doc_id, corpus[doc_id])
    for doc_id in rng.sample(sorted(corpus), 500):
        index.remove(doc_id)
        del corpus[doc_id]
    for _ in range(3):
        query = {term: rng.uniform(0.2, 2.0) for term in rng.sample(vocab, 5)}
        _check(index, corpus, query, 10)
        excluded = {hit.doc_id for hit in index.search(query, k=3)}
        reference = {d: t for d, t in corpus.items() if d not in excluded}
        best = sorted(brute_force_raw(corpus, query).items(), key=lambda kv: (-kv[1], kv[0]))
        kept = [doc_id for doc_id, raw in best if doc_id in reference and raw > 0][:5]
        assert [h.doc_id for h in index.search(query, k=5, exclude=excluded)] == kept


def test_ties_at_the_kth_place_go_to_the_lower_doc_ids() -> None:
    corpus = {doc_id: ["rare", "pad", "x"] for doc_id in range(300, 0, -1)}
    corpus.update({i: ["pad", "y", "z"] if i % 5 else [f"u{i}"] for i in range(1000, 3000)})
    index = RecallIndex.from_documents(corpus.items())
    for k in (1, 3, 5, 7):
        hits = index.search({"rare": 1.0, "pad": 0.5}, k=k)
        assert [h.doc_id for h in hits] == list(range(1, k + 1))
        assert len({h.raw for h in hits}) == 1
    index.remove(2)
    assert [h.doc_id for h in index.search(["rare", "pad"], k=3)] == [1, 3, 4]


def test_compaction_keeps_results() -> None:
    corpus = {i: [f"t{i % 7}", f"t{i % 5}", "common"] for i in range(200)}
    index = RecallIndex.from_documents(corpus.items())
    for i in range(0, 200, 2):  # more than a quarter: compacts
        index.remove(i)
        del corpus[i]
    index.add(1000, ["t1", "t3"])
    corpus[1000] = ["t1", "t3"]
    assert index._n_slots < 150  # compacted at least once
    _check(index, corpus, {"t1": 1.0, "t3": 0.5, "common": 1.0}, 10)


def test_exclude_and_upsert_and_ties() -> None:
    index = RecallIndex()
    for doc_id in (5, 3, 9):
        index.add(doc_id, ["二叉", "叉树", "filler"])
    index.add(1, ["other"])
    index.add(2, ["other2"])
    hits = index.search(["二叉", "叉树"], k=10)
    assert [h.doc_id for h in hits] == [3, 5, 9]  # equal scores: ordered by doc_id
    assert [h.doc_id for h in index.search(["二叉"], k=10, exclude={3, 9, 404})] == [5]
    index.add(5, ["other"])  # upsert: entry 5 no longer mentions 二叉
    assert [h.doc_id for h in index.search(["二叉"], k=10)] == [3, 9]
    assert index.remove(5) and not index.remove(5)
    assert 5 not in index and 3 in index


def test_empty_cases() -> None:
    empty = RecallIndex()
    assert empty.search(["x"], k=3) == []
    index = RecallIndex.from_documents([(1, ["a"]), (2, [])])
    assert index.search([], k=3) == []
    assert index.search(["zzz"], k=3) == []
    assert index.search(["a"], k=0) == []
    assert [h.doc_id for h in index.search(["a"], k=3)] == [1]
    assert RecallIndex.from_documents([]).search(["a"], k=3) == []
    with pytest.raises(TypeError):
        index.search("a text, not terms", k=3)


def test_from_documents_keeps_the_last_version() -> None:
    index = RecallIndex.from_documents([(1, ["a"]), (2, ["b"]), (1, ["c"])])
    assert len(index) == 2
    assert index.search(["a"], k=3) == []
    assert [h.doc_id for h in index.search(["c"], k=3)] == [1]


# ----------------------------------------------------------------- calibrated score

HISTORY = [
    "帮我出一份高二数学期中试卷，重点考二次函数和三角函数，难度中等\n"
    "好的，以下是高二数学期中试卷（满分150分）。一、选择题：1. 二次函数y=x²-2x的对称轴是",
    "设计一节初二语文公开课教案，主题是古诗词鉴赏，时长45分钟\n"
    "教学目标：1. 理解诗歌意象；2. 体会作者情感。教学重点：意象分析。导入：播放古琴曲",
    "给家长写一封期末考试后的家长会通知\n各位家长：您好！本学期期末考试已经结束，"
    "学校定于下周五下午召开家长会，请您准时参加",
    "把数据结构试卷里的简答题换成两道编程题\n已替换：原第5题和第6题改为编程题。"
    "1. 实现单链表的反转；2. 用栈实现队列",
    "Create a 10-question quiz on photosynthesis for grade 8\n"
    "Sure! 1. What gas do plants absorb during photosynthesis?",
    "总结一下化学方程式配平的方法\n配平方法：一、观察法；二、最小公倍数法；三、奇数配偶法",
    "英语定语从句的讲解思路\n先复习关系代词that/which/who的用法，再通过例句归纳规则",
    "出十道关于牛顿第二定律的计算题\n1. 质量为2kg的物体受到10N的水平拉力",
]


@pytest.fixture(scope="module")
def history() -> RecallIndex:
    return RecallIndex.from_documents((i, terms(text)) for i, text in enumerate(HISTORY))


@pytest.mark.parametrize(
    ("query", "expected_top"),
    [
        ("数据结构试卷的简答题再换成两道编程题", 3),
        ("上次那份高二数学期中试卷，二次函数的题再加几道", 0),
        ("帮我再写一份家长会通知，这次是期中考试", 2),
        ("another 10-question quiz on photosynthesis for grade 8", 4),
    ],
)
def test_related_query_passes_the_gate(history: RecallIndex, query: str, expected_top: int) -> None:
    hits = history.search(query_weights(query), k=3)
    assert hits and hits[0].doc_id == expected_top
    assert hits[0].score >= DEFAULT_THRESHOLD
    assert gate(hits)[0].doc_id == expected_top


@pytest.mark.parametrize(
    "query",
    [
        "今天天气怎么样",
        "帮我给学生推荐几本课外书",
        "what is the capital of France",
        "请假条怎么写",  # shares one character (写) with one entry of a small scope
        "出一份物理电磁感应的单元测验",
    ],
)
def test_unrelated_query_stays_below_the_gate(history: RecallIndex, query: str) -> None:
    hits = history.search(query_weights(query), k=3)
    assert all(0.0 <= h.score < DEFAULT_THRESHOLD for h in hits)
    assert gate(hits) == []


def test_a_short_english_request_ranks_first_but_its_unknown_words_count_against_it(
    history: RecallIndex,
) -> None:
    # "make" and "another" are in no entry: half of the query's evidence is unseen, so
    # the photosynthesis quiz ranks first but stays below the default (gating.py: the
    # threshold is set where questions against another person's memory fire <= 5 %).
    hits = history.search(query_weights("make another quiz on photosynthesis"), k=3)
    assert hits[0].doc_id == 4 and hits[0].evidence.query.unknown_weight == 2.0
    unrelated = history.search(query_weights("what is the capital of France"), k=3)
    assert all(h.score < hits[0].score for h in unrelated)
    assert hits[0].score < DEFAULT_THRESHOLD


def test_a_vague_follow_up_finds_the_topic_of_its_thread(history: RecallIndex) -> None:
    query = build_query(
        message="像上次那样再出十道",
        turns=[ConversationTurn("牛顿第二定律的受力分析怎么讲", "先画受力图，再用F=ma……")],
    )
    passed = gate(history.search(query, k=3))
    assert [h.doc_id for h in passed] == [7]


def test_a_one_entry_scope_injects_only_what_its_entry_covers() -> None:
    index = RecallIndex.from_documents([(7, terms(HISTORY[3]))])
    hits = index.search(query_weights("把数据结构试卷里的简答题换成两道编程题"), k=3)
    assert [h.doc_id for h in gate(hits)] == [7]
    partial = index.search(query_weights("出一份数据结构的期末复习提纲，重点是二叉树"), k=3)
    assert [h.doc_id for h in partial] == [7] and gate(partial) == []
    assert index.search(query_weights("今天天气怎么样"), k=3) == []


def test_evidence_counts_known_and_unseen_terms() -> None:
    index = RecallIndex.from_documents((i, [f"w{i}", "x"]) for i in range(40))
    hit = index.search({"w1": 1.0, "x": 1.0}, k=1)[0]
    evidence = hit.evidence
    assert hit.doc_id == 1 and evidence.raw == pytest.approx(hit.raw)
    idf = float(index.idf([1])[0])
    # x is in every entry: no evidence (IDF 0), neither known nor unseen
    assert evidence.query.known_weight == pytest.approx(1.0)
    assert evidence.query.known_mass == pytest.approx(idf)
    # a typical entry holds w1 with probability 1/40
    assert evidence.query.background == pytest.approx(idf / 40)
    assert evidence.query.spread == pytest.approx(idf * math.sqrt(1 / 40 * 39 / 40))
    assert evidence.query.unknown_weight == 0.0 and evidence.query.entries == 40
    assert evidence.query.unseen_idf == pytest.approx(float(index.idf([0])[0]))
    # The same entry asked with terms no entry holds: same raw, lower score.
    unseen = index.search({"w1": 1.0, "x": 1.0, "never": 1.0, "seen": 1.0}, k=1)[0]
    assert unseen.raw == pytest.approx(hit.raw) and unseen.score < hit.score
    assert unseen.evidence.query.unknown_weight == pytest.approx(2.0)
    assert unseen.evidence.query.cjk_weight == 0.0
    # CJK terms are counted, seen or not (the per-language part of the gate).
    cjk = index.search({"w1": 1.0, "光合": 0.5, "作用": 1.0}, k=1)[0]
    assert cjk.evidence.query.cjk_weight == pytest.approx(1.5)
    # Many copies of one term cannot push the score out of [0, 1].
    heavy = index.search({"w1": 1000.0}, k=1)[0]
    assert 0.0 < heavy.score <= 1.0 and not math.isnan(heavy.score)


def test_evidence_counts_informative_terms_and_the_tenth_best_raw() -> None:
    # Entries 1-12 hold "a" i times (the more, the higher); 13-39 do not.
    docs = [(i, ["a"] * (i if i <= 12 else 0) + ["b", f"pad{i}"]) for i in range(1, 40)]
    index = RecallIndex.from_documents(docs)
    query = {"a": 1.0, "pad3": 1.0, "never": 1.0}
    hits = index.search(query, k=BACKGROUND_RANK)
    evidence = hits[0].evidence.query
    assert evidence.known_terms == 2  # "never" is unseen, so not counted
    assert evidence.tenth == pytest.approx(hits[BACKGROUND_RANK - 1].raw)
    assert hits[0].raw > evidence.tenth > 0.0
    # Asked for fewer than ten hits, the tenth is unknown: 0.
    assert index.search(query, k=3)[0].evidence.query.tenth == 0.0
    # Fewer than ten entries match: 0 too.
    assert index.search({"pad3": 1.0}, k=BACKGROUND_RANK)[0].evidence.query.tenth == 0.0


def test_evidence_of_added_and_bulk_entries_agree() -> None:
    documents = [(i, [f"w{i % 7}", f"v{i % 3}", "x"]) for i in range(30)]
    bulk = RecallIndex.from_documents(documents)
    grown = RecallIndex()
    for doc_id, doc_terms in documents:
        grown.add(doc_id, doc_terms)
    query = {"w3": 1.0, "v1": 0.5, "nope": 1.0}
    for a, b in zip(bulk.search(query, k=10), grown.search(query, k=10), strict=True):
        assert a.doc_id == b.doc_id
        assert a.evidence.query.background == pytest.approx(b.evidence.query.background)
        assert a.score == pytest.approx(b.score, rel=1e-5)


EVIDENCE = st.builds(
    Evidence,
    raw=st.floats(0.0, 1e4),
    query=st.builds(
        QueryEvidence,
        entries=st.integers(1, 10**6),
        known_weight=st.floats(0.0, 100.0),
        known_mass=st.floats(0.0, 1e3),
        unknown_weight=st.floats(0.0, 100.0),
        unseen_idf=st.floats(0.0, 20.0),
        background=st.floats(0.0, 1e3),
        spread=st.floats(0.0, 1e3),
        cjk_weight=st.floats(0.0, 200.0),
        names_seen=st.booleans(),
        names_unseen=st.booleans(),
        names_common=st.booleans(),
    ),
)


@given(EVIDENCE)
def test_relevance_is_a_finite_probability(evidence: Evidence) -> None:
    assert all(math.isfinite(x) for x in features(evidence))
    assert 0.0 <= relevance(evidence) <= 1.0


@dataclass(frozen=True)
class _Scored:
    doc_id: int
    score: float
    raw: float = 10.0


def test_gate_limits_threshold_and_relative_floor() -> None:
    hits = [_Scored(1, 0.95), _Scored(2, 0.9), _Scored(3, 0.19), _Scored(4, 0.8)]
    assert [h.doc_id for h in gate(hits)] == [1, 2]  # at the default, 0.9
    assert [h.doc_id for h in gate(hits, threshold=0.1)] == [1, 2, 3]
    assert [h.doc_id for h in gate(hits, limit=1)] == [1]
    assert gate([]) == []
    uneven = [_Scored(1, 0.95, 10.0), _Scored(2, 0.95, 7.0), _Scored(3, 0.95, 6.9)]
    assert [h.doc_id for h in gate(uneven)] == [1, 2]  # 6.9 < 0.7 x 10
    assert [h.doc_id for h in gate(uneven, relative=0.0)] == [1, 2, 3]


# --------------------------------------------------------------------------- names
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What book was Omar reading?", {"omar"}),
        ("Omar went to Lisbon.", {"lisbon"}),  # a sentence's first word is no cue
        ("We met. Omar said hi to Priya", {"priya"}),
        ('She said "Maybe" and left with Ines', {"ine"}),  # the stem, as in terms()
        ("What did I do on May 2nd and last Friday?", set()),  # calendar words
        ("I asked Mom and Dad about Kofi", {"kofi"}),  # kinship words
        ("what did ｏｍａｒ and Ｏｍａｒ say", {"omar"}),  # full-width is folded
        ("I use NASA data and an AI", set()),  # all-capitals: not a name
        ("What was Arjun's time, and Sofia’s?", {"arjun", "sofia"}),  # possessives
        ("I said Don't and O'Brien nodded", set()),  # contractions, apostrophe names
        ("上次和小明说的那件事", set()),  # CJK text has no capitalisation
        ("", set()),
    ],
)
def test_name_terms_table(text: str, expected: set[str]) -> None:
    assert name_terms(text) == expected
    assert expected <= set(terms(text))  # each is a term the index can know


def test_build_query_carries_the_message_names_only() -> None:
    query = build_query(
        message="Which city did Omar fly to?",
        turns=[ConversationTurn("I talked with Priya yesterday", "Nice, how is Priya?")],
    )
    assert query.names == {"omar"} and "omar" in query
    assert "priya" in query  # the turns still weigh in the ranking


def _pair_memory(name: str, friend: str) -> RecallIndex:
    texts = [
        f"{name}: I'm reading a novel about trees right now. → {friend}: Is it worth reading?",
        f"{friend}: I spent the evening reading on the couch. → {name}: Haha, same.",
        f"{name}: How was your week? → {friend}: Busy, work was long.",
        f"{friend}: We cooked pasta for dinner. → {name}: Sounds good.",
        f"{name}: The weather is awful today. → {friend}: Stay dry!",
        f"{friend}: I signed up for a pottery class. → {name}: How brave!",
    ]
    return RecallIndex.from_documents((i, terms(text)) for i, text in enumerate(texts, 1))


def test_a_question_naming_someone_the_memory_never_mentions_scores_lower() -> None:
    own, other = _pair_memory("Omar", "Bruno"), _pair_memory("Leila", "Hana")
    query = build_query(message="What novel was Omar reading?")
    mine, theirs = own.search(query, k=3)[0], other.search(query, k=3)[0]
    assert mine.doc_id == 1
    assert mine.evidence.query.names_seen and not mine.evidence.query.names_unseen
    assert theirs.evidence.query.names_unseen and not theirs.evidence.query.names_seen
    plain = dict(query)  # the same weights without the names: no name evidence
    assert mine.score > own.search(plain, k=3)[0].score
    assert theirs.score < other.search(plain, k=3)[0].score
    assert mine.score > theirs.score
    # A question that names nobody scores exactly as the weights alone do.
    unnamed = build_query(message="what novel was he reading?")
    assert unnamed.names == frozenset()
    assert own.search(unnamed, k=1)[0].score == own.search(dict(unnamed), k=1)[0].score


def test_a_participant_named_in_half_the_entries_is_common_a_title_in_one_is_not() -> None:
    own = _pair_memory("Omar", "Bruno")  # every entry is Omar's and Bruno's conversation
    query = build_query(message="What novel was Omar reading?")
    hit = own.search(query, k=1)[0]
    assert hit.evidence.query.names_common and hit.evidence.query.names_seen
    # The name is in every entry: it weighs nothing in the ranking (IDF 0), so without
    # the common feature the question would score as if it named nobody it knows.
    without = replace(hit.evidence, query=replace(hit.evidence.query, names_common=False))
    assert hit.score > relevance(without)
    titles = [
        "We watched Up at the cinema, what a film.",
        "I cooked rice and beans for dinner.",
        "The weather was grey all week long.",
        "My sister called about her new job.",
    ]
    index = RecallIndex.from_documents((i, terms(t)) for i, t in enumerate(titles, 1))
    titled = index.search(build_query(message="Did we like the film Up?"), k=1)[0]
    assert titled.evidence.query.names_seen and not titled.evidence.query.names_common
    # Exactly half counts; just below does not.
    chats = ["Kofi: my pottery class was fun", "Kofi: hello there", "rain today", "sunny today"]
    ask = build_query(message="what did Kofi say about the pottery?")
    half = RecallIndex.from_documents((i, terms(t)) for i, t in enumerate(chats, 1))
    assert half.search(ask, k=1)[0].evidence.query.names_common
    below = RecallIndex.from_documents((i, terms(t)) for i, t in enumerate([*chats, "cold"], 1))
    assert not below.search(ask, k=1)[0].evidence.query.names_common


def test_a_query_cut_keeps_the_known_terms_of_largest_weight_times_idf() -> None:
    # benchmarks/recall_eval.py --query-cuts measures these cuts (the product makes none).
    from benchmarks.recall import cut_query

    corpus = {i: ["c"] + (["b"] if i < 5 else []) + (["a"] if i == 0 else []) for i in range(20)}
    index = RecallIndex.from_documents(corpus.items())
    query = QueryTerms({"a": 0.2, "b": 1.0, "c": 3.0, "never": 1.0}, frozenset({"never"}))
    idf = dict(zip("abc", index.idf([1, 5, 20]).tolist(), strict=True))
    masses = {t: query[t] * idf[t] for t in "abc"}
    strongest = sorted(masses, key=lambda t: -masses[t])[:2]
    assert set(strongest) == {"a", "b"}  # "c" weighs most but is in every entry
    cut = cut_query(index, query, max_terms=2)
    assert set(cut) == {*strongest, "never"} and cut.names == query.names
    assert all(cut[t] == query[t] for t in cut)
    assert set(cut_query(index, query, drop_unseen=True)) == {"a", "b", "c"}
    assert dict(cut_query(index, query)) == dict(query)


def _python(script: str) -> subprocess.CompletedProcess[str]:
    """``script`` run by a fresh interpreter (numba has compiled nothing there yet);
    fails the test if it fails."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_the_search_loop_compiles_without_a_writable_cache() -> None:
    """A server whose code directory and home are read-only (no numba cache location)
    still starts and searches: the kernel is compiled in the process instead."""
    script = (
        "import numba.core.caching as caching\n"
        "caching.CacheImpl._locator_classes = []\n"  # as if no place were writable
        "from memory.recall.index import RecallIndex\n"
        "index = RecallIndex.from_documents([(1, ['a', 'b']), (2, ['b'])])\n"
        "print([doc_id for doc_id, _ in index.rank(['a', 'b'], k=2)])\n"
    )
    done = _python(script)
    assert done.stdout.strip() == "[1, 2]"


def test_warm_compiles_what_searches_use() -> None:
    """After ``warm()`` (``manage.py search_warm``, run by ``make serve``), searching a
    real index compiles nothing more: warm passed every argument type a search, an
    exclusion, dead entries, tails and ``holds`` pass (a fresh process, so that nothing
    else has compiled them before)."""
    script = (
        "import random\n"
        "from memory.recall import kernel\n"
        "from memory.recall.index import RecallIndex, warm\n"
        "warm()\n"
        "compiled = {f.__name__: list(f.signatures) for f in (kernel.top_k, kernel.holds)}\n"
        "rng = random.Random(5)\n"
        "words = [f'w{i}' for i in range(50)]\n"
        "index = RecallIndex.from_documents(\n"
        "    (i, rng.choices(words, k=12)) for i in range(1, 300)\n"
        ")\n"
        "for i in range(300, 340):\n"
        "    index.add(i, rng.choices(words, k=8))\n"
        "index.remove(7)\n"
        "hits = index.search({w: 1.0 for w in words[:9]}, k=5, exclude={3, 301})\n"
        "index.rank(words[3:6], k=3)\n"
        "index.holds([h.doc_id for h in hits] + [7], words[:12] + ['unseen'])\n"
        "after = {f.__name__: list(f.signatures) for f in (kernel.top_k, kernel.holds)}\n"
        "assert all(compiled.values()), compiled\n"
        "assert after == compiled, (compiled, after)\n"
        "print('ok')\n"
    )
    done = _python(script)
    assert done.stdout.strip() == "ok"
