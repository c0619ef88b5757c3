"""Rolling compression of a thread (design v2 §2.1; DESIGN.md "Write path").

The runs of a thread that have left the K most recent finished runs and lie past the
summary cursor are folded, oldest first, into the rolling summary. The LLM call happens
outside any transaction; the new summary and cursor are then saved with a
compare-and-set on the cursor that was read. A lost race re-reads and retries, so the
result never depends on there being a single worker: no run is skipped and none is
folded twice.

The compare-and-set also checks the thread's ``summary_version``, which governance bumps
whenever a run's text leaves the thread (a run deleted, a text forgotten): a fold that
read a text that is gone since is never saved, and is redone from what remains.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from django.conf import settings
from django.db.models import Q

from agents.models import Provider, Run
from agents.rows import PlanCache, RowPlan, column, db_value, table
from agents.tokens import count_tokens, truncate_tokens
from memory import faults
from memory.models import MemoryOp, RedlineAudit, Thread
from memory.prompts import FoldTurn, compress_messages
from memory.redline import redact
from memory.scope import Scope
from memory.services.audit import redline_audit_record
from memory.services.llm import memory_complete

logger = logging.getLogger(__name__)

# Runs folded per LLM call; a long backlog is folded in several calls.
FOLD_BATCH = 20
# Lost compare-and-set races before giving up for now (the sweeper comes back).
MAX_RACES = 5


@dataclass(frozen=True, slots=True)
class CompressResult:
    folded_run_ids: tuple[int, ...]
    calls: int
    races_lost: int


def _cursor_q(thread: Thread) -> Q:
    """Runs strictly after the thread's cursor in (created_at, id) order."""
    if thread.summary_upto_at is None:
        return Q()
    return Q(created_at__gt=thread.summary_upto_at) | Q(
        created_at=thread.summary_upto_at, pk__gt=thread.summary_upto_run_id or 0
    )


# Runs read past the cursor in one query; when there are more, the window is looked up
# on its own (a long backlog).
AHEAD_READ = FOLD_BATCH + 8


def runs_to_fold(*, thread: Thread, limit: int = FOLD_BATCH) -> list[Run]:
    """The next runs to fold, oldest first.

    Only finished runs outside the K most recent finished ones qualify, and only the
    unbroken prefix after the cursor: a run still running stops the batch, so that the
    cursor can never move past a run that will finish later.

    Usually one query: the runs after the cursor, when they are few, hold the K most
    recent finished ones too (every run after the cursor is newer than every run
    before it), or there are fewer than K of them and nothing is due.
    """
    keep = settings.THREAD_RECENT_TURNS
    columns = ("pk", "status", "input", "output", "created_at")
    after = Run.objects.filter(thread_id=thread.pk).filter(_cursor_q(thread))
    read = max(AHEAD_READ, limit + keep)
    ahead = _runs_after_cursor(thread, read)
    if len(ahead) < read:
        finished = [run for run in ahead if run.is_finished]
        if len(finished) < keep:
            return []  # the K most recent reach back to the cursor
        oldest_kept = finished[-keep]
        return _prefix(ahead[: ahead.index(oldest_kept)], limit)
    window = list(
        Run.objects.filter(thread_id=thread.pk)
        .finished()
        .order_by("-created_at", "-pk")
        .values_list("created_at", "pk")[:keep]
    )
    if len(window) < keep:
        return []
    oldest_kept_at, oldest_kept_id = window[-1]
    before_window = Q(created_at__lt=oldest_kept_at) | Q(
        created_at=oldest_kept_at, pk__lt=oldest_kept_id
    )
    pending = after.filter(before_window).order_by("created_at", "pk").only(*columns)[:limit]
    return _prefix(list(pending), limit)


def _runs_after_cursor(thread: Thread, limit: int) -> list[Run]:
    """``Run.objects.filter(thread_id=thread.pk).filter(_cursor_q(thread))
    .order_by("created_at", "pk")[:limit]`` as plain SQL (agents/rows.py): every memory
    job of a thread reads it, and compiling the ORM query cost more than running it."""
    params: list[Any]
    if thread.summary_upto_at is None:
        plan, params = _AHEAD_PLAN.get(), [thread.pk, limit]
    else:
        at = db_value(Run, "created_at", thread.summary_upto_at)
        upto = thread.summary_upto_run_id or 0
        plan, params = _AHEAD_AFTER_PLAN.get(), [thread.pk, at, at, upto, limit]
    return [cast(Run, run) for (run,) in plan.fetch_all(params)]


def _ahead_plan(*, after_cursor: bool) -> RowPlan:
    created, pk = column(Run, "created_at"), column(Run, "id")
    where = f"r.{column(Run, 'thread')} = %s"
    if after_cursor:
        where += f" AND (r.{created} > %s OR (r.{created} = %s AND r.{pk} > %s))"
    return RowPlan(
        f"SELECT {{columns}} FROM {table(Run)} r WHERE {where} "
        f"ORDER BY r.{created}, r.{pk} LIMIT %s",
        [(Run, "r")],
    )


_AHEAD_PLAN = PlanCache(lambda: _ahead_plan(after_cursor=False))
_AHEAD_AFTER_PLAN = PlanCache(lambda: _ahead_plan(after_cursor=True))


def _prefix(runs: list[Run], limit: int) -> list[Run]:
    """The finished runs before the first one still running, at most ``limit``."""
    batch: list[Run] = []
    for run in runs[:limit]:
        if not run.is_finished:
            break
        batch.append(run)
    return batch


def _save_if_cursor_unchanged(
    *,
    thread: Thread,
    summary: str,
    upto_at: datetime,
    upto_run_id: int,
) -> bool:
    current = Thread.objects.filter(
        pk=thread.pk, summary_version=thread.summary_version, deleted_at__isnull=True
    )
    if thread.summary_upto_at is None:
        current = current.filter(summary_upto_at__isnull=True)
    else:
        current = current.filter(
            summary_upto_at=thread.summary_upto_at,
            summary_upto_run_id=thread.summary_upto_run_id,
        )
    return bool(
        current.update(
            rolling_summary=summary, summary_upto_at=upto_at, summary_upto_run_id=upto_run_id
        )
    )


def thread_compress(
    *,
    thread_id: str,
    source_run_id: int | None = None,
    thread: Thread | None = None,
    providers: Sequence[Provider] | None = None,
) -> CompressResult:
    """Fold everything that is due. Idempotent; safe to run concurrently.

    ``thread``: the thread as the caller (the after-run job) has just read it, with its
    agent, used for the first round instead of reading it again; a cursor that moved
    since is a lost compare-and-set like any other. ``providers``: the job's
    :func:`memory.services.llm.memory_providers`.
    """
    folded: list[int] = []
    calls = races = 0
    max_tokens = settings.MEMORY_SUMMARY_MAX_TOKENS
    given = thread if thread is not None and thread.deleted_at is None else None
    while True:
        if given is not None:
            thread, given = given, None
        else:
            thread = (
                Thread.objects.select_related("agent", "agent__provider")
                .visible()
                .filter(pk=thread_id)
                .first()
            )
        if thread is None:
            break
        batch = runs_to_fold(thread=thread)
        if not batch:
            break
        messages = compress_messages(
            old_summary=thread.rolling_summary,
            turns=[
                FoldTurn(
                    run_id=run.pk,
                    user=run.input,
                    assistant=run.output if run.status == Run.Status.COMPLETED else None,
                )
                for run in batch
            ],
            max_tokens=max_tokens,
        )
        completion = memory_complete(
            agent=thread.agent,
            messages=messages,
            purpose="compress",
            kind=MemoryOp.Kind.COMPRESS,
            thread_id=thread.pk,
            run_id=source_run_id,
            providers=providers,
        )
        calls += 1
        summary = completion.text.strip()
        if count_tokens(summary) > max_tokens:
            # Keep the newest part: the summary is appended to in time order.
            summary = truncate_tokens(summary, max_tokens, keep="tail")
        # The code red line, whatever the model did with the prompt's red line.
        redaction = redact(summary)
        summary = redaction.text
        if redaction.counts:
            redline_audit_record(
                scope=Scope.of(thread),
                source=RedlineAudit.Source.SUMMARY,
                counts={str(k): v for k, v in redaction.counts.items()},
            )
        last = batch[-1]
        faults.checkpoint("compress.before_commit")
        if _save_if_cursor_unchanged(
            thread=thread, summary=summary, upto_at=last.created_at, upto_run_id=last.pk
        ):
            faults.checkpoint("compress.after_commit")
            folded.extend(run.pk for run in batch)
            if len(batch) < FOLD_BATCH:
                # The batch stopped at the recent window or at a run still running:
                # nothing more was due (a run finishing since has its own job).
                break
            continue
        races += 1
        logger.info("thread %s: cursor moved under us, re-reading (%d)", thread_id, races)
        if races >= MAX_RACES:
            break
    return CompressResult(folded_run_ids=tuple(folded), calls=calls, races_lost=races)
