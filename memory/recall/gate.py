"""The recall gate: is a hit relevant enough to inject? (placeholder, fitted below)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "COEFFICIENTS",
    "DEFAULT_THRESHOLD",
    "FEATURES",
    "GATE_LIMIT",
    "Evidence",
    "QueryEvidence",
    "features",
    "gate",
    "relevance",
]

#: Default gate threshold (a setting in the Django layer).
DEFAULT_THRESHOLD = 0.5
#: At most this many hits are injected.
GATE_LIMIT = 3


@dataclass(frozen=True, slots=True)
class QueryEvidence:
    """What a query brings to one scope (the same for every hit of the search)."""

    entries: int  # live entries in the scope
    known_weight: float  # summed weight of the query terms the scope has seen (idf > 0)
    known_mass: float  # their summed weight x IDF
    unknown_weight: float  # summed weight of the terms no entry contains (or idf 0)
    top_mass: float  # the largest weight x IDF of one query term
    background: float  # expected raw score of a typical entry
    spread: float  # its standard deviation (terms taken as independent)


@dataclass(frozen=True, slots=True)
class Evidence:
    """One hit's evidence: its raw BM25 and which of the query's terms it holds."""

    raw: float
    matched_weight: float  # summed weight of the informative query terms it contains
    matched_mass: float  # their summed weight x IDF
    query: QueryEvidence


FEATURES = ("bias",)
COEFFICIENTS: tuple[float, ...] = (0.0,)


def features(evidence: Evidence) -> tuple[float, ...]:
    """The gate's inputs, in the order of :data:`FEATURES` (the first is the bias)."""
    return (1.0,)


def relevance(evidence: Evidence) -> float:
    """The logistic combination of :func:`features` with :data:`COEFFICIENTS`."""
    z = sum(c * x for c, x in zip(COEFFICIENTS, features(evidence), strict=True))
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


class _Scored(Protocol):
    @property
    def score(self) -> float: ...


def gate[H: _Scored](
    hits: Sequence[H], *, threshold: float = DEFAULT_THRESHOLD, limit: int = GATE_LIMIT
) -> list[H]:
    """The hits to inject: among the ``limit`` best, those scoring at least ``threshold``."""
    return [hit for hit in hits[:limit] if hit.score >= threshold]
