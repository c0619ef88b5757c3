"""The memory job in-process (django-q2 sync mode): order of steps, cursor, ledger."""

from __future__ import annotations

import re

import pytest

from agents.models import Run
from memory.models import MemoryOp, Thread
from memory.services.compression import thread_compress
from memory.services.jobs import after_run_process
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
