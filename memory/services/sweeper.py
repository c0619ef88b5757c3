"""The sweeper's memory steps: restart recovery for the memory pipeline (DESIGN.md "Write path").

``runs.sweeper.recovery_sweep`` (``manage.py memory_sweep`` and the django-q2 schedule)
fails abandoned runs first, then calls :func:`memory_sweep`. Each re-enqueue is claimed
with a compare-and-set on the row's enqueue time, so two sweeps at once, or one sweep
twice, never enqueue the same work twice; a second sweep right after a first one
changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from agents.models import Run
from memory.models import CoreFact, MemoryJob, Thread
from memory.scope import Scope
from memory.services.audit import Action, ObjectType, audit_record_scoped
from memory.services.compression import runs_to_fold
from memory.services.jobs import (
    after_run_enqueue,
    compress_thread_enqueue,
    governance_job_enqueue,
)
from memory.services.kb_documents import kb_documents_sweep

# Threads examined for a lagging cursor per sweep, most recently active first.
THREAD_SCAN_LIMIT = 500
THREAD_SCAN_DAYS = 14


@dataclass(frozen=True, slots=True)
class MemorySweepReport:
    runs_reenqueued: int
    threads_reenqueued: int
    jobs_reenqueued: int = 0
    facts_expired: int = 0
    kb_documents_reenqueued: int = 0


def _claimed(
    rows: QuerySet[Any], field: str, seen: datetime | None, now: datetime, **also: Any
) -> bool:
    """Compare-and-set: stamp ``field`` with ``now`` if it still holds what was ``seen``."""
    rows = rows.filter(**{field: seen}) if seen else rows.filter(**{f"{field}__isnull": True})
    return bool(rows.update(**{field: now}, **also))


def _reenqueue_runs(*, now: datetime, stale_after: timedelta) -> int:
    cutoff = now - stale_after
    due = (
        Run.objects.filter(
            status__in=(Run.Status.COMPLETED, Run.Status.FAILED),
            memory_state__in=(Run.MemoryState.PENDING, Run.MemoryState.FAILED),
            memory_attempts__lt=settings.MEMORY_JOB_MAX_ATTEMPTS,
            deleted_at__isnull=True,
        )
        .filter(Q(memory_enqueued_at__lt=cutoff) | Q(memory_enqueued_at__isnull=True))
        .order_by("finished_at", "pk")
        .values_list("pk", "memory_enqueued_at")
    )
    count = 0
    for run_id, enqueued_at in due:
        with transaction.atomic():
            claim = Run.objects.filter(pk=run_id)
            if _claimed(
                claim, "memory_enqueued_at", enqueued_at, now, memory_state=Run.MemoryState.PENDING
            ):
                after_run_enqueue(run_id=run_id)
                count += 1
    return count


def _reenqueue_threads(*, now: datetime, stale_after: timedelta) -> int:
    cutoff = now - stale_after
    busy = Run.objects.filter(
        memory_state__in=(Run.MemoryState.PENDING, Run.MemoryState.NONE)
    ).values("thread_id")
    threads = (
        Thread.objects.visible()
        .filter(updated_at__gte=now - timedelta(days=THREAD_SCAN_DAYS))
        .filter(Q(summary_upto_at__isnull=True) | Q(updated_at__gt=F("summary_upto_at")))
        .filter(Q(compress_enqueued_at__lt=cutoff) | Q(compress_enqueued_at__isnull=True))
        .exclude(pk__in=busy)
        .order_by("-updated_at")[:THREAD_SCAN_LIMIT]
    )
    count = 0
    for thread in threads:
        if not runs_to_fold(thread=thread, limit=1):
            continue
        with transaction.atomic():
            claim = Thread.objects.filter(pk=thread.pk)
            if _claimed(claim, "compress_enqueued_at", thread.compress_enqueued_at, now):
                compress_thread_enqueue(thread_id=thread.pk)
                count += 1
    return count


def _reenqueue_jobs(*, now: datetime, stale_after: timedelta) -> int:
    """Governance jobs (memory.services.forget) queued or failed and not picked up since."""
    due = (
        MemoryJob.objects.filter(
            status__in=(
                MemoryJob.Status.QUEUED,
                MemoryJob.Status.RUNNING,
                MemoryJob.Status.FAILED,
            ),
            attempts__lt=settings.MEMORY_JOB_MAX_ATTEMPTS,
        )
        .filter(Q(enqueued_at__lt=now - stale_after) | Q(enqueued_at__isnull=True))
        .order_by("created_at", "pk")
        .values_list("pk", "enqueued_at")
    )
    count = 0
    for job_id, enqueued_at in due:
        with transaction.atomic():
            if _claimed(MemoryJob.objects.filter(pk=job_id), "enqueued_at", enqueued_at, now):
                governance_job_enqueue(job_id=job_id)
                count += 1
    return count


def facts_expire_record(*, now: datetime | None = None) -> int:
    """Record each fact that has expired since the last sweep: one ``expire`` audit event.

    An expired fact is already never injected (``CoreFact.objects.live``); this only
    writes down when its expiry was seen, by the system (no actor). A renewal clears
    ``expired_at``, so a later expiry is recorded again.
    """
    now = now or timezone.now()
    today = timezone.localdate(now)
    count = 0
    due = CoreFact.objects.expired(today=today).filter(expired_at__isnull=True)
    for fact in due.only("pk", "tenant_id", "agent_id", "owner_id", "valid_until"):
        with transaction.atomic():
            # Claimed by a conditional update: two sweeps record one event.
            if CoreFact.objects.filter(pk=fact.pk, expired_at__isnull=True).update(expired_at=now):
                audit_record_scoped(
                    scope=Scope.of(fact),
                    action=Action.EXPIRE,
                    object_type=ObjectType.FACT,
                    object_id=fact.pk,
                    actor_id=None,
                    detail={
                        "valid_until": fact.valid_until.isoformat() if fact.valid_until else None
                    },
                )
                count += 1
    return count


def memory_sweep(
    *, now: datetime | None = None, stale_after_seconds: int | None = None
) -> MemorySweepReport:
    """Re-enqueue unfinished memory work of finished runs, lagging threads, governance
    jobs and knowledge-base documents still processing after ``stale_after``; record the
    facts that expired."""
    now = now or timezone.now()
    stale_after = timedelta(
        seconds=settings.MEMORY_JOB_STALE_AFTER_SECONDS
        if stale_after_seconds is None
        else stale_after_seconds
    )
    runs = _reenqueue_runs(now=now, stale_after=stale_after)
    threads = _reenqueue_threads(now=now, stale_after=stale_after)
    jobs = _reenqueue_jobs(now=now, stale_after=stale_after)
    expired = facts_expire_record(now=now)
    documents = kb_documents_sweep(now=now, stale_after=stale_after)
    return MemorySweepReport(
        runs_reenqueued=runs,
        threads_reenqueued=threads,
        jobs_reenqueued=jobs,
        facts_expired=expired,
        kb_documents_reenqueued=documents,
    )
