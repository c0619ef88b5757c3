"""Lexical terms for episodic recall: CJK character bigrams plus latin words and numbers.

The text is NFKC-normalised (full-width letters and digits become ASCII, compatibility
characters are unfolded) and lower-cased. It is then cut into runs:

* a run of CJK characters (Han ideographs, kana, Hangul) yields its overlapping character
  bigrams; a run of a single character yields that character as a unigram, so that a
  one-character word ("诗", "树") can still be found;
* a run of letters and digits of any other script yields one word ("python", "3", "c");
  ``'`` and ``_`` split words;
* everything else (punctuation, spaces, symbols, emoji) separates runs and is dropped.

A short stop list removes the most common function words of English and the most common
function bigrams of Chinese (pronoun + particle, conjunctions, filler): they carry almost no
evidence, yet they occupy the longest postings lists, so dropping them makes search faster
and keeps a query's IDF-weighted mass on its content words. The list is deliberately
small and generic (it is not derived from any evaluation set).

Tokenisation is deterministic and does not depend on a locale or on any corpus, so the
terms of a recall entry can be computed once, stored, and re-indexed later.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

__all__ = ["STOP_TERMS", "is_cjk_term", "terms", "weighted_terms"]

# Han (URO, extension A, compatibility, extensions B+), kana, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
# A CJK run, or a run of word characters that are not CJK (letters and digits of any
# other script). "_" is a word character for \w and is excluded explicitly.
_RUN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RUN = re.compile(rf"[{_CJK}]")

_EN_STOP = frozenset(
    """
    a an the and or but if so as of to in on at by for from with about into over than then
    is am are was were be been being do does did done have has had having will would shall
    should can could may might must i me my mine we us our ours you your yours he him his
    she her hers it its they them their theirs this that these those there here what which
    who whom whose when where why how all any some no not nor too very just also only own
    s t d ll m re ve o y oh yes yeah ok okay hey hi really
    """.split()
)

_ZH_STOP = frozenset(
    """
    我们 你们 他们 她们 它们 我的 你的 他的 她的 它的 的话 的时 时候 这个 那个 一个 这些 那些
    这样 那样 什么 怎么 为什么 因为 所以 但是 可是 而且 并且 或者 还是 就是 不是 也是 都是
    可以 没有 已经 还有 如果 虽然 然后 自己 一下 一些 有点 真的 吗? 呢 吧 啊 了 的 是 我
    你 他 她 它 在 和 也 都 就 很 又 还 着 过 把 被 让 给 对 向 从 这 那 哦 嗯 呀 哈 哈哈
    """.split()
)

#: Terms dropped by :func:`terms` (English function words, Chinese function bigrams and
#: the most common single-character particles, which only appear as one-character runs).
STOP_TERMS: frozenset[str] = _EN_STOP | _ZH_STOP


def is_cjk_term(term: str) -> bool:
    """Whether ``term`` is a CJK unigram or bigram (as opposed to a latin word or number)."""
    return bool(_CJK_RUN.match(term))


def terms(text: str) -> list[str]:
    """Return the recall terms of ``text`` in text order (duplicates kept).

    >>> terms("出一份Python期末试卷，共３题")
    ['出一', '一份', 'python', '期末', '末试', '试卷', '共', '3', '题']
    """
    normalised = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    append = out.append
    stop = STOP_TERMS
    for match in _RUN.finditer(normalised):
        run = match.group()
        if _CJK_RUN.match(run):
            if len(run) == 1:
                if run not in stop:
                    append(run)
                continue
            for i in range(len(run) - 1):
                bigram = run[i : i + 2]
                if bigram not in stop:
                    append(bigram)
        elif run not in stop:
            append(run)
    return out


def weighted_terms(texts: Sequence[str], *, decay: float = 0.5) -> dict[str, float]:
    """Query term weights for a sequence of texts, oldest first, newest last.

    The newest text weighs 1 per occurrence, the one before it ``decay``, the one before
    that ``decay**2`` and so on: the current request matters most, earlier turns add
    context. ``decay=1`` treats all texts alike (a plain bag of terms).
    """
    if not 0.0 <= decay <= 1.0:
        raise ValueError("decay must be within [0, 1]")
    weights: dict[str, float] = {}
    weight = 1.0
    for text in reversed(texts):
        if weight <= 0.0:
            break
        for term in terms(text):
            weights[term] = weights.get(term, 0.0) + weight
        weight *= decay
    return weights


def term_counts(items: Iterable[str]) -> dict[str, int]:
    """Count the occurrences of each term (a plain bag of terms)."""
    counts: dict[str, int] = {}
    for term in items:
        counts[term] = counts.get(term, 0) + 1
    return counts
