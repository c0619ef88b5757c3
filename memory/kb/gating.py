"""The knowledge-base gate: does a passage hold what the question is about?

Recall's gate asks whether a past run stands out from the rest of a teacher's memory;
a knowledge base is different: one teacher may have a single short document, and the
question is whether a passage answers, not whether it is unusual. So the KB gate
measures **coverage**: the share of the question's evidence that the passage holds.

Each query term ``t`` (weights from :func:`memory.recall.build_query`: words, bigrams,
unigrams) weighs ``w_t x idf_t`` in the index searched, a term that no passage holds at
the IDF of an unseen term (the most informative there is: a question about something
the knowledge base has never seen is not answered by it), a term in about half of the
passages or more at 0 (it tells nothing). A passage's coverage is the weight of the
terms it holds over the weight of all of them, in [0, 1].

A hit passes when its coverage is at least the threshold (``KB_GATE``), its BM25 is at
least :data:`RELATIVE_FLOOR` of the best hit's in the same index (a much weaker
neighbour of a clear answer is noise), and it is among the first ``KB_TOP_K``.
``benchmarks/kb.py`` reports how often it passes for related and unrelated messages.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from memory.recall import RecallIndex

__all__ = ["DEFAULT_THRESHOLD", "RELATIVE_FLOOR", "coverage", "coverages", "query_masses"]

DEFAULT_THRESHOLD = 0.25
RELATIVE_FLOOR = 0.7


def query_masses(weights: Mapping[str, float], index: RecallIndex) -> dict[str, float]:
    """Each query term's evidence in ``index``: its weight x its IDF there."""
    if not weights:
        return {}
    query_terms = list(weights)
    dfs = [index.document_frequency(term) for term in query_terms]
    idfs = index.idf(np.asarray(dfs)).tolist()
    return {
        term: weights[term] * idf
        for term, idf in zip(query_terms, idfs, strict=True)
        if idf > 0.0 and weights[term] > 0.0
    }


def coverage(masses: Mapping[str, float], passage_terms: Collection[str]) -> float:
    """The share of the query's evidence the passage holds, in [0, 1]."""
    total = sum(masses.values())
    if total <= 0.0:
        return 0.0
    held = sum(mass for term, mass in masses.items() if term in passage_terms)
    return held / total


def coverages(
    masses: Mapping[str, float], index: RecallIndex, doc_ids: Sequence[int]
) -> list[float]:
    """:func:`coverage` of several indexed passages at once, from the index's postings."""
    total = sum(masses.values())
    if total <= 0.0 or not doc_ids:
        return [0.0] * len(doc_ids)
    query_terms = list(masses)
    weights = np.asarray([masses[t] for t in query_terms])
    held = index.holds(doc_ids, query_terms)
    return (held @ weights / total).tolist()
