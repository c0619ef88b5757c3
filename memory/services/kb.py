"""Knowledge base (L4) retrieval: search, the gate, and the injected section.

This module is the contract the read path (``kb_render``, passive injection) and the
``kb_search`` function tool of the run engine use:

* :func:`kb_search` finds the chunks a teacher may see, best first, each with the gate's
  verdict;
* :func:`kb_hits_render` turns hits into the ``[知识库检索结果]`` text: re-checked by the
  red line, sanitised, inside the knowledge base's own untrusted boundary, within a
  token budget;
* :func:`kb_render` is passive injection: the gated hits of the teacher's message.

Indexes (the recall machinery, ``memory.services.index_cache``): one in-memory BM25
index per agent for the documents shared with the agent's members (``visibility=agent``)
and one per teacher and agent for private documents. A search reads both and merges
them; each index is checked against its :class:`~memory.models.KBIndexState` version row
first, so every process answers as the database does, and the chunks found are fetched
by id with their document still ``ready``: a deleted document's chunks are never
returned, in any process, even by an index that has not caught up yet.

The gate: the recall gate's evidence model (:mod:`memory.recall.gating`: how much of the
query the index has never seen, how far the hit stands above the index's typical chunk,
the index's size), computed per index, with its own threshold ``KB_GATE`` and its own
limit ``KB_TOP_K``. No labelled knowledge-base data exists to fit other coefficients;
``benchmarks/kb.py`` reports how often it injects on related and unrelated messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Q

from memory import boundary
from memory.models import KBChunk, KBDocument, KBIndexState
from memory.recall import Hit, build_query, gate
from memory.redline import redact
from memory.render import EMPTY, Item, Rendered, render_list
from memory.scope import Scope
from memory.services.index_cache import IndexCache, IndexState, Loaded

# Hits ranked per index before merging (more than ``limit``: the gate looks at the top).
SEARCH_K = 10
# Indexes a process keeps in memory (least recently used dropped first).
CACHED_INDEXES = 64
# Tokens of one injected chunk (a chunk holds at most 500; three fit the 1500 budget).
EXCERPT_TOKENS = 450


@dataclass(frozen=True, slots=True)
class KBHit:
    chunk_id: int
    document_id: int
    title: str
    heading_path: str
    text: str  # red-line redacted chunk text
    score: float
    passes_gate: bool


@dataclass(frozen=True, slots=True)
class IndexKey:
    """One knowledge-base index: an agent's shared documents (``owner_id`` None) or one
    teacher's private documents with that agent."""

    tenant_id: int
    agent_id: int
    owner_id: int | None

    @classmethod
    def for_document(cls, document: KBDocument) -> IndexKey:
        private = document.visibility == KBDocument.Visibility.PRIVATE
        return cls(document.tenant_id, document.agent_id, document.owner_id if private else None)

    @classmethod
    def both(cls, scope: Scope) -> tuple[IndexKey, IndexKey]:
        """What ``scope``'s teacher may search: the shared index, then their own."""
        return (
            cls(scope.tenant_id, scope.agent_id, None),
            cls(scope.tenant_id, scope.agent_id, scope.owner_id),
        )

    def filter_kwargs(self) -> dict[str, int | None]:
        return {"tenant_id": self.tenant_id, "agent_id": self.agent_id}

    def state_filter(self) -> Q:
        owner = Q(owner__isnull=True) if self.owner_id is None else Q(owner_id=self.owner_id)
        return Q(tenant_id=self.tenant_id, agent_id=self.agent_id) & owner

    def chunk_filter(self) -> Q:
        owner = (
            Q(index_owner__isnull=True)
            if self.owner_id is None
            else Q(index_owner_id=self.owner_id)
        )
        return Q(tenant_id=self.tenant_id, agent_id=self.agent_id) & owner


def _state(key: IndexKey) -> IndexState:
    row = (
        KBIndexState.objects.filter(key.state_filter())
        .values_list("version", "chunk_count", "max_chunk_id")
        .first()
    )
    return IndexState(*row) if row else IndexState()


def _load(key: IndexKey, after_id: int) -> Loaded:
    rows = (
        KBChunk.objects.filter(key.chunk_filter(), pk__gt=after_id)
        .order_by("pk")
        .values_list("pk", "terms")
    )
    documents: list[tuple[int, Sequence[str]]] = []
    last = after_id
    for pk, stored in rows.iterator(chunk_size=5000):
        documents.append((pk, stored.split()))
        last = pk
    return documents, last


_INDEXES = IndexCache[IndexKey](capacity=CACHED_INDEXES, state=_state, load=_load)


def kb_cache_clear() -> None:
    _INDEXES.clear()


def _search_index(key: IndexKey, weights: dict[str, float]) -> tuple[list[Hit], set[int]]:
    """The index's best chunks and which of them pass its gate."""
    cached = _INDEXES.get(key)
    with cached.lock:
        if not len(cached.index):
            return [], set()
        hits = cached.index.search(weights, k=SEARCH_K)
    passing = {
        hit.doc_id for hit in gate(hits, threshold=settings.KB_GATE, limit=settings.KB_TOP_K)
    }
    return hits, passing


def kb_search(*, scope: Scope, query: str, limit: int = 5) -> list[KBHit]:
    """The best chunks for ``query`` that ``scope.owner_id`` may see, best first.

    Visibility: the agent's shared documents and the teacher's own private ones, never
    a colleague's private document. ``passes_gate`` marks the (at most ``KB_TOP_K``)
    hits that passive injection would use.
    """
    weights = build_query(message=query)
    if not weights or limit <= 0:
        return []
    ranked: list[Hit] = []
    passing: set[int] = set()
    for key in IndexKey.both(scope):
        hits, passed = _search_index(key, weights)
        ranked.extend(hits)
        passing |= passed
    # Scores are calibrated per index (the gate's estimate), raw BM25 is not: merge on
    # the score, ties to the stronger raw match, then the older chunk.
    ranked.sort(key=lambda hit: (-hit.score, -hit.raw, hit.doc_id))
    top = ranked[: max(limit, settings.KB_TOP_K)]
    rows = {
        row["pk"]: row
        for row in KBChunk.objects.filter(
            pk__in=[hit.doc_id for hit in top],
            tenant_id=scope.tenant_id,
            agent_id=scope.agent_id,
            document__status=KBDocument.Status.READY,
        )
        .filter(Q(index_owner__isnull=True) | Q(index_owner_id=scope.owner_id))
        .values("pk", "document_id", "document__title", "heading_path", "text")
    }
    out: list[KBHit] = []
    gated = 0
    for hit in top:
        row = rows.get(hit.doc_id)
        if row is None:  # deleted since the index was read
            continue
        passes = hit.doc_id in passing and gated < settings.KB_TOP_K
        gated += passes
        out.append(
            KBHit(
                chunk_id=hit.doc_id,
                document_id=row["document_id"],
                title=row["document__title"],
                heading_path=row["heading_path"],
                text=row["text"],
                score=float(hit.score),
                passes_gate=passes,
            )
        )
    return out[:limit]


def kb_hit_line(hit: KBHit) -> str:
    """How one hit reads in the injected text: source, headings, then the passage."""
    source = f"《{hit.title}》"
    if hit.heading_path:
        source += f" {hit.heading_path}"
    return f"{source}：{hit.text}"


def kb_hits_render(*, hits: Sequence[KBHit], budget: int) -> Rendered:
    """The hits as injected text: sanitised, inside the KB's untrusted boundary, within
    ``budget`` tokens (whole hits in the given order while they fit; ``ids`` are the
    chunk ids shown)."""
    if budget <= 0 or not hits:
        return EMPTY
    items = [
        # Redacted when stored; re-checked here like every injected memory (the rules
        # may have grown since), and the title and headings with it.
        Item(id=hit.chunk_id, text=" ".join(redact(kb_hit_line(hit)).text.split()))
        for hit in hits
    ]
    return render_list(
        header=boundary.KB_HEADER,
        footer=boundary.KB_FOOTER,
        items=items,
        budget=budget,
        item_cap=EXCERPT_TOKENS,
    )


def kb_render(*, scope: Scope, query: str, budget: int) -> Rendered:
    """The ``[知识库检索结果]`` section: the gated hits of ``kb_search`` (nothing when
    nothing in the knowledge base is relevant)."""
    if budget <= 0:
        return EMPTY
    hits = [hit for hit in kb_search(scope=scope, query=query) if hit.passes_gate]
    return kb_hits_render(hits=hits, budget=budget)
