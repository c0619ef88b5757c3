"""Episodic recall (L3): entries per finished run, a per-scope index, the gate, injection.

Storage, chosen by measurement (see benchmarks/recall.py and the issue note): each entry
stores its pre-tokenised terms in the database (SQLite and PostgreSQL alike); every
process keeps an in-memory BM25 index per scope (``memory.recall.RecallIndex``, numpy
postings) built from those terms once and then updated incrementally. A per-scope
version row, bumped in the transaction of every write, tells a process in one indexed
read whether its index is current and which entries to load.

The stored terms start with a version marker (:data:`TERMS_MARK`); an entry written by an
older tokenizer is re-tokenised from its text when a scope is loaded (migration
``memory.0004_recall_terms_v2`` rewrites them once, so that this stays rare).

The query is the conversation, not only the message (``memory.recall.build_query``): the
read path passes the thread's recent turns and rolling summary, the recall API does the
same for ``?thread_id=``, and ``benchmarks/recall_eval.py`` measures that query.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from agents.models import Run
from memory import boundary
from memory.models import RecallEntry, RecallScope, RedlineAudit
from memory.recall import (
    TERMS_VERSION,
    ConversationTurn,
    Hit,
    RecallIndex,
    build_query,
    gate,
    terms,
)
from memory.redline import redact
from memory.render import EMPTY, Item, Rendered, render_list
from memory.scope import Scope
from memory.services.audit import redline_audit_record
from memory.services.threads import thread_of_scope

# The compact text of an entry: the teacher's request and the head of the answer.
ENTRY_INPUT_CHARS = 400
ENTRY_OUTPUT_CHARS = 300
# Tokens of one recalled excerpt in the [相关历史] section.
EXCERPT_TOKENS = 150
# How many candidates a search ranks (the gate looks at the first RECALL_TOP_K).
SEARCH_K = 10
# Scopes whose index a process keeps in memory (least recently used dropped first).
CACHED_SCOPES = 32
# First token of an entry's stored terms: the tokenizer version they were made with
# ("#" never occurs in a term).
TERMS_MARK = f"#v{TERMS_VERSION}"


@dataclass(frozen=True, slots=True)
class RecallHit:
    entry_id: int
    run_id: int
    thread_id: str | None
    score: float
    passes_gate: bool
    text: str
    created_at: str


def entry_text(*, user_input: str, output: str) -> str:
    head = " ".join(user_input.split())[:ENTRY_INPUT_CHARS]
    answer = " ".join(output.split())[:ENTRY_OUTPUT_CHARS]
    return f"{head}\n→ {answer}" if answer else head


def stored_terms(text: str) -> str:
    """An entry's terms as stored: the version marker, then the terms, space-separated."""
    return " ".join([TERMS_MARK, *terms(text)])


def _entry_terms(stored: str, text: str) -> list[str]:
    """The terms of a stored entry; re-tokenised when an older tokenizer made them."""
    parts = stored.split()
    if parts and parts[0] == TERMS_MARK:
        return parts[1:]
    return terms(text)


def recall_upsert(*, run: Run) -> RecallEntry | None:
    """The run's entry (idempotent on run id). Failed runs are not recalled."""
    if run.status != "completed":
        return None
    existing = RecallEntry.objects.filter(run_id=run.pk).first()
    if existing is not None:
        return existing
    scope = Scope.of(run)
    redaction = redact(entry_text(user_input=run.input, output=run.output))
    if redaction.counts:
        redline_audit_record(
            scope=scope,
            source=RedlineAudit.Source.RECALL,
            counts={str(k): v for k, v in redaction.counts.items()},
        )
    try:
        with transaction.atomic():
            # The scope row first: its lock, held to the commit, is taken before the
            # entry's id is drawn, so within one scope entry ids commit in increasing
            # order and a process's incremental load (ids above the last it saw) never
            # skips an entry that committed after a higher one (without it, only the
            # entry count would notice, at the next search, with a full rebuild).
            _bump_scope(scope=scope)
            entry = RecallEntry.objects.create(
                **scope.filter_kwargs(),
                run_id=run.pk,
                thread_id=run.thread_id,
                text=redaction.text,
                terms=stored_terms(redaction.text),
                created_at=run.created_at,
            )
            RecallScope.objects.filter(**scope.filter_kwargs()).update(
                max_entry_id=Greatest(F("max_entry_id"), entry.pk)
            )
    except IntegrityError:
        # Written concurrently by a redelivered job: that one stands.
        return RecallEntry.objects.filter(run_id=run.pk).first()
    return entry


def _bump_scope(*, scope: Scope) -> None:
    """One more entry in ``scope``: a new version (locks the scope's row until commit)."""
    updated = RecallScope.objects.filter(**scope.filter_kwargs()).update(
        version=F("version") + 1, entry_count=F("entry_count") + 1
    )
    if updated:
        return
    try:
        with transaction.atomic():
            RecallScope.objects.create(**scope.filter_kwargs(), version=1, entry_count=1)
    except IntegrityError:
        _bump_scope(scope=scope)  # created concurrently; bump it


# -- the per-process index cache ----------------------------------------------------------
@dataclass
class _ScopeIndex:
    index: RecallIndex
    version: int
    max_entry_id: int
    lock: threading.Lock = field(default_factory=threading.Lock)


_CACHE: OrderedDict[Scope, _ScopeIndex] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _load(scope: Scope, *, after_entry_id: int = 0) -> tuple[list[tuple[int, list[str]]], int]:
    rows = (
        RecallEntry.objects.filter(**scope.filter_kwargs(), pk__gt=after_entry_id)
        .order_by("pk")
        .values_list("pk", "run_id", "terms", "text")
    )
    documents: list[tuple[int, list[str]]] = []
    last = after_entry_id
    # A full load streams (a server-side cursor on PostgreSQL: DECLARE, FETCH, CLOSE);
    # an incremental one, after every memory job of the scope, is a few rows: one query.
    loaded = rows.iterator(chunk_size=5000) if after_entry_id == 0 else rows
    for pk, run_id, stored, text in loaded:
        documents.append((run_id, _entry_terms(stored, text)))
        last = pk
    return documents, last


def _scope_index(scope: Scope) -> _ScopeIndex:
    """This process's index of ``scope``, brought up to date with one indexed read."""
    state = (
        RecallScope.objects.filter(**scope.filter_kwargs())
        .values_list("version", "entry_count", "max_entry_id")
        .first()
    ) or (0, 0, 0)
    version, entry_count, _max_id = state
    with _CACHE_LOCK:
        cached = _CACHE.get(scope)
        if cached is not None:
            _CACHE.move_to_end(scope)
    if cached is not None and cached.version == version:
        return cached
    if cached is not None:
        with cached.lock:
            documents, last = _load(scope, after_entry_id=cached.max_entry_id)
            for doc_id, doc_terms in documents:
                cached.index.add(doc_id, doc_terms)
            cached.max_entry_id = last
            cached.version = version
            if len(cached.index) == entry_count:
                return cached
        # Entries were removed (their runs deleted): rebuild below.
    documents, last = _load(scope)
    fresh = _ScopeIndex(
        index=RecallIndex.from_documents(documents), version=version, max_entry_id=last
    )
    with _CACHE_LOCK:
        _CACHE[scope] = fresh
        _CACHE.move_to_end(scope)
        while len(_CACHE) > CACHED_SCOPES:
            _CACHE.popitem(last=False)
    return fresh


def recall_cache_clear() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """What recall searches with: the message and the conversation it belongs to."""

    message: str
    turns: tuple[ConversationTurn, ...] = ()
    summary: str = ""
    # The runs behind ``turns``: already verbatim in the thread section, never recalled.
    turn_run_ids: frozenset[int] = frozenset()

    def weights(self) -> dict[str, float]:
        return build_query(message=self.message, turns=self.turns, summary=self.summary)


def recall_query_for_thread(*, scope: Scope, thread_id: str, message: str) -> RecallQuery:
    """The query for ``message`` said in a thread of ``scope`` (the read path's turns).

    Raises :class:`memory.services.threads.ThreadRejected` (the run endpoints' message)
    when the thread is not the scope's.
    """
    thread = thread_of_scope(scope=scope, thread_id=thread_id)
    recent = recent_turns(thread_id=thread.pk)
    return RecallQuery(
        message=message,
        turns=tuple(turn for _, turn in recent),
        summary=thread.rolling_summary,
        turn_run_ids=frozenset(run_id for run_id, _ in recent),
    )


def recent_turns(*, thread_id: str) -> list[tuple[int, ConversationTurn]]:
    """The thread's last finished turns (run id, turn), oldest first, as the read path
    holds them."""
    recent = list(
        Run.objects.filter(thread_id=thread_id)
        .finished()
        .order_by("-created_at", "-pk")
        .values_list("pk", "status", "input", "output")[: settings.THREAD_RECENT_TURNS]
    )
    recent.reverse()
    return [
        (
            pk,
            ConversationTurn(
                user=user, assistant=output if status == Run.Status.COMPLETED else None
            ),
        )
        for pk, status, user, output in recent
    ]


def recall_search(
    *,
    scope: Scope,
    query: RecallQuery,
    exclude_run_ids: set[int] | frozenset[int] = frozenset(),
    k: int = SEARCH_K,
) -> list[RecallHit]:
    """The scope's best entries for ``query``, with the gate's scores and verdicts."""
    weights = query.weights()
    if not weights:
        return []
    cached = _scope_index(scope)
    with cached.lock:
        if not len(cached.index):
            return []
        hits: list[Hit] = cached.index.search(
            weights, k=k, exclude=set(exclude_run_ids) | query.turn_run_ids
        )
    passing = {
        hit.doc_id
        for hit in gate(hits, threshold=settings.RECALL_GATE, limit=settings.RECALL_TOP_K)
    }
    # Looked up by run id alone (its unique index): filtering on the scope columns too
    # lets the planner pick the scope index and scan the whole scope. The scope is then
    # checked on the few rows returned.
    wanted = scope.filter_kwargs()
    rows = {
        row["run_id"]: row
        for row in RecallEntry.objects.filter(run_id__in=[hit.doc_id for hit in hits]).values(
            "pk", "run_id", "thread_id", "text", "created_at", "tenant_id", "agent_id", "owner_id"
        )
        if all(dict(row)[key] == value for key, value in wanted.items())
    }
    return [
        RecallHit(
            entry_id=rows[hit.doc_id]["pk"],
            run_id=hit.doc_id,
            thread_id=rows[hit.doc_id]["thread_id"],
            score=float(hit.score),
            passes_gate=hit.doc_id in passing,
            text=rows[hit.doc_id]["text"],
            created_at=timezone.localtime(rows[hit.doc_id]["created_at"]).isoformat(),
        )
        for hit in hits
        if hit.doc_id in rows  # an entry deleted since the index was read
    ]


def recall_render(
    *, scope: Scope, query: RecallQuery, exclude_run_ids: set[int], budget: int
) -> tuple[Rendered, list[RecallHit]]:
    """The ``[相关历史]`` section: gated hits, dated excerpts, inside a boundary."""
    if budget <= 0:
        return EMPTY, []
    hits = [
        hit
        for hit in recall_search(scope=scope, query=query, exclude_run_ids=exclude_run_ids)
        if hit.passes_gate
    ]
    if not hits:
        return EMPTY, []
    items = []
    for hit in hits:
        # Filtered when written; re-checked here like every injected memory.
        excerpt = " ".join(redact(hit.text).text.split())
        items.append(Item(id=hit.entry_id, text=f"{hit.created_at[:10]} {excerpt}"))
    rendered = render_list(
        header=boundary.RECALL_HEADER,
        footer=boundary.RECALL_FOOTER,
        items=items,
        budget=budget,
        item_cap=EXCERPT_TOKENS,
    )
    return rendered, hits
