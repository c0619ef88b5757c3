"""The background memory job of a finished run (DESIGN.md "Write path").

``after_run_enqueue`` is called inside the transaction that finishes the run, so the
queue row (django-q2 ORM broker) commits or rolls back with it (with Redis as the broker
it is pushed on commit, and the sweeper covers a push that never happened). The task
carries only the run id; ``after_run_process`` loads rows and does, in order: recall
upsert, rolling compression, candidate extraction, knowledge-base archiving. Every step
is idempotent, so a redelivered or duplicated job changes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.db import connection
from django.utils import timezone

from agents.models import Agent, Provider, Run
from agents.rows import PlanCache, RowPlan, column, table, update_row
from memory import faults
from memory.models import Thread
from memory.services.archive import run_archive
from memory.services.candidates import candidates_extract
from memory.services.compression import thread_compress
from memory.services.llm import MemoryDeferred, memory_providers
from memory.services.queue import enqueue
from memory.services.recall import recall_upsert

logger = logging.getLogger(__name__)

TASK_AFTER_RUN = "memory.tasks.after_run"
TASK_COMPRESS_THREAD = "memory.tasks.compress_thread"
TASK_GOVERNANCE = "memory.tasks.governance_job"


def after_run_enqueue(*, run_id: int) -> None:
    """Enqueue the memory job for a run. Call inside the run's finishing transaction."""
    enqueue(TASK_AFTER_RUN, run_id, name=f"after_run:{run_id}")


def compress_thread_enqueue(*, thread_id: str) -> None:
    enqueue(TASK_COMPRESS_THREAD, thread_id, name=f"compress:{thread_id}")


def governance_job_enqueue(*, job_id: int) -> None:
    """Enqueue a governance job (memory.services.forget). Call inside its creating
    transaction."""
    enqueue(TASK_GOVERNANCE, job_id, name=f"governance:{job_id}")


@dataclass
class JobReport:
    run_id: int
    state: str
    steps: list[str] = field(default_factory=list)
    folded_run_ids: list[int] = field(default_factory=list)
    error: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "run_id": self.run_id,
            "state": self.state,
            "steps": self.steps,
            "folded": self.folded_run_ids,
            "error": self.error,
        }


def after_run_process(*, run_id: int) -> JobReport:
    """Do the memory work of one finished run. Idempotent; safe to run twice at once."""
    run = _claim(run_id)
    if run is None:
        return JobReport(run_id=run_id, state="skipped")
    # The claim above made it 1: no job of this run ran before (a duplicate running now
    # reads 2 or more).
    first_attempt = run.memory_attempts == 1
    report = JobReport(run_id=run_id, state="done")
    faults.checkpoint("job.start")
    try:
        recall_upsert(run=run, first_attempt=first_attempt)
        report.steps.append("recall")
        providers = memory_providers(agent=run.agent)
        thread = run.thread
        if thread is not None:
            thread.agent = run.agent  # the same agent, already loaded
            result = thread_compress(
                thread_id=thread.pk, source_run_id=run.pk, thread=thread, providers=providers
            )
            report.folded_run_ids = list(result.folded_run_ids)
            report.steps.append("compress")
        candidates_extract(run=run, first_attempt=first_attempt, providers=providers)
        report.steps.append("extract")
        run_archive(run=run)
        report.steps.append("archive")
    except MemoryDeferred as exc:
        report.state = "failed"
        report.error = exc.code
    except Exception:
        logger.exception("memory job for run %s crashed", run_id)
        report.state = "failed"
        report.error = "internal_error"
    if report.state == "done":
        settled = {"memory_state": Run.MemoryState.DONE, "memory_done_at": timezone.now()}
    else:
        settled = {"memory_state": Run.MemoryState.FAILED, "memory_enqueued_at": timezone.now()}
    update_row(Run, run_id, {**settled, "memory_error": report.error})
    return report


def _claim(run_id: int) -> Run | None:
    """Count an attempt on a finished, not deleted run and load it with its agent, the
    agent's providers and its thread; None when there is no such run.

    Plain SQL (agents/rows.py): every job starts with these two statements, and the ORM
    spent more CPU compiling the join than the database spent running it.
    """
    attempts = column(Run, "memory_attempts")
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table(Run)} SET {attempts} = {attempts} + 1 WHERE {column(Run, 'id')} = %s "
            f"AND {column(Run, 'status')} IN (%s, %s) AND {column(Run, 'deleted_at')} IS NULL",
            [run_id, Run.Status.COMPLETED.value, Run.Status.FAILED.value],
        )
        if not cursor.rowcount:
            return None
    found = _RUN_PLAN.get().fetch_one([run_id])
    assert found is not None  # claimed in this connection a moment ago, never deleted
    run, agent, provider, memory_provider, thread = found
    assert isinstance(run, Run) and isinstance(agent, Agent)
    Run.agent.field.set_cached_value(run, agent)
    Agent.provider.field.set_cached_value(agent, provider)
    Agent.memory_provider.field.set_cached_value(agent, memory_provider)
    Run.thread.field.set_cached_value(run, thread)
    return run


def _run_plan() -> RowPlan:
    on = column
    return RowPlan(
        f"SELECT {{columns}} FROM {table(Run)} r "
        f"JOIN {table(Agent)} a ON a.{on(Agent, 'id')} = r.{on(Run, 'agent')} "
        f"JOIN {table(Provider)} p ON p.{on(Provider, 'id')} = a.{on(Agent, 'provider')} "
        f"LEFT JOIN {table(Provider)} m ON m.{on(Provider, 'id')} = "
        f"a.{on(Agent, 'memory_provider')} "
        f"LEFT JOIN {table(Thread)} t ON t.{on(Thread, 'id')} = r.{on(Run, 'thread')} "
        f"WHERE r.{on(Run, 'id')} = %s",
        [(Run, "r"), (Agent, "a"), (Provider, "p"), (Provider, "m"), (Thread, "t")],
    )


_RUN_PLAN = PlanCache(_run_plan)
