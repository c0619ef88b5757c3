"""The recall gate: is a hit worth injecting? A small logistic model over the evidence.

What the threshold means
    A hit's score is a logistic estimate, in [0, 1], that it is a relevant memory of the
    asker's own rather than the best match in a memory that holds nothing on the
    question. It was fitted on development data (``benchmarks/recall_eval.py --fit``:
    MADial-Bench zh and en and a generated teacher-style set, each set weighing the same;
    positives are relevant entries in the asker's own top 3, negatives the top 3 of the
    same question asked against another person's memory and of questions with no
    relevant entry). The read path injects the top :data:`GATE_LIMIT` hits whose score
    is at least the threshold (and whose raw score is at least :data:`RELATIVE_FLOOR` of
    the best hit's) (the ``RECALL_GATE`` setting, default
    :data:`DEFAULT_THRESHOLD` = 0.6: the lowest value on a 0.05 grid whose false
    injection, averaged over the development sets, is at most 5 %). Raising it trades
    relevant injections for fewer false ones; ``recall_eval.py`` prints that trade-off.

The features (:func:`features`), each computed by :class:`memory.recall.RecallIndex` for
the scope searched, so that the gate is calibrated per query and per scope (a query's
informative terms are the ones the scope holds, each weighing its query weight x IDF):

``unseen``
    The share of the query's weight that no entry of the scope contains. Unseen terms
    take no part in the ranking; here their weight is discounted by the fitted
    coefficient, not counted at full IDF: a question about things this memory has never
    seen (a name, a topic) is unlikely to be answered by it, but phrasing that no entry
    shares costs little. Terms in half the entries or more (IDF 0) count nowhere.
``standing``
    ``log(1 + z)``, ``z`` = how many standard deviations the hit's raw BM25 stands above
    what a typical entry of the scope would score (each query term held with probability
    df / N, independently). One rare shared word makes a large ``z`` only in a scope
    where many entries could have matched it.
``scope_size``
    ``log(1 + N)``. The same match stands more standard deviations above the background
    in a larger scope (for one rare term ``z`` grows about as the square root of N); the
    fitted weight of this feature is negative and takes that growth back, so the score
    asks how far above the background a hit stands *for a scope of its size*. A scope of
    one entry has no background to stand above (spread 0): its score is the model's
    value for standing 0, below the default threshold, so it never injects.

The model is four numbers (:data:`COEFFICIENTS`); they are refitted and printed by the
benchmark, with leave-one-set-out and held-back figures. Also measured and left out
(no gain once these are known, or a weight whose sign changed between fits): the share
of the query's IDF mass the hit holds, the number of query terms it holds, the rarest
term it holds, its raw score, and its ratio to the mean of the hits ranked 4-10. The
first three needed a per-hit lookup of the query's terms (~0.4 ms at 100k entries).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

__all__ = [
    "COEFFICIENTS",
    "DEFAULT_THRESHOLD",
    "FEATURES",
    "GATE_LIMIT",
    "RELATIVE_FLOOR",
    "Evidence",
    "QueryEvidence",
    "feature_rows",
    "features",
    "gate",
    "relevance",
    "relevance_many",
]

#: Default gate threshold (the ``RECALL_GATE`` setting in the Django layer).
DEFAULT_THRESHOLD = 0.6
#: At most this many hits are injected.
GATE_LIMIT = 3
#: A hit below this share of the best hit's raw score is not injected: when one past run
#: clearly answers, its much weaker neighbours are noise (they pass the threshold on the
#: query's evidence as a whole, not on their own).
RELATIVE_FLOOR = 0.7
_Z_CAP = 1e6


@dataclass(frozen=True, slots=True)
class QueryEvidence:
    """What a query brings to one scope (the same for every hit of the search)."""

    entries: int  # live entries in the scope
    known_weight: float  # summed weight of the query terms the scope has seen (idf > 0)
    known_mass: float  # their summed weight x IDF
    unknown_weight: float  # summed weight of the terms no entry contains
    unseen_idf: float  # the IDF of a term that no entry contains
    background: float  # expected raw score of a typical entry
    spread: float  # its standard deviation (terms taken as independent)


@dataclass(frozen=True, slots=True)
class Evidence:
    """One hit's evidence: its raw BM25 and what the query brings to the scope."""

    raw: float
    query: QueryEvidence


FEATURES = ("bias", "unseen", "standing", "scope_size")
#: Fitted by ``benchmarks/recall_eval.py --fit`` (weighted, L2-regularised logistic
#: regression on the development parts of the three sets).
COEFFICIENTS: tuple[float, ...] = (1.22, -4.05, 2.01, -0.84)


def features(evidence: Evidence) -> tuple[float, ...]:
    """The gate's inputs, in the order of :data:`FEATURES` (the first is the bias)."""
    return tuple(float(x) for x in feature_rows(np.asarray([evidence.raw]), evidence.query)[0])


def feature_rows(raws: npt.NDArray[np.float64], query: QueryEvidence) -> npt.NDArray[np.float64]:
    """:func:`features` for several hits of one query at once (one row per raw score)."""
    total_weight = query.known_weight + query.unknown_weight
    unseen = query.unknown_weight / total_weight if total_weight > 0 else 1.0
    if query.spread > 0:
        # (capped: a spread of almost nothing would make any match infinitely unusual)
        with np.errstate(over="ignore"):
            z = np.minimum(_Z_CAP, (raws - query.background) / query.spread)
    else:
        z = np.zeros(len(raws))
    out = np.empty((len(raws), len(FEATURES)))
    out[:, 0] = 1.0
    out[:, 1] = unseen
    out[:, 2] = np.log1p(np.maximum(0.0, z))
    out[:, 3] = math.log1p(query.entries)
    return out


def relevance(evidence: Evidence) -> float:
    """The gate's score in [0, 1]: the logistic of :func:`features` x :data:`COEFFICIENTS`."""
    return float(relevance_many(np.asarray([evidence.raw]), evidence.query)[0])


def relevance_many(raws: npt.NDArray[np.float64], query: QueryEvidence) -> npt.NDArray[np.float64]:
    """:func:`relevance` for several hits of one query (the index scores its hits so)."""
    logit = feature_rows(raws, query) @ np.asarray(COEFFICIENTS)
    return 1.0 / (1.0 + np.exp(-np.clip(logit, -50.0, 50.0)))


class _Scored(Protocol):
    @property
    def score(self) -> float: ...

    @property
    def raw(self) -> float: ...


def gate[H: _Scored](
    hits: Sequence[H],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    limit: int = GATE_LIMIT,
    relative: float = RELATIVE_FLOOR,
) -> list[H]:
    """The hits to inject: among the ``limit`` best, those scoring at least ``threshold``
    whose raw BM25 is at least ``relative`` times the best hit's."""
    if not hits:
        return []
    floor = relative * hits[0].raw
    return [hit for hit in hits[:limit] if hit.score >= threshold and hit.raw >= floor]
