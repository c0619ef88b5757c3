"""Lexical terms for episodic recall: CJK bigrams, unigrams and words; latin words.

The text is NFKC-normalised (full-width letters and digits become ASCII, compatibility
characters are unfolded) and lower-cased, then cut into runs:

* a run of CJK characters (Han ideographs, kana, Hangul) yields its overlapping character
  bigrams, then its characters as unigrams, then the words of three or more characters
  that the segmenter finds in it (``光合作用``, ``数据结构``). Bigrams carry most of the
  evidence and never depend on a dictionary; unigrams let "跳舞" meet "舞蹈"; whole words
  make a long word count more than the bigrams it happens to share with others.
* the segmenter is jieba's dictionary and algorithm as compiled in ``rjieba`` (jieba-rs,
  MIT, dictionary inside the wheel, no download, ~30x faster than the Python ``jieba``;
  ``benchmarks/recall_eval.py --tokenizers`` measures bigrams alone, jieba and rjieba). In
  a *query* it also says which bigrams are inside a word: a bigram that spans a word
  boundary (``的时``, ``出一``) weighs :data:`CROSS_WEIGHT` of a bigram inside a word,
  because such bigrams are mostly question phrasing that no entry shares.
* a run of letters and digits of any other script yields one word ("python", "3", "c");
  ``'`` and ``_`` split words. ASCII words are reduced by the Snowball English stemmer
  (``PyStemmer``, the Porter2 rules: ``questions`` -> ``question``, ``time`` stays
  ``time``).
* everything else (punctuation, spaces, symbols, emoji) separates runs and is dropped.

A short stop list removes the commonest English function words, Chinese function words
(pronoun + particle, conjunctions, fillers, vague references back such as 上次/那样)
and single-character particles. They carry almost no evidence but own the longest
postings lists, so dropping them makes search faster and keeps a query's weight on its
content words. The list is small, generic and not derived from any evaluation set.

Tokenisation is deterministic and independent of any corpus or locale, so the terms of a
recall entry are computed once, stored with the entry and re-indexed as they are;
:data:`TERMS_VERSION` changes whenever the terms of a text change, and entries stored
under another version are re-tokenised from their text when a scope is loaded.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from itertools import filterfalse

import rjieba
import Stemmer

from memory.memo import TextMemo

__all__ = [
    "CROSS_WEIGHT",
    "QUERY_DECAY",
    "QUERY_SATURATION",
    "STOP_TERMS",
    "TERMS_VERSION",
    "UNIGRAM_WEIGHT",
    "is_cjk_term",
    "is_cjk_unigram",
    "name_terms",
    "query_weights",
    "stem",
    "terms",
    "weighted_terms",
]

#: Stored with every entry's terms; bump it whenever :func:`terms` changes its output.
TERMS_VERSION = 2

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
    "上次 上回 之前 以前 刚才 那次 这次 一样 一份 一点 帮我 请你 麻烦 需要 再来 "
    "的 了 是 我 你 他 她 它 们 在 和 也 都 就 很 又 还 着 过 把 被 让 给 对 向 从 这 那 "
    "吗 呢 吧 啊 哦 嗯 呀 哈 么 之 与 及 或 其"
)
_ZH_STOP = frozenset(_ZH_STOP_WORDS.split())

#: Terms :func:`terms` drops: English function words, Chinese function words and
#: single-character particles.
STOP_TERMS: frozenset[str] = _EN_STOP | _ZH_STOP

#: Query weight of a CJK unigram relative to a bigram inside a word.
UNIGRAM_WEIGHT = 0.5
#: Query weight of a CJK bigram that spans a word boundary, relative to one inside a word.
CROSS_WEIGHT = 0.5
#: Query weight of a CJK word of three or more characters (on top of its bigrams).
WORD_WEIGHT = 1.0
#: Weight ratio between a query turn and the next more recent one.
QUERY_DECAY = 0.8
#: BM25 query-term saturation k3: a term seen x times weighs (k3 + 1) x / (k3 + x).
QUERY_SATURATION = 1.0
#: Words of at least this many characters become terms of their own.
_MIN_WORD = 3

_STEMMER = Stemmer.Stemmer("english")
# The segmenter; a module attribute so that benchmarks/recall_eval.py can compare others
# (None: bigrams alone, every bigram weighed as inside a word, no word terms).
_segment: Callable[[str], list[str]] | None = rjieba.cut


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball (Porter2) English stem of an ASCII word; other words unchanged.

    Words of three letters or fewer are kept as they are ("gas", "bus").
    """
    if len(word) <= 3 or not (word.isascii() and word.isalpha()):
        return word
    return str(_STEMMER.stemWord(word))


def is_cjk_unigram(term: str) -> bool:
    """Whether ``term`` is a single CJK character (weighted as a unigram in queries)."""
    return len(term) == 1 and _CJK_CHAR.match(term) is not None


def is_cjk_term(term: str) -> bool:
    """Whether ``term`` is a CJK term (a bigram, unigram or word of CJK characters)."""
    return _CJK_CHAR.match(term) is not None


def _cjk_terms(run: str) -> Iterator[tuple[str, float]]:
    """The terms of one CJK run with their query weights (see the module docstring)."""
    stop = STOP_TERMS
    if len(run) == 1:
        if run not in stop:
            yield run, UNIGRAM_WEIGHT
        return
    segment = _segment
    words = [] if segment is None else segment(run)
    # inside[i]: the bigram starting at character i lies within one segmented word.
    inside = [segment is None] * (len(run) - 1)
    position = 0
    for word in words:
        for i in range(position, position + len(word) - 1):
            inside[i] = True
        position += len(word)
    for i in range(len(run) - 1):
        bigram = run[i : i + 2]
        if bigram not in stop:
            yield bigram, 1.0 if inside[i] else CROSS_WEIGHT
    for char in run:
        if char not in stop:
            yield char, UNIGRAM_WEIGHT
    for word in words:
        if len(word) >= _MIN_WORD and word not in stop:
            yield word, WORD_WEIGHT


def weighted_terms(text: str) -> list[tuple[str, float]]:
    """The terms of ``text`` in text order, each with its weight as a query term."""
    normalised = unicodedata.normalize("NFKC", text).lower()
    out: list[tuple[str, float]] = []
    for match in _RUN.finditer(normalised):
        run = match.group()
        if _CJK_CHAR.match(run):
            out.extend(_cjk_terms(run))
        elif run not in STOP_TERMS:
            out.append((stem(run), 1.0))
    return out


def _cjk_plain_terms(run: str) -> list[str]:
    """:func:`_cjk_terms` without the weights (no word boundaries to work out): what an
    entry or a chunk stores, tokenised once per text and so on the write path's budget."""
    stop = STOP_TERMS
    if len(run) == 1:
        return [] if run in stop else [run]
    out = list(filterfalse(_is_stop, map(run.__getitem__, _bigram_slices(len(run)))))
    out += filterfalse(_is_stop, run)
    if _segment is not None:
        out += [word for word in _segment(run) if len(word) >= _MIN_WORD and word not in stop]
    return out


_is_stop = STOP_TERMS.__contains__


@lru_cache(maxsize=1024)
def _bigram_slices(length: int) -> tuple[slice, ...]:
    return tuple(slice(i, i + 2) for i in range(length - 1))


def terms(text: str) -> list[str]:
    """Return the recall terms of ``text``, in text order, duplicates kept: the terms of
    :func:`weighted_terms`, computed without their weights.

    >>> terms("出份Python试卷，共３题")
    ['出份', '出', '份', 'python', '试卷', '试', '卷', '共', '3', '题']
    """
    normalised = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    for match in _RUN.finditer(normalised):
        run = match.group()
        if _CJK_CHAR.match(run):
            out += _cjk_plain_terms(run)
        elif run not in STOP_TERMS:
            out.append(stem(run))
    return out


def _group(text: str) -> tuple[tuple[str, int, float], ...]:
    """``text``'s terms in order of first occurrence: (term, occurrences, largest weight)."""
    grouped: dict[str, list[float]] = {}
    for term, term_weight in weighted_terms(text):
        seen = grouped.get(term)
        if seen is None:
            grouped[term] = [1, term_weight]
        else:
            seen[0] += 1
            seen[1] = max(seen[1], term_weight)
    return tuple((term, int(n), weight) for term, (n, weight) in grouped.items())


# A conversation's query re-reads the same turns and summary on every run: their terms
# are memoised per process (texts are cut to a few hundred characters by the query).
_grouped_terms = TextMemo(_group, max_chars=1_000_000, max_text=4000)


# A capitalised word ("Omar", "Lisbon", "Omar's") that does not open a sentence: in English
# text a proper name ("Don't" is none). Calendar words and kinship terms used as names
# ("on May 2nd", "Mom said") are capitalised too but name nobody in particular.
_CAPITALISED = re.compile(r"(?<![\w'’])[A-Z][a-z]+(?=['’]s\b|(?![\w'’]))")
_SENTENCE_OPENERS = frozenset(".!?…:;\"“”'‘’([")
_NOT_NAME_WORDS = (
    "january february march april may june july august september october november "
    "december monday tuesday wednesday thursday friday saturday sunday mom dad mum mother "
    "father mommy daddy grandma grandpa granny mr mrs ms dr miss sir madam"
)
_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())


def name_terms(text: str) -> frozenset[str]:
    """The terms of the proper names in ``text``: capitalised Latin words that do not
    open a sentence (the first word of a text, or one after ``.!?:;`` or a quotation
    mark, is skipped), calendar and kinship words excepted.

    The recall gate asks whether a question about someone is asked of a memory that
    knows them (:class:`memory.recall.gating.QueryEvidence`). CJK text has no such cue
    and yields nothing.

    >>> sorted(name_terms("What book was Omar reading in Lisbon on May 2nd?"))
    ['lisbon', 'omar']
    """
    text = unicodedata.normalize("NFKC", text)  # full-width letters are names too
    found: set[str] = set()
    for match in _CAPITALISED.finditer(text):
        before = text[: match.start()].rstrip()
        if not before or before[-1] in _SENTENCE_OPENERS:
            continue
        word = match.group().lower()
        if word in _NOT_NAMES or word in STOP_TERMS:
            continue
        found.add(stem(word))
    return frozenset(found)


def query_weights(
    texts: str | Sequence[str],
    *,
    decay: float = QUERY_DECAY,
    turn_weights: Sequence[float] | None = None,
    saturation: float = QUERY_SATURATION,
) -> dict[str, float]:
    """Query term weights for a text, or for several texts given oldest first.

    An occurrence in the newest text counts its term weight (:func:`weighted_terms`), one
    text older ``decay`` times that, two older ``decay**2``, times the text's own weight
    from ``turn_weights`` if given (for example a lower weight for the assistant's
    turns). A term's summed count ``x`` is saturated as in BM25's query-term factor,
    ``(k3 + 1) x / (k3 + x)`` with ``k3 = saturation`` (a term repeated across turns
    counts more, but not linearly), scaled by the largest weight it had as a term.
    """
    if isinstance(texts, str):
        texts = [texts]
    if not 0.0 <= decay <= 1.0:
        raise ValueError("decay must be within [0, 1]")
    if turn_weights is not None and len(turn_weights) != len(texts):
        raise ValueError("turn_weights must have one weight per text")
    counts: dict[str, float] = {}
    kinds: dict[str, float] = {}
    age_weight = 1.0
    for position in range(len(texts) - 1, -1, -1):
        weight = age_weight * (1.0 if turn_weights is None else turn_weights[position])
        age_weight *= decay
        if weight <= 0.0:
            continue
        for term, occurrences, term_weight in _grouped_terms(texts[position]):
            count = counts.get(term)
            if count is None and occurrences <= 3:
                # The sum from 0.0 as one multiplication: w + w is 2w exactly, and
                # 2w + w rounds the exact 3w once, as w * 3 does.
                counts[term] = weight * occurrences
                kinds[term] = term_weight
                continue
            if count is None:
                count = 0.0
                kinds[term] = term_weight
            elif term_weight > kinds[term]:
                kinds[term] = term_weight
            for _ in range(occurrences):  # one addition per occurrence, as it always was
                count += weight
            counts[term] = count
    out: dict[str, float] = {}
    for term, x in counts.items():
        value = (saturation + 1.0) * x / (saturation + x) if saturation > 0 else min(x, 1.0)
        out[term] = value * kinds[term]
    return out
