"""The sweeper's run step: abandoned runs are failed once, then their memory job runs."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from django_q.models import Schedule

from agents.models import Run
from runs.services import ERROR_STALE, run_start
from runs.sweeper import recovery_sweep
from runs.tasks import sweep
from tests.factories import Teacher

pytestmark = pytest.mark.django_db


def abandoned(teacher: Teacher, text: str, *, age: timedelta) -> Run:
    """A run that started ``age`` ago and whose web process died before it finished."""
    run = run_start(agent=teacher.agent, owner_id=teacher.user.pk, user_input=text).run
    Run.objects.filter(pk=run.pk).update(started_at=timezone.now() - age)
    return run


def test_a_stale_run_is_failed_once_and_a_fresh_one_is_left_alone(
    teacher: Teacher, django_capture_on_commit_callbacks: Any
) -> None:
    stale = abandoned(teacher, "出一份试卷", age=timedelta(hours=1))
    fresh = abandoned(teacher, "再出一份", age=timedelta(seconds=5))

    # The memory job is enqueued on commit of the settling transaction (sync mode).
    with django_capture_on_commit_callbacks(execute=True) as enqueued:
        report = recovery_sweep()

    assert report.stale_runs_failed == 1
    stale.refresh_from_db()
    fresh.refresh_from_db()
    assert (stale.status, stale.error_code, stale.output) == ("failed", ERROR_STALE, "")
    assert stale.finished_at is not None
    # Settled like any finished run: its memory job was enqueued, and it ran.
    assert len(enqueued) == 1
    assert stale.memory_state == Run.MemoryState.DONE
    assert fresh.status == Run.Status.RUNNING
    assert recovery_sweep().as_dict() == {
        "stale_runs_failed": 0,
        "runs_reenqueued": 0,
        "threads_reenqueued": 0,
        "jobs_reenqueued": 0,
        "facts_expired": 0,
        "kb_documents_reenqueued": 0,
    }


def test_a_stale_run_shows_as_failed_through_the_api(teacher: Teacher) -> None:
    stale = abandoned(teacher, "出一份试卷", age=timedelta(hours=1))
    sweep()
    body = teacher.client.get(f"/api/runs/{stale.pk}").json()
    assert body["status"] == "failed"
    assert body["error_code"] == "run_stale"
    assert "长时间没有完成" in body["error_message"]


def test_the_schedule_calls_the_runs_task() -> None:
    schedule = Schedule.objects.get(name="memory-sweep")
    assert schedule.func == "runs.tasks.sweep"
    assert schedule.minutes == 5 and schedule.repeats == -1
