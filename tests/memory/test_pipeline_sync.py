"""The memory job in-process (django-q2 sync mode): order of steps, cursor, ledger."""

from __future__ import annotations

import re

import pytest
from django.conf import settings

from agents.models import Run
from memory.models import MemoryOp, Thread
from memory.services.compression import AHEAD_READ, FOLD_BATCH, runs_to_fold, thread_compress
from memory.services.jobs import after_run_process
from runs.services import run_execute, run_start
from tests.factories import Teacher, run_via_api

pytestmark = pytest.mark.django_db


send = run_via_api


def markers(summary: str) -> list[int]:
    return [int(m) for m in re.findall(r"#(\d+)", summary)]


def test_job_is_enqueued_on_commit_and_folds_old_turns(
    teacher: Teacher, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first = send(teacher, "出一份数据结构试卷")
    thread_id = str(first["thread_id"])
    run_ids = [int(first["id"])]  # type: ignore[call-overload]
    for text in ["简答题换两道", "选择题再加三道", "把难度调低一点", "加上参考答案"]:
        with django_capture_on_commit_callbacks(execute=True):
            run_ids.append(int(send(teacher, text, thread_id)["id"]))  # type: ignore[call-overload]
    thread = Thread.objects.get(pk=thread_id)
    # Everything but the K=2 most recent runs is folded, once, in order.
    assert markers(thread.rolling_summary) == run_ids[:-2]
    assert thread.summary_upto_run_id == run_ids[-3]
    assert set(Run.objects.values_list("memory_state", flat=True)) == {"done"}
    ops = MemoryOp.objects.filter(thread_id=thread_id, kind="compress")
    assert ops.count() == 3 and all(op.success for op in ops)
    # Memory cost is never written into runs.
    detail = teacher.client.get(f"/api/threads/{thread_id}").json()
    assert (
        detail["totals"]["memory_op_count"] == MemoryOp.objects.filter(thread_id=thread_id).count()
    )
    assert detail["totals"]["memory_op_count"] >= 3
    assert detail["summary_upto_run_id"] == run_ids[-3]


def test_job_twice_changes_nothing(teacher: Teacher, django_capture_on_commit_callbacks) -> None:
    thread_id = None
    for text in ["第一问", "第二问", "第三问", "第四问"]:
        thread_id = str(send(teacher, text, thread_id)["thread_id"])
    last = Run.objects.order_by("-pk").first()
    assert last is not None
    after_run_process(run_id=last.pk)
    thread = Thread.objects.get(pk=thread_id)
    before = (thread.rolling_summary, thread.summary_upto_run_id)
    ops = MemoryOp.objects.count()
    after_run_process(run_id=last.pk)
    thread_compress(thread_id=thread_id)
    thread.refresh_from_db()
    assert (thread.rolling_summary, thread.summary_upto_run_id) == before
    assert MemoryOp.objects.count() == ops


def test_running_run_stops_the_fold(teacher: Teacher) -> None:
    thread_id = None
    for text in ["一", "二", "三", "四", "五"]:
        thread_id = str(send(teacher, text, thread_id)["thread_id"])
    runs = list(Run.objects.order_by("pk"))
    # Pretend the second run is still running (a slow stream): nothing after it may be
    # folded before it, or the cursor would skip it for ever.
    Run.objects.filter(pk=runs[1].pk).update(status=Run.Status.RUNNING)
    thread_compress(thread_id=thread_id)
    thread = Thread.objects.get(pk=thread_id)
    assert markers(thread.rolling_summary) == [runs[0].pk]
    Run.objects.filter(pk=runs[1].pk).update(status=Run.Status.FAILED)
    thread_compress(thread_id=thread_id)
    thread.refresh_from_db()
    assert markers(thread.rolling_summary) == [r.pk for r in runs[:3]]


def _due_by_definition(thread: Thread, *, limit: int) -> list[int]:
    """What runs_to_fold must return, straight from its definition: after the cursor,
    before the K most recent finished runs, the unbroken finished prefix, at most limit."""
    runs = list(Run.objects.filter(thread_id=thread.pk).order_by("created_at", "pk"))
    finished = [r for r in runs if r.is_finished]
    keep = settings.THREAD_RECENT_TURNS
    if len(finished) < keep:
        return []
    oldest_kept = finished[-keep]
    cursor = (thread.summary_upto_at, thread.summary_upto_run_id or 0)
    due = []
    for run in runs:
        if thread.summary_upto_at is not None and (run.created_at, run.pk) <= cursor:
            continue
        if (run.created_at, run.pk) >= (oldest_kept.created_at, oldest_kept.pk):
            break
        if not run.is_finished or len(due) == limit:
            break
        due.append(run.pk)
    return due


@pytest.mark.parametrize("count", [3, 6, FOLD_BATCH + 12], ids=["short", "six", "backlog"])
def test_what_is_due_is_read_in_one_query_or_two_and_is_the_same(
    teacher: Teacher, count: int, django_assert_max_num_queries
) -> None:
    """runs_to_fold reads the runs past the cursor at once when they are few (one query),
    and looks the recent window up on its own when there are more (the long way, as
    before): both give the definition's answer, with a run still running in the
    middle, before and after folds."""
    thread_id = None
    for index in range(count):
        # The services, not the API: more runs than the per-teacher throttle allows.
        started = run_start(
            agent=teacher.agent,
            owner_id=teacher.user.pk,
            user_input=f"第{index}问",
            thread_id=thread_id,
        )
        thread_id = run_execute(started=started).thread_id
    runs = list(Run.objects.filter(thread_id=thread_id).order_by("pk"))
    Run.objects.filter(pk=runs[count // 2].pk).update(status=Run.Status.RUNNING)
    for _round in range(3):
        thread = Thread.objects.get(pk=thread_id)
        for limit in (1, 5, FOLD_BATCH):
            with django_assert_max_num_queries(3 if count > AHEAD_READ else 1):
                got = [run.pk for run in runs_to_fold(thread=thread, limit=limit)]
            assert got == _due_by_definition(thread, limit=limit)
        thread_compress(thread_id=str(thread_id))
        Run.objects.filter(pk=runs[count // 2].pk).update(status=Run.Status.COMPLETED)
    thread = Thread.objects.get(pk=thread_id)
    # Folded once each, in order: all but the two most recent.
    assert markers(thread.rolling_summary) == [run.pk for run in runs[:-2]]
