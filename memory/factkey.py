"""Fact identity: normalisation and near-equality of short fact texts. Pure."""

from __future__ import annotations

import re

from memory.textview import fold

_NOISE = re.compile(r"[\s\W_]+", re.UNICODE)
# Leading subjects that do not change what a fact says: "老师教八年级" == "我教八年级".
_SUBJECT = re.compile(r"^(?:该老师|这位老师|老师|用户|教师|我们|我)")

NEAR_EQUAL_JACCARD = 0.8


def fact_key(text: str) -> str:
    """The case-folded text view without punctuation, spaces or a leading subject.

    The view (:mod:`memory.textview`) is the one the red line and the sanitizer see, so
    a fact key never keeps a character they drop.
    """
    text = _NOISE.sub("", fold(text))
    return _SUBJECT.sub("", text)[:300]


def _bigrams(key: str) -> set[str]:
    return {key[i : i + 2] for i in range(len(key) - 1)} or {key}


def near_equal(a: str, b: str) -> bool:
    """Same fact in other words: equal keys, one containing the other, or 80% bigrams."""
    ka, kb = fact_key(a), fact_key(b)
    if not ka or not kb:
        return ka == kb
    if ka == kb:
        return True
    shorter, longer = sorted((ka, kb), key=len)
    if len(shorter) >= 4 and shorter in longer and len(shorter) / len(longer) >= 0.6:
        return True
    x, y = _bigrams(ka), _bigrams(kb)
    return len(x & y) / len(x | y) >= NEAR_EQUAL_JACCARD


def evidence_in(evidence: str, source: str) -> bool:
    """Whether ``evidence`` is quoted from ``source`` (ignoring spacing and punctuation)."""
    quote = fact_key_keep_subject(evidence)
    return len(quote) >= 2 and quote in fact_key_keep_subject(source)


def fact_key_keep_subject(text: str) -> str:
    return _NOISE.sub("", fold(text))
