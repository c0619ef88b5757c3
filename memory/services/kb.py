"""Knowledge base (L4) retrieval: search, the gate, and the injected section.

This module is the contract the read path (``kb_render``, passive injection) and the
``kb_search`` function tool of the run engine use:

* :func:`kb_search` finds the chunks a teacher may see, best first, each with the gate's
  verdict;
* :func:`kb_hits_render` turns hits into the ``[知识库检索结果]`` text: re-checked by the
  red line, sanitised, inside the knowledge base's own untrusted boundary, within a
  token budget;
* :func:`kb_render` is passive injection: the gated hits of the teacher's message
  (:func:`kb_plan` the same in two steps, for the read path, which reads the passages
  with recall's entries in one query).

Indexes (the recall machinery, ``memory.services.index_cache``): one in-memory BM25
index per agent for the documents shared with the agent's members (``visibility=agent``)
and one per teacher and agent for private documents. A search reads both and merges
them; each index is checked against its :class:`~memory.models.KBIndexState` version row
first, so every process answers as the database does, and the chunks found are fetched
by id with their document still ``ready``: a deleted document's chunks are never
returned, in any process, even by an index that has not caught up yet.

The gate (:mod:`memory.kb.gating`): a chunk is injected when it holds at least
``KB_GATE`` of the question's evidence (coverage), stands near the best match of its
index and is among the first ``KB_TOP_K``; ``benchmarks/kb.py`` reports how often it
passes for related and unrelated messages.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Q

from agents.rows import fetch_all
from memory import boundary
from memory.kb.gating import RELATIVE_FLOOR, coverages, query_masses
from memory.models import KBChunk, KBDocument, KBIndexState
from memory.recall import build_query
from memory.redline import redact
from memory.render import EMPTY, Item, Line, Rendered, list_line, list_lines, render_lines
from memory.scope import Scope
from memory.services.index_cache import IndexCache, IndexState, Loaded
from memory.stored import prepared_stamp

# Tokens of one injected chunk (a chunk holds at most 500; three fit the 1500 budget).
EXCERPT_TOKENS = 450
# The version of an injected line's format (kb_hit_line, _render_line): part of the
# stamp of a line prepared when the chunk was written. Bump it with any change to them
# (the red line, the sanitiser and the token counter are in the stamp by themselves).
LINE_FORMAT = "2"  # 2: ``tokens`` counts the line break after the line (render.count_line)


@dataclass(frozen=True, slots=True)
class PreparedLine:
    """A chunk's injected line as prepared when the chunk was written, and its stamp."""

    text: str
    tokens: int
    cut: bool
    stamp: str


@dataclass(frozen=True, slots=True)
class KBHit:
    chunk_id: int
    document_id: int
    title: str
    heading_path: str
    text: str  # red-line redacted chunk text
    score: float
    passes_gate: bool
    # The line stored with the chunk (used only while its stamp holds).
    prepared: PreparedLine | None = field(default=None, repr=False, compare=False)


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
    return _states(key.tenant_id, key.agent_id, (key.owner_id,))[key.owner_id]


def _states(
    tenant_id: int, agent_id: int, owners: tuple[int | None, ...]
) -> dict[int | None, IndexState]:
    """The version rows of an agent's indexes, in one indexed query.

    Plain SQL: this read precedes every search (the read path's included), and building
    the equivalent ORM query costs more than running it.
    """
    table = KBIndexState._meta.db_table
    private = [owner for owner in owners if owner is not None]
    clauses = ["owner_id IS NULL"] if None in owners else []
    if private:
        clauses.append(f"owner_id IN ({', '.join(['%s'] * len(private))})")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT owner_id, id, version, chunk_count, max_chunk_id FROM {table} "
            f"WHERE tenant_id = %s AND agent_id = %s AND ({' OR '.join(clauses)})",
            [tenant_id, agent_id, *private],
        )
        found = {owner: IndexState(*state) for owner, *state in cursor.fetchall()}
    return {owner: found.get(owner, IndexState()) for owner in owners}


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


_INDEXES = IndexCache[IndexKey](
    capacity=settings.MEMORY_INDEX_CACHE_KEYS,
    max_entries=settings.MEMORY_INDEX_CACHE_ENTRIES,
    state=_state,
    load=_load,
)


def kb_cache_clear() -> None:
    _INDEXES.clear()
    with _LINES_LOCK:
        _LINES.clear()


@dataclass(frozen=True, slots=True)
class _Candidate:
    chunk_id: int
    raw: float
    score: float  # the gate's coverage of the query
    eligible: bool  # among its index's top KB_TOP_K and above its relative floor


def _search_index(
    key: IndexKey, state: IndexState, weights: dict[str, float], k: int
) -> list[_Candidate]:
    """The index's ``k`` best chunks by BM25, with their coverage of the query."""
    cached = _INDEXES.get(key, state=state)
    with cached.lock:
        if not len(cached.index):
            return []
        hits = cached.index.rank(weights, k=k)
        if not hits:
            return []
        scores = coverages(
            query_masses(weights, cached.index), cached.index, [doc_id for doc_id, _ in hits]
        )
    floor = RELATIVE_FLOOR * hits[0][1]
    return [
        _Candidate(doc_id, raw, score, rank < settings.KB_TOP_K and raw >= floor)
        for rank, ((doc_id, raw), score) in enumerate(zip(hits, scores, strict=True))
    ]


@dataclass(frozen=True, slots=True)
class _ChunkRow:
    document_id: int
    title: str
    heading_path: str
    text: str
    prepared: PreparedLine | None = None


# The columns of :func:`kb_chunk_rows_query`, in the order :func:`kb_chunk_rows` reads.
CHUNK_ROW_COLUMNS = (
    "c.id",
    "c.document_id",
    "d.title",
    "c.heading_path",
    "c.text",
    "c.line",
    "c.line_tokens",
    "c.line_cut",
    "c.line_stamp",
    "c.tenant_id",
    "c.agent_id",
    "c.index_owner_id",
    "d.status",
)


def kb_chunk_rows_query(chunk_ids: Sequence[int]) -> tuple[str, list[int]]:
    """The SQL (and its parameters) that reads the rows of ``chunk_ids`` (not empty) for
    :func:`kb_chunk_rows`, for a caller that reads them with other rows (the read path).

    Looked up by primary key; the scope, visibility and status are checked on the few
    rows returned (:func:`kb_chunk_rows`). Plain SQL for the reason given at
    :func:`_states`.
    """
    chunk = KBChunk._meta.db_table
    document = KBDocument._meta.db_table
    return (
        f"SELECT {', '.join(CHUNK_ROW_COLUMNS)} FROM {chunk} c "
        f"JOIN {document} d ON d.id = c.document_id "
        f"WHERE c.id IN ({', '.join(['%s'] * len(chunk_ids))})",
        list(chunk_ids),
    )


def kb_chunk_rows(scope: Scope, rows: Iterable[Sequence[Any]]) -> dict[int, _ChunkRow]:
    """The rows read by :func:`kb_chunk_rows_query` that ``scope``'s teacher may see, of
    ready documents, by chunk id."""
    return {
        pk: _ChunkRow(
            document_id,
            title,
            heading_path,
            text,
            PreparedLine(line, line_tokens, bool(cut), stamp) if stamp else None,
        )
        for (
            pk,
            document_id,
            title,
            heading_path,
            text,
            line,
            line_tokens,
            cut,
            stamp,
            tenant_id,
            agent_id,
            owner,
            status,
        ) in rows
        if tenant_id == scope.tenant_id
        and agent_id == scope.agent_id
        and owner in (None, scope.owner_id)
        and status == KBDocument.Status.READY
    }


def _chunk_rows(scope: Scope, chunk_ids: list[int]) -> dict[int, _ChunkRow]:
    """The chunks among ``chunk_ids`` that ``scope``'s teacher may see, of ready documents."""
    if not chunk_ids:
        return {}
    return kb_chunk_rows(scope, fetch_all(*kb_chunk_rows_query(chunk_ids)))


KBStates = dict[int | None, IndexState]


def kb_index_states_query(scope: Scope) -> tuple[str, list[int]]:
    """The SQL (and its parameters) of :func:`_states` for ``scope``'s two indexes, for a
    caller that reads them together with other version rows (the read path).

    Columns: owner_id, id, version, chunk_count, max_chunk_id.
    """
    return (
        "SELECT owner_id, id, version, chunk_count, max_chunk_id "
        f"FROM {KBIndexState._meta.db_table} "
        "WHERE tenant_id = %s AND agent_id = %s AND (owner_id IS NULL OR owner_id = %s)",
        [scope.tenant_id, scope.agent_id, scope.owner_id],
    )


def kb_search(
    *, scope: Scope, query: str, limit: int = 5, states: KBStates | None = None
) -> list[KBHit]:
    """The best chunks for ``query`` that ``scope.owner_id`` may see, best first.

    Visibility: the agent's shared documents and the teacher's own private ones, never
    a colleague's private document. ``score`` is the gate's coverage (the share of the
    question's evidence the chunk holds, :mod:`memory.kb.gating`); ``passes_gate``
    marks the (at most ``KB_TOP_K``) hits that passive injection would use. ``states``:
    the indexes' version rows (by owner id, None for the shared one) if the caller has
    just read them; else they are read here.
    """
    if limit <= 0:
        return []
    candidates = _candidates(scope, query, states, k=max(limit, settings.KB_TOP_K))
    # A few spare for chunks deleted since the index was read.
    candidates = candidates[: limit + 2]
    return _hits(candidates, _chunk_rows(scope, [c.chunk_id for c in candidates]))[:limit]


def _candidates(scope: Scope, query: str, states: KBStates | None, *, k: int) -> list[_Candidate]:
    """Each index's ``k`` best chunks for ``query``, merged on coverage, best first."""
    weights = build_query(message=query)
    if not weights:
        return []
    keys = IndexKey.both(scope)
    if states is None:
        states = _states(scope.tenant_id, scope.agent_id, tuple(key.owner_id for key in keys))
    candidates = [c for key in keys for c in _search_index(key, states[key.owner_id], weights, k)]
    # Coverage is comparable between the two indexes (raw BM25 is not): merge on it,
    # ties to the stronger match, then the older chunk.
    candidates.sort(key=lambda c: (-c.score, -c.raw, c.chunk_id))
    return candidates


def _passes(candidate: _Candidate) -> bool:
    """Whether the gate lets ``candidate`` through (``KB_TOP_K`` still to be applied)."""
    return candidate.eligible and candidate.score >= settings.KB_GATE


def _hits(candidates: list[_Candidate], rows: dict[int, _ChunkRow]) -> list[KBHit]:
    """``candidates`` as hits, in order: those with a row (still present and visible);
    the first ``KB_TOP_K`` that pass the gate marked so."""
    out: list[KBHit] = []
    gated = 0
    for candidate in candidates:
        row = rows.get(candidate.chunk_id)
        if row is None:  # deleted since the index was read, or not the scope's
            continue
        passes = _passes(candidate) and gated < settings.KB_TOP_K
        gated += passes
        out.append(
            KBHit(
                chunk_id=candidate.chunk_id,
                document_id=row.document_id,
                title=row.title,
                heading_path=row.heading_path,
                text=row.text,
                score=round(candidate.score, 4),
                passes_gate=passes,
                prepared=row.prepared,
            )
        )
    return out


def kb_hit_line(*, title: str, heading_path: str, text: str) -> str:
    """How one hit reads in the injected text: source, headings, then the passage."""
    source = f"《{title}》"
    if heading_path:
        source += f" {heading_path}"
    return f"{source}：{text}"


# Injected lines by chunk as rendered (red line re-checked, sanitised, cut to
# EXCERPT_TOKENS). A chunk never changes once written (and a deleted one is never found
# again), so each process renders a line once; the key holds the texts too, so a hit
# built elsewhere with other text is rendered afresh.
_LineKey = tuple[int, str, str, str]
_LINES: OrderedDict[_LineKey, Line] = OrderedDict()
_LINES_LOCK = threading.Lock()
CACHED_LINES = 4096


def _line_stamp(*, title: str, heading_path: str, text: str) -> str:
    return prepared_stamp(LINE_FORMAT, str(EXCERPT_TOKENS), title, heading_path, text)


def _hit_item(*, chunk_id: int, title: str, heading_path: str, text: str) -> Item:
    hit_line = kb_hit_line(title=title, heading_path=heading_path, text=text)
    return Item(id=chunk_id, text=" ".join(redact(hit_line).text.split()))


def _render_line(*, chunk_id: int, title: str, heading_path: str, text: str) -> Line:
    """The live path: the line re-checked by the red line (the title and headings with
    the passage), sanitised and cut to ``EXCERPT_TOKENS``."""
    item = _hit_item(chunk_id=chunk_id, title=title, heading_path=heading_path, text=text)
    return list_line(item, item_cap=EXCERPT_TOKENS)


def kb_line_prepare(*, title: str, heading_path: str, text: str) -> PreparedLine:
    """A chunk's injected line, prepared when the chunk is written (stored with it), so
    that the read path neither re-checks nor cuts it again while the rules are the same."""
    return kb_lines_prepare(title=title, passages=[(heading_path, text)])[0]


def kb_lines_prepare(*, title: str, passages: Sequence[tuple[str, str]]) -> list[PreparedLine]:
    """:func:`kb_line_prepare` of a document's passages (``(heading_path, text)``), their
    tokens counted in batches; each line is exactly what the live path renders."""
    items = [
        _hit_item(chunk_id=0, title=title, heading_path=path, text=text) for path, text in passages
    ]
    return [
        PreparedLine(
            line.text,
            line.tokens,
            line.cut,
            _line_stamp(title=title, heading_path=path, text=text),
        )
        for line, (path, text) in zip(
            list_lines(items, item_cap=EXCERPT_TOKENS), passages, strict=True
        )
    ]


def _line(hit: KBHit) -> Line:
    # Looked up first: a line this process has already checked (the stored one, its
    # stamp verified, or the live one) costs a dictionary lookup, not a stamp's hash.
    key = (hit.chunk_id, hit.title, hit.heading_path, hit.text)
    with _LINES_LOCK:
        cached = _LINES.get(key)
        if cached is not None:
            _LINES.move_to_end(key)
            return cached
    prepared = hit.prepared
    if prepared is not None and prepared.stamp == _line_stamp(
        title=hit.title, heading_path=hit.heading_path, text=hit.text
    ):
        line = Line(id=hit.chunk_id, text=prepared.text, tokens=prepared.tokens, cut=prepared.cut)
    else:
        # Redacted when stored; re-checked like every injected memory (the rules may
        # have grown since), the title and headings with it.
        line = _render_line(
            chunk_id=hit.chunk_id, title=hit.title, heading_path=hit.heading_path, text=hit.text
        )
    with _LINES_LOCK:
        _LINES[key] = line
        while len(_LINES) > CACHED_LINES:
            _LINES.popitem(last=False)
    return line


def kb_hits_render(*, hits: Sequence[KBHit], budget: int) -> Rendered:
    """The hits as injected text: sanitised, inside the KB's untrusted boundary, within
    ``budget`` tokens (whole hits in the given order while they fit; ``ids`` are the
    chunk ids shown)."""
    if budget <= 0 or not hits:
        return EMPTY
    return render_lines(
        header=boundary.KB_HEADER,
        footer=boundary.KB_FOOTER,
        lines=[_line(hit) for hit in hits],
        budget=budget,
    )


@dataclass(frozen=True, slots=True)
class KBPlan:
    """Passive injection for one message before its passages are read: the candidates
    that pass the gate. The read path reads their rows with recall's, in one query."""

    scope: Scope
    passing: list[_Candidate]

    def rows_query(self) -> tuple[str, list[int]] | None:
        """:func:`kb_chunk_rows_query` of the passing chunks; None when there are none."""
        if not self.passing:
            return None
        return kb_chunk_rows_query([c.chunk_id for c in self.passing])

    def render(self, rows: Iterable[Sequence[Any]], budget: int) -> Rendered:
        """The section from the rows read by :meth:`rows_query`."""
        if budget <= 0:
            return EMPTY
        found = kb_chunk_rows(self.scope, rows)
        hits = [hit for hit in _hits(self.passing, found) if hit.passes_gate]
        return kb_hits_render(hits=hits, budget=budget)


def kb_plan(*, scope: Scope, query: str, states: KBStates | None = None) -> KBPlan:
    """The candidates of ``query`` that can be injected; nothing is read but the version
    rows (when ``states`` is not given). For most messages nothing in the knowledge base
    is relevant, and the section then costs no round trip."""
    # Only an index's first KB_TOP_K can pass.
    candidates = _candidates(scope, query, states, k=settings.KB_TOP_K)
    return KBPlan(scope, [c for c in candidates if _passes(c)])


def kb_render(*, scope: Scope, query: str, budget: int, states: KBStates | None = None) -> Rendered:
    """The ``[知识库检索结果]`` section: the gated hits of ``kb_search`` (nothing when
    nothing in the knowledge base is relevant)."""
    if budget <= 0:
        return EMPTY
    plan = kb_plan(scope=scope, query=query, states=states)
    rows_query = plan.rows_query()
    if rows_query is None:
        return EMPTY
    return plan.render(fetch_all(*rows_query), budget)
