"""Today's recall (before the gate v2), frozen for side-by-side figures.

The tokenizer (CJK bigrams + half-weight unigrams, a light suffix stemmer) and the
calibrated score with its fixed prior (``PRIOR_TERMS`` 8 rarest unmatched terms,
``FULL_SHARE`` 0.75, gate 0.2) exactly as they shipped; only ``benchmarks/recall_eval.py``
uses this module.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

# Han (URO, extension A, compatibility, extensions B and later), kana, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
# A CJK run, or a run of word characters that are not CJK ("_" excluded explicitly).
_RUN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_CHAR = re.compile(rf"[{_CJK}]")

_EN_STOP_WORDS = (
    "a an the and or but if so as of to in on at by for from with about into over than "
    "then is am are was were be been being do does did done have has had having will "
    "would shall should can could may might must i me my mine we us our ours you your "
    "yours he him his she her hers it its they them their theirs this that these those "
    "there here what which who whom whose when where why how all any some no not nor too "
    "very just also only own s t d ll m re ve o y oh yes yeah ok okay hey hi really"
)
_EN_STOP = frozenset(_EN_STOP_WORDS.split())

_ZH_STOP_WORDS = (
    "我们 你们 他们 她们 它们 我的 你的 他的 她的 它的 的话 的时 时候 这个 那个 一个 这些 "
    "那些 这样 那样 什么 怎么 因为 所以 但是 可是 而且 并且 或者 还是 就是 不是 也是 都是 "
    "可以 没有 已经 还有 如果 虽然 然后 自己 一下 一些 有点 真的 "
    "的 了 是 我 你 他 她 它 们 在 和 也 都 就 很 又 还 着 过 把 被 让 给 对 向 从 这 那 "
    "吗 呢 吧 啊 哦 嗯 呀 哈 么 之 与 及 或 其"
)
_ZH_STOP = frozenset(_ZH_STOP_WORDS.split())

#: Terms :func:`terms` drops: English function words, Chinese function bigrams and
#: single-character particles.
STOP_TERMS: frozenset[str] = _EN_STOP | _ZH_STOP

#: Query weight of a CJK unigram relative to a bigram ("a character is half a word").
UNIGRAM_WEIGHT = 0.5
#: Weight ratio between a query turn and the next more recent one.
QUERY_DECAY = 0.8
#: BM25 query-term saturation k3: a term seen x times weighs (k3 + 1) x / (k3 + x).
QUERY_SATURATION = 1.0

_SUFFIXES = ("ing", "ed", "es", "s", "e")


def stem(word: str) -> str:
    """Strip one plural or verb suffix from an ASCII word of more than three letters.

    ``ies -> y``; then the first of ``ing``, ``ed``, ``es``, ``s``, ``e`` that leaves at
    least three letters (not ``s`` after ``ss``/``us``/``is``), and a doubled final
    consonant is undoubled (``running -> run``), except ``ll``/``ss``/``zz``.
    """
    if len(word) <= 3 or not (word.isascii() and word.isalpha()):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            return word
    return word


def is_cjk_unigram(term: str) -> bool:
    """Whether ``term`` is a single CJK character (weighted as a unigram in queries)."""
    return len(term) == 1 and _CJK_CHAR.match(term) is not None


def terms(text: str) -> list[str]:
    """Return the recall terms of ``text``, in text order, duplicates kept.

    >>> terms("出份Python试卷，共３题")
    ['出份', '出', '份', 'python', '试卷', '试', '卷', '共', '3', '题']
    """
    normalised = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    append = out.append
    stop = STOP_TERMS
    for match in _RUN.finditer(normalised):
        run = match.group()
        if _CJK_CHAR.match(run):
            for i in range(len(run) - 1):
                bigram = run[i : i + 2]
                if bigram not in stop:
                    append(bigram)
            for char in run:
                if char not in stop:
                    append(char)
        elif run not in stop:
            append(stem(run))
    return out


def query_weights(
    texts: str | Sequence[str],
    *,
    decay: float = QUERY_DECAY,
    turn_weights: Sequence[float] | None = None,
    unigram_weight: float = UNIGRAM_WEIGHT,
    saturation: float = QUERY_SATURATION,
) -> dict[str, float]:
    """Query term weights for a text, or for several turns given oldest first.

    An occurrence in the newest turn counts 1, one turn older ``decay``, two turns older
    ``decay**2``, times the turn's own weight from ``turn_weights`` if given (for example
    a lower weight for the assistant's turns). A term's summed count ``x`` is saturated as
    in BM25's query-term factor, ``(k3 + 1) x / (k3 + x)`` with ``k3 = saturation`` (a
    term repeated across turns counts more, but not linearly), and a CJK unigram is then
    scaled by ``unigram_weight``.
    """
    if isinstance(texts, str):
        texts = [texts]
    if not 0.0 <= decay <= 1.0:
        raise ValueError("decay must be within [0, 1]")
    if turn_weights is not None and len(turn_weights) != len(texts):
        raise ValueError("turn_weights must have one weight per text")
    counts: dict[str, float] = {}
    age_weight = 1.0
    for position in range(len(texts) - 1, -1, -1):
        weight = age_weight * (1.0 if turn_weights is None else turn_weights[position])
        age_weight *= decay
        if weight <= 0.0:
            continue
        for term in terms(texts[position]):
            counts[term] = counts.get(term, 0.0) + weight
    out: dict[str, float] = {}
    for term, x in counts.items():
        value = (saturation + 1.0) * x / (saturation + x) if saturation > 0 else min(x, 1.0)
        if is_cjk_unigram(term):
            value *= unigram_weight
        out[term] = value
    return out


PRIOR_TERMS = 8.0
FULL_SHARE = 0.75
THRESHOLD = 0.2


def legacy_scores(index: Any, weights: dict[str, float], k: int) -> list[tuple[int, float]]:
    """The top ``k`` of a :class:`RecallIndex` built on legacy terms, with today's score:
    ``min(1, raw / (FULL_SHARE * (Q_L + PRIOR_TERMS * idf0)))`` (see the old index
    docstring: ``Q_L`` sums the ``L`` largest ``w idf`` of the query, unknown terms at
    ``idf0``, ``L`` the average number of distinct terms of an entry)."""
    hits = index.search(weights, k=k)
    if not hits:
        return []
    idf0 = float(index.idf(0))
    masses = []
    for term, weight in weights.items():
        df = index.document_frequency(term)
        masses.append(weight * (float(index.idf(df)) if df else idf0))
    n_distinct = max(1, round(index._n_postings / index._n_live))
    masses = sorted(masses, reverse=True)[:n_distinct]
    denominator = FULL_SHARE * (sum(masses) + PRIOR_TERMS * idf0)
    return [(hit.doc_id, min(1.0, hit.raw / denominator)) for hit in hits]
