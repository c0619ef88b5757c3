"""Knowledge base (L4) retrieval: the contract the read path and the kb_search tool use.

``kb_search`` finds the chunks a teacher may see (documents of the agent shared with its
members, and the teacher's own private ones); ``kb_hits_render`` turns hits into the
injected ``[知识库检索结果]`` text; ``kb_render`` (passive injection) is built on both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.render import EMPTY, Rendered
from memory.scope import Scope


@dataclass(frozen=True, slots=True)
class KBHit:
    chunk_id: int
    document_id: int
    title: str
    heading_path: str
    text: str  # red-line redacted chunk text
    score: float
    passes_gate: bool


def kb_search(*, scope: Scope, query: str, limit: int = 5) -> list[KBHit]:
    """The best chunks for ``query`` that ``scope.owner_id`` may see, best first."""
    return []


def kb_hits_render(*, hits: Sequence[KBHit], budget: int) -> Rendered:
    """The hits as injected text: sanitised, inside the KB's untrusted boundary, within
    ``budget`` tokens."""
    return EMPTY


def kb_render(*, scope: Scope, query: str, budget: int) -> Rendered:
    """The ``[知识库检索结果]`` section: the gated hits of ``kb_search``."""
    if budget <= 0:
        return EMPTY
    hits = [hit for hit in kb_search(scope=scope, query=query) if hit.passes_gate]
    return kb_hits_render(hits=hits, budget=budget)
