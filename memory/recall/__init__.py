"""L3 episodic recall: lexical terms, a BM25 index per memory scope, a calibrated gate.

Pure Python and numpy, no Django: the models layer stores each entry's terms and feeds
them to :class:`RecallIndex`.
"""

from memory.recall.index import DEFAULT_THRESHOLD, GATE_LIMIT, Hit, RecallIndex, gate
from memory.recall.tokenize import query_weights, terms

__all__ = [
    "DEFAULT_THRESHOLD",
    "GATE_LIMIT",
    "Hit",
    "RecallIndex",
    "gate",
    "query_weights",
    "terms",
]
