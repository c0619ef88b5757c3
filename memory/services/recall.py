"""Episodic recall (L3): entries per finished run, a per-scope index, the gate, injection.

Storage, chosen by measurement (see benchmarks/recall.py and the issue note): each entry
stores its pre-tokenised terms in the database (SQLite and PostgreSQL alike); every
process keeps an in-memory BM25 index per scope (``memory.recall.RecallIndex``, numpy
postings) built from those terms once and then updated incrementally. A per-scope
version row, bumped in the transaction of every write, tells a process in one indexed
read whether its index is current and which entries to load.

Removal: an entry removed by any path (a run or thread deleted, a text forgotten, a
cascade from the admin) bumps its scope's ``version`` and ``epoch`` in the deleting
transaction (``memory.signals`` calls :func:`recall_entry_removed`); a process whose
index is of another epoch reads the scope's run ids once and drops the entries that are
gone (rebuilding only if the counts still disagree), so no process ever ranks or
returns a removed entry. A search also drops hits whose run was deleted in the
moment between the deletion request and the worker's cascade.

The stored terms start with a version marker (:data:`TERMS_MARK`); an entry written by an
older tokenizer is re-tokenised from its text when a scope is loaded (migration
``memory.0004_recall_terms_v2`` rewrites them once, so that this stays rare).

The query is the conversation, not only the message (``memory.recall.build_query``): the
read path passes the thread's recent turns and rolling summary, the recall API does the
same for ``?thread_id=``, and ``benchmarks/recall_eval.py`` measures that query.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from agents.models import Run
from agents.rows import column, db_datetime, fetch_all, insert_instance, table
from memory import boundary
from memory.models import RecallEntry, RecallScope, RedlineAudit
from memory.recall import (
    TERMS_VERSION,
    ConversationTurn,
    Hit,
    build_query,
    entry_text,
    gate,
    terms,
)
from memory.redline import redact
from memory.render import EMPTY, Item, Rendered, render_list
from memory.scope import Scope
from memory.services.audit import redline_audit_record
from memory.services.index_cache import IndexCache, IndexState, Loaded
from memory.services.threads import recent_finished_runs, thread_of_scope
from memory.stored import redacted

# Tokens of one recalled excerpt in the [相关历史] section.
EXCERPT_TOKENS = 150
# How many candidates a search ranks (the gate looks at the first RECALL_TOP_K).
SEARCH_K = 10
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


def stored_terms(text: str) -> str:
    """An entry's terms as stored: the version marker, then the terms, space-separated."""
    return " ".join([TERMS_MARK, *terms(text)])


def _entry_terms(stored: str, text: str) -> list[str]:
    """The terms of a stored entry; re-tokenised when an older tokenizer made them."""
    parts = stored.split()
    if parts and parts[0] == TERMS_MARK:
        return parts[1:]
    return terms(text)


def recall_upsert(*, run: Run, first_attempt: bool = False) -> RecallEntry | None:
    """The run's entry (idempotent on run id). Failed and deleted runs are not recalled.

    The run row is locked while the entry is written and re-read under the lock: a
    deletion or a "forget" (which update the run first) either finished before, and the
    entry is not written (deleted) or is written from the redacted text, or waits, and
    then removes the entry this wrote. What the red line blocked is counted in the same
    transaction, so only for an entry that was written.

    ``first_attempt``: no job of this run ran before (its claim counter says so), so no
    entry can exist but one a concurrent duplicate is writing, which the unique run id
    turns away: the look for an existing entry is skipped.
    """
    if run.status != "completed" or run.deleted_at is not None:
        return None
    if not first_attempt:
        existing = RecallEntry.objects.filter(run_id=run.pk).first()
        if existing is not None:
            return existing
    scope = Scope.of(run)
    redaction = redact(entry_text(user_input=run.input, output=run.output))
    try:
        with transaction.atomic():
            current = _run_locked(run.pk)
            if current is None or current[0] is not None:
                return None
            redacted_at = None if current[1] is None else db_datetime(current[1])
            if redacted_at != run.redacted_at:
                # Forgotten since this job loaded the run: the next job re-reads it.
                return None
            entry = RecallEntry(
                **scope.filter_kwargs(),
                run_id=run.pk,
                thread_id=current[2],
                text=redaction.text,
                terms=stored_terms(redaction.text),
                created_at=run.created_at,
            )
            insert_instance(entry)  # one INSERT without the ORM's compiler (agents/rows.py)
            _bump_scope(scope=scope, entry_id=entry.pk)
            if redaction.counts:
                redline_audit_record(
                    scope=scope,
                    source=RedlineAudit.Source.RECALL,
                    counts={str(k): v for k, v in redaction.counts.items()},
                )
    except IntegrityError:
        # Written concurrently by a redelivered job: that one stands.
        return RecallEntry.objects.filter(run_id=run.pk).first()
    return entry


def _run_locked(run_id: int) -> tuple[Any, Any, str | None] | None:
    """The run's ``deleted_at``, ``redacted_at`` (as the cursor reads them) and thread id,
    its row locked for the transaction (SQLite: the transaction's write lock is the lock);
    plain SQL, as :func:`_bump_scope`."""
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {column(Run, 'deleted_at')}, {column(Run, 'redacted_at')}, "
            f"{column(Run, 'thread')} FROM {table(Run)} WHERE {column(Run, 'id')} = %s{lock}",
            [run_id],
        )
        row = cursor.fetchone()
    return None if row is None else (row[0], row[1], row[2])


def _bump_scope(*, scope: Scope, entry_id: int, count: int = 1) -> None:
    """``count`` entries were added, the newest ``entry_id`` (in the adding transaction)."""
    # Plain SQL (agents/rows.py): every memory job bumps its scope. It is
    # ``update(version=F("version") + 1, entry_count=F("entry_count") + count,
    # max_entry_id=Greatest(F("max_entry_id"), entry_id))`` on the scope's row.
    version, entries, newest = (
        column(RecallScope, name) for name in ("version", "entry_count", "max_entry_id")
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table(RecallScope)} SET {version} = {version} + 1, "
            f"{entries} = {entries} + %s, "
            f"{newest} = CASE WHEN {newest} > %s THEN {newest} ELSE %s END "
            f"WHERE {column(RecallScope, 'tenant')} = %s AND {column(RecallScope, 'agent')} = %s "
            f"AND {column(RecallScope, 'owner')} = %s",
            [count, entry_id, entry_id, scope.tenant_id, scope.agent_id, scope.owner_id],
        )
        if cursor.rowcount:
            return
    try:
        with transaction.atomic():
            RecallScope.objects.create(
                **scope.filter_kwargs(), version=1, entry_count=count, max_entry_id=entry_id
            )
    except IntegrityError:
        _bump_scope(scope=scope, entry_id=entry_id, count=count)  # created concurrently


def recall_entries_create(*, scope: Scope, runs: Sequence[Run]) -> int:
    """The entries of many completed runs of ``scope`` created in the caller's transaction
    (the legacy import): red-line redacted like :func:`recall_upsert`'s, one bulk insert
    and one version bump. The runs are new, so no other process can have written their
    entries. Returns how many were written."""
    entries: list[RecallEntry] = []
    blocked: Counter[str] = Counter()
    for run in runs:
        if run.status != Run.Status.COMPLETED:
            continue
        redaction = redact(entry_text(user_input=run.input, output=run.output))
        blocked.update({str(k): v for k, v in redaction.counts.items()})
        entries.append(
            RecallEntry(
                **scope.filter_kwargs(),
                run_id=run.pk,
                thread_id=run.thread_id,
                text=redaction.text,
                terms=stored_terms(redaction.text),
                created_at=run.created_at,
            )
        )
    if not entries:
        return 0
    if blocked:
        redline_audit_record(scope=scope, source=RedlineAudit.Source.RECALL, counts=blocked)
    with transaction.atomic():
        RecallEntry.objects.bulk_create(entries, batch_size=500)
        newest = (
            RecallEntry.objects.filter(**scope.filter_kwargs())
            .order_by("-pk")
            .values_list("pk", flat=True)
            .first()
        )
        _bump_scope(scope=scope, entry_id=newest or 0, count=len(entries))
    return len(entries)


def recall_entry_removed(*, scope: Scope, count: int = 1) -> None:
    """Record that ``count`` entries of ``scope`` were removed (in the removing transaction).

    Bumps the version (every process re-reads) and the epoch (every process also checks
    which of its entries are gone, instead of only adding the newer ones).
    """
    RecallScope.objects.filter(**scope.filter_kwargs()).update(
        version=F("version") + 1,
        epoch=F("epoch") + 1,
        entry_count=Greatest(F("entry_count") - count, 0),
    )


def recall_entries_delete(*, run_ids: Collection[int]) -> int:
    """Remove the recall entries of these runs; every process drops them. Returns how many."""
    if not run_ids:
        return 0
    deleted, _per_model = RecallEntry.objects.filter(run_id__in=list(run_ids)).delete()
    return deleted


# -- the per-process index cache ----------------------------------------------------------
def recall_state_query(scope: Scope) -> tuple[str, list[int]]:
    """The SQL (and its parameters) of the scope's version row, for a caller that reads
    it together with other version rows (the read path).

    Columns: id, version, entry_count, max_entry_id, epoch (:class:`IndexState`).
    """
    return (
        "SELECT id, version, entry_count, max_entry_id, epoch "
        f"FROM {RecallScope._meta.db_table} "
        "WHERE tenant_id = %s AND agent_id = %s AND owner_id = %s",
        [scope.tenant_id, scope.agent_id, scope.owner_id],
    )


def _state(scope: Scope) -> IndexState:
    """The scope's version row, in one indexed read. Plain SQL: this read precedes every
    search (the read path's included), and building the ORM query costs more than
    running it."""
    sql, params = recall_state_query(scope)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return IndexState(*row) if row else IndexState()


def _load(scope: Scope, after_id: int) -> Loaded:
    documents: list[tuple[int, Sequence[str]]] = []
    last = after_id
    # A full load streams (a server-side cursor on PostgreSQL: DECLARE, FETCH, CLOSE);
    # an incremental one, after every memory job of the scope (so on most run requests),
    # is a few rows: one query in plain SQL, cheaper than compiling the ORM's.
    loaded: Iterable[tuple[int, int, str, str]]
    if after_id == 0:
        loaded = (
            RecallEntry.objects.filter(**scope.filter_kwargs())
            .order_by("pk")
            .values_list("pk", "run_id", "terms", "text")
            .iterator(chunk_size=5000)
        )
    else:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, run_id, terms, text FROM {RecallEntry._meta.db_table} "
                "WHERE tenant_id = %s AND agent_id = %s AND owner_id = %s AND id > %s "
                "ORDER BY id",
                [scope.tenant_id, scope.agent_id, scope.owner_id, after_id],
            )
            loaded = cursor.fetchall()
    for pk, run_id, stored, text in loaded:
        documents.append((run_id, _entry_terms(stored, text)))
        last = pk
    return documents, last


def _present(scope: Scope) -> set[int]:
    """The run ids of the scope's live entries (after a removal: one read of ids, far
    cheaper than reloading every entry's terms)."""
    return set(RecallEntry.objects.filter(**scope.filter_kwargs()).values_list("run_id", flat=True))


_INDEXES = IndexCache[Scope](
    capacity=settings.MEMORY_INDEX_CACHE_KEYS,
    max_entries=settings.MEMORY_INDEX_CACHE_ENTRIES,
    state=_state,
    load=_load,
    present=_present,
)


def recall_cache_clear() -> None:
    _INDEXES.clear()


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
    return [
        (
            pk,
            ConversationTurn(
                user=user, assistant=output if status == Run.Status.COMPLETED else None
            ),
        )
        for pk, status, user, output in recent_finished_runs(thread_id=thread_id)
    ]


def recall_search(
    *,
    scope: Scope,
    query: RecallQuery,
    exclude_run_ids: set[int] | frozenset[int] = frozenset(),
    k: int = SEARCH_K,
    state: IndexState | None = None,
) -> list[RecallHit]:
    """The scope's best entries for ``query``, with the gate's scores and verdicts.

    ``state``: the scope's version row if the caller has just read it; else it is read
    here."""
    hits, passing = _ranked(scope, query, exclude_run_ids, k, state)
    return _with_rows(hits, passing, _entry_rows(scope, [hit.doc_id for hit in hits]))


def _ranked(
    scope: Scope,
    query: RecallQuery,
    exclude_run_ids: set[int] | frozenset[int],
    k: int,
    state: IndexState | None,
) -> tuple[list[Hit], set[int]]:
    """The index's ``k`` best entries for ``query`` and the run ids the gate passes."""
    weights = query.weights()
    if not weights:
        return [], set()
    cached = _INDEXES.get(scope, state=state)
    with cached.lock:
        if not len(cached.index):
            return [], set()
        hits: list[Hit] = cached.index.search(
            weights, k=k, exclude=set(exclude_run_ids) | query.turn_run_ids
        )
    passing = {
        hit.doc_id
        for hit in gate(hits, threshold=settings.RECALL_GATE, limit=settings.RECALL_TOP_K)
    }
    return hits, passing


def _with_rows(hits: list[Hit], passing: set[int], rows: dict[int, _EntryRow]) -> list[RecallHit]:
    """``hits`` with their entries' rows, those whose entry (or run) is gone left out."""
    return [
        RecallHit(
            entry_id=rows[hit.doc_id].entry_id,
            run_id=hit.doc_id,
            thread_id=rows[hit.doc_id].thread_id,
            score=float(hit.score),
            passes_gate=hit.doc_id in passing,
            text=rows[hit.doc_id].text,
            created_at=timezone.localtime(rows[hit.doc_id].created_at).isoformat(),
        )
        for hit in hits
        if hit.doc_id in rows  # an entry (or its run) deleted since the index was read
    ]


@dataclass(frozen=True, slots=True)
class _EntryRow:
    entry_id: int
    thread_id: str | None
    text: str
    created_at: datetime


# The columns of :func:`recall_entry_rows_query`, in the order :func:`recall_entry_rows`
# reads.
ENTRY_ROW_COLUMNS = (
    "e.run_id",
    "e.id",
    "e.thread_id",
    "e.text",
    "e.created_at",
    "e.tenant_id",
    "e.agent_id",
    "e.owner_id",
)


def recall_entry_rows_query(run_ids: Sequence[int]) -> tuple[str, list[int]]:
    """The SQL (and its parameters) that reads the entries of ``run_ids`` (not empty) for
    :func:`recall_entry_rows`, for a caller that reads them with other rows (the read
    path): those whose run is not deleted.

    Looked up by run id alone (its unique index): filtering on the scope columns too
    lets the planner pick the scope index and scan the whole scope. The scope is then
    checked on the few rows returned. Plain SQL for the reason given at :func:`_state`.
    """
    entry, run = RecallEntry._meta.db_table, Run._meta.db_table
    return (
        f"SELECT {', '.join(ENTRY_ROW_COLUMNS)} FROM {entry} e JOIN {run} r ON r.id = e.run_id "
        f"WHERE e.run_id IN ({', '.join(['%s'] * len(run_ids))}) "
        "AND r.deleted_at IS NULL",
        list(run_ids),
    )


def recall_entry_rows(scope: Scope, rows: Iterable[Sequence[Any]]) -> dict[int, _EntryRow]:
    """The rows read by :func:`recall_entry_rows_query` that are ``scope``'s, by run id."""
    wanted = (scope.tenant_id, scope.agent_id, scope.owner_id)
    return {
        run_id: _EntryRow(entry_id, thread_id, text, db_datetime(created_at))
        for run_id, entry_id, thread_id, text, created_at, *owner in rows
        if tuple(owner) == wanted
    }


def _entry_rows(scope: Scope, run_ids: list[int]) -> dict[int, _EntryRow]:
    """The entries of ``run_ids`` in ``scope`` whose run is not deleted, by run id."""
    if not run_ids:
        return {}
    return recall_entry_rows(scope, fetch_all(*recall_entry_rows_query(run_ids)))


@dataclass(frozen=True, slots=True)
class RecallPlan:
    """The ``[相关历史]`` section before its entries are read: the ranked hits and those
    the gate passes. The read path reads their rows with the knowledge base's, in one
    query."""

    scope: Scope
    passing: list[Hit]  # best first

    def rows_query(self) -> tuple[str, list[int]] | None:
        """:func:`recall_entry_rows_query` of the passing hits; None when there are none."""
        if not self.passing:
            return None
        return recall_entry_rows_query([hit.doc_id for hit in self.passing])

    def render(
        self, rows: Iterable[Sequence[Any]], budget: int
    ) -> tuple[Rendered, list[RecallHit]]:
        """The section from the rows read by :meth:`rows_query`, and the hits shown."""
        if budget <= 0 or not self.passing:
            return EMPTY, []
        found = recall_entry_rows(self.scope, rows)
        passing = {hit.doc_id for hit in self.passing}
        hits = _with_rows(self.passing, passing, found)
        if not hits:
            return EMPTY, []
        items = []
        for hit in hits:
            # Filtered when written; re-checked here like every injected memory.
            excerpt = " ".join(redacted(hit.text).text.split())
            items.append(Item(id=hit.entry_id, text=f"{hit.created_at[:10]} {excerpt}"))
        rendered = render_list(
            header=boundary.RECALL_HEADER,
            footer=boundary.RECALL_FOOTER,
            items=items,
            budget=budget,
            item_cap=EXCERPT_TOKENS,
        )
        return rendered, hits


def recall_plan(
    *,
    scope: Scope,
    query: RecallQuery,
    exclude_run_ids: set[int],
    state: IndexState | None = None,
) -> RecallPlan:
    """The hits of ``query`` that pass the gate; nothing is read but the version row
    (when ``state`` is not given). For most messages no past run is relevant, and the
    section then costs no round trip."""
    ranked, passing = _ranked(scope, query, exclude_run_ids, SEARCH_K, state)
    return RecallPlan(scope, [hit for hit in ranked if hit.doc_id in passing])


def recall_render(
    *,
    scope: Scope,
    query: RecallQuery,
    exclude_run_ids: set[int],
    budget: int,
    state: IndexState | None = None,
) -> tuple[Rendered, list[RecallHit]]:
    """The ``[相关历史]`` section: gated hits, dated excerpts, inside a boundary."""
    if budget <= 0:
        return EMPTY, []
    plan = recall_plan(scope=scope, query=query, exclude_run_ids=exclude_run_ids, state=state)
    rows_query = plan.rows_query()
    if rows_query is None:
        return EMPTY, []
    return plan.render(fetch_all(*rows_query), budget)
