"""L3 episodic recall: lexical terms, the query, a BM25 index per memory scope, the gate.

Pure Python and numpy, no Django: the models layer stores each entry's terms and feeds
them to :class:`RecallIndex`; :func:`build_query` turns a conversation into query weights.
"""

from memory.recall.gating import DEFAULT_THRESHOLD, GATE_LIMIT, Evidence, gate
from memory.recall.index import Hit, RecallIndex
from memory.recall.query import ConversationTurn, build_query, entry_text
from memory.recall.tokenize import TERMS_VERSION, terms

__all__ = [
    "DEFAULT_THRESHOLD",
    "GATE_LIMIT",
    "TERMS_VERSION",
    "ConversationTurn",
    "Evidence",
    "Hit",
    "RecallIndex",
    "build_query",
    "entry_text",
    "gate",
    "terms",
]
