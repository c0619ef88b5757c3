"""Restart recovery (DESIGN.md "Write path"): ``manage.py memory_sweep`` and its schedule.

First the run step: a run still ``running`` long after it started was abandoned (a
killed web process) and is settled as failed, which enqueues its memory job like any
finished run. Then the memory steps (``memory.services.sweeper``): finished runs whose
memory job never completed, and threads whose summary lags, are enqueued again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from agents.models import Run
from memory.services.sweeper import memory_sweep
from runs.services import ERROR_STALE, run_finish


@dataclass(frozen=True, slots=True)
class SweepReport:
    stale_runs_failed: int
    runs_reenqueued: int
    threads_reenqueued: int
    jobs_reenqueued: int
    facts_expired: int
    kb_documents_reenqueued: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def runs_fail_stale(*, now: datetime) -> int:
    """Settle runs stuck in ``running`` as failed (``run_stale``). Returns how many."""
    cutoff = now - timedelta(seconds=settings.RUN_STALE_AFTER_SECONDS)
    stale = (
        Run.objects.visible()
        .filter(status=Run.Status.RUNNING, started_at__lt=cutoff)
        .select_related("agent", "agent__provider")
    )
    failed = 0
    for run in stale:
        settled = run_finish(run=run, error_code=ERROR_STALE)
        # run_finish only settles a run that is still running (conditional update).
        if settled.error_code == ERROR_STALE and settled.finished_at and settled.finished_at >= now:
            failed += 1
    return failed


def recovery_sweep(
    *, now: datetime | None = None, stale_after_seconds: int | None = None
) -> SweepReport:
    """Fail abandoned runs, then re-enqueue unfinished memory work, lagging threads and
    knowledge-base documents whose processing was lost."""
    now = now or timezone.now()
    failed = runs_fail_stale(now=now)
    memory = memory_sweep(now=now, stale_after_seconds=stale_after_seconds)
    return SweepReport(
        stale_runs_failed=failed,
        runs_reenqueued=memory.runs_reenqueued,
        threads_reenqueued=memory.threads_reenqueued,
        jobs_reenqueued=memory.jobs_reenqueued,
        facts_expired=memory.facts_expired,
        kb_documents_reenqueued=memory.kb_documents_reenqueued,
    )
