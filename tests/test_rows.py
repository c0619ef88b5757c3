"""The plain-SQL statements of the hot paths (agents/rows.py) do what the ORM would.

Each statement is compared with the ORM query it replaces, field by field and with the
backend's own types, on whichever backend the suite runs (SQLite and PostgreSQL in CI):
the memory job's claim and load, the fallback provider, the inserts of memory ops and
recall entries, the run's final update and the recall scope's version bump.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.db.models.signals import post_save, pre_save
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import Provider, Run
from agents.rows import insert_instance, update_row
from memory.models import MemoryOp, RecallEntry, RecallScope, RunContext, Thread
from memory.scope import Scope
from memory.services.compression import _cursor_q, _runs_after_cursor
from memory.services.jobs import _claim
from memory.services.llm import _record, memory_fallback_provider
from memory.services.recall import _bump_scope
from tests.factories import Teacher, make_provider, run_via_api

pytestmark = pytest.mark.django_db


def _fields(instance: Any) -> dict[str, Any]:
    return {
        field.attname: getattr(instance, field.attname)
        for field in type(instance)._meta.concrete_fields
    }


def test_no_save_signals_on_the_models_written_without_the_orm() -> None:
    """insert_instance and update_row send no signals: nothing may listen for them."""
    for model in (MemoryOp, RecallEntry, Run, RunContext, Thread):
        assert not pre_save.has_listeners(model), model
        assert not post_save.has_listeners(model), model


@pytest.mark.parametrize("memory_provider", [False, True])
@pytest.mark.parametrize("threaded", [True, False])
def test_the_claim_loads_what_the_orm_loads(
    teacher: Teacher, memory_provider: bool, threaded: bool
) -> None:
    agent = teacher.agent
    if memory_provider:
        agent.memory_provider = make_provider(name="记忆模型", base_url="http://127.0.0.1:9/v1")
        agent.save()
    run_id = int(run_via_api(teacher, "出一份数据结构试卷")["id"])
    if not threaded:
        Run.objects.filter(pk=run_id).update(thread=None)
    before = Run.objects.get(pk=run_id).memory_attempts
    with CaptureQueriesContext(connection) as queries:
        run = _claim(run_id)
        assert run is not None
        related = (run.agent, run.agent.provider, run.agent.memory_provider, run.thread)
    assert len(queries) == 2  # the claim and one load, the related objects with it
    orm = Run.objects.select_related(
        "agent", "agent__provider", "agent__memory_provider", "thread"
    ).get(pk=run_id)
    assert orm.memory_attempts == before + 1
    assert _fields(run) == _fields(orm)
    assert _fields(related[0]) == _fields(orm.agent)
    assert _fields(related[1]) == _fields(orm.agent.provider)
    if memory_provider:
        assert related[2] is not None and orm.agent.memory_provider is not None
        assert _fields(related[2]) == _fields(orm.agent.memory_provider)
    else:
        assert related[2] is None
    if threaded:
        assert related[3] is not None and orm.thread is not None
        assert _fields(related[3]) == _fields(orm.thread)
    else:
        assert related[3] is None
    run.memory_error = "x"
    run.save(update_fields=["memory_error"])  # an instance the ORM can write back
    assert Run.objects.get(pk=run_id).memory_error == "x"


@pytest.mark.parametrize(
    "change",
    [
        {"status": Run.Status.RUNNING},
        {"status": Run.Status.QUEUED},
        {"deleted_at": "now"},
        "missing",
    ],
)
def test_the_claim_skips_what_is_not_a_finished_live_run(
    teacher: Teacher, change: dict[str, Any] | str
) -> None:
    run_id = int(run_via_api(teacher, "出一份数据结构试卷")["id"])
    before = Run.objects.get(pk=run_id).memory_attempts
    if change == "missing":
        assert _claim(run_id + 1000) is None
    else:
        assert isinstance(change, dict)
        values = {k: timezone.now() if v == "now" else v for k, v in change.items()}
        Run.objects.filter(pk=run_id).update(**values)
        assert _claim(run_id) is None
    assert Run.objects.get(pk=run_id).memory_attempts == before


def test_a_failed_run_is_claimed(teacher: Teacher) -> None:
    run_id = int(run_via_api(teacher, "出一份数据结构试卷")["id"])
    Run.objects.filter(pk=run_id).update(status=Run.Status.FAILED)
    run = _claim(run_id)
    assert run is not None and run.status == Run.Status.FAILED


def _orm_fallback(exclude_id: int) -> Provider | None:
    return (
        Provider.objects.filter(is_memory_fallback=True, locality=Provider.Locality.LOCAL)
        .exclude(pk=exclude_id)
        .first()
    )


@pytest.mark.parametrize("setup", ["none", "one", "excluded", "cloud_only"])
def test_the_fallback_provider_is_the_orms(teacher: Teacher, setup: str) -> None:
    primary = teacher.agent.provider
    exclude_id = primary.pk
    make_provider(name="云端", base_url="http://127.0.0.1:9/v1")  # never a fallback
    if setup in ("one", "excluded"):
        local = make_provider(
            name="本地",
            base_url="http://127.0.0.1:9/v1",
            locality=Provider.Locality.LOCAL,
            price_in="0.5",
            is_memory_fallback=True,
        )
        if setup == "excluded":
            exclude_id = local.pk
    got = memory_fallback_provider(exclude_id=exclude_id)
    orm = _orm_fallback(exclude_id)
    if setup == "one":
        assert got is not None and orm is not None
        assert _fields(got) == _fields(orm)
        assert got.price_input_per_mtok == Decimal("0.5")
    else:
        assert got is None and orm is None


def test_a_recorded_memory_op_equals_a_created_one(teacher: Teacher) -> None:
    body = run_via_api(teacher, "出一份数据结构试卷")
    run = Run.objects.select_related("agent").get(pk=body["id"])
    provider = make_provider(name="计价模型", base_url="http://127.0.0.1:9/v1", price_in="3")
    with CaptureQueriesContext(connection) as queries:
        op = _record(
            agent=run.agent,
            kind=MemoryOp.Kind.EXTRACT,
            provider=provider,
            thread_id=run.thread_id,
            run_id=run.pk,
            completion=None,
            error_code="timeout",
        )
    assert len(queries) == 1
    assert op.pk is not None and op._state.adding is False
    stored = MemoryOp.objects.get(pk=op.pk)
    assert _fields(stored) == _fields(op)
    orm = MemoryOp.objects.create(
        **{k: v for k, v in _fields(op).items() if k not in ("id", "created_at")}
    )
    mine = {k: v for k, v in _fields(stored).items() if k not in ("id", "created_at")}
    theirs = {k: v for k, v in _fields(MemoryOp.objects.get(pk=orm.pk)).items()}
    assert mine == {k: v for k, v in theirs.items() if k not in ("id", "created_at")}
    assert (
        stored.created_at is not None
        and abs(stored.created_at - orm.created_at).total_seconds() < 60
    )


def test_an_inserted_recall_entry_reads_back_as_written(teacher: Teacher) -> None:
    body = run_via_api(teacher, "出一份数据结构试卷")
    run = Run.objects.get(pk=body["id"])
    RecallEntry.objects.filter(run_id=run.pk).delete()
    entry = RecallEntry(
        **Scope.of(run).filter_kwargs(),
        run_id=run.pk,
        thread_id=run.thread_id,
        text="数据结构试卷 「引号」 emoji 🙂",
        terms="#v2 数据 结构",
        created_at=run.created_at,
    )
    insert_instance(entry)
    stored = RecallEntry.objects.get(pk=entry.pk)
    assert _fields(stored) == _fields(entry)
    assert stored.created_at == run.created_at


def test_update_row_is_update(teacher: Teacher) -> None:
    run_id = int(run_via_api(teacher, "出一份数据结构试卷")["id"])
    moment = timezone.now()
    changed = update_row(
        Run, run_id, {"memory_state": Run.MemoryState.FAILED, "memory_enqueued_at": moment}
    )
    assert changed == 1
    run = Run.objects.get(pk=run_id)
    assert run.memory_state == Run.MemoryState.FAILED and run.memory_enqueued_at == moment
    assert update_row(Run, run_id + 1000, {"memory_error": "x"}) == 0


def test_the_scope_bump_keeps_the_greatest_entry_id(teacher: Teacher) -> None:
    run_id = int(run_via_api(teacher, "出一份数据结构试卷")["id"])
    scope = Scope.of(Run.objects.get(pk=run_id))
    RecallScope.objects.filter(**scope.filter_kwargs()).delete()
    _bump_scope(scope=scope, entry_id=50)  # creates the row
    row = RecallScope.objects.get(**scope.filter_kwargs())
    assert (row.version, row.entry_count, row.max_entry_id) == (1, 1, 50)
    _bump_scope(scope=scope, entry_id=20, count=3)  # an older id: the greatest stays
    row.refresh_from_db()
    assert (row.version, row.entry_count, row.max_entry_id) == (2, 4, 50)
    _bump_scope(scope=scope, entry_id=70)
    row.refresh_from_db()
    assert (row.version, row.entry_count, row.max_entry_id) == (3, 5, 70)


@pytest.mark.parametrize("cursor", ["none", "middle", "tie"])
def test_the_runs_after_the_cursor_are_the_orms(teacher: Teacher, cursor: str) -> None:
    first = run_via_api(teacher, "第一轮")
    thread_id = first["thread_id"]
    for turn in range(5):
        run_via_api(teacher, f"第{turn + 2}轮", thread_id)
    runs = list(Run.objects.filter(thread_id=thread_id).order_by("created_at", "pk"))
    thread = Thread.objects.get(pk=thread_id)
    if cursor == "tie":  # three runs at one moment: the id breaks the tie
        Run.objects.filter(pk__in=[r.pk for r in runs[1:4]]).update(created_at=runs[1].created_at)
    if cursor != "none":
        upto = Run.objects.get(pk=runs[2].pk)
        thread.summary_upto_at, thread.summary_upto_run_id = upto.created_at, upto.pk
        thread.save()
    for limit in (2, 10):
        got = _runs_after_cursor(thread, limit)
        orm = list(
            Run.objects.filter(thread_id=thread_id)
            .filter(_cursor_q(thread))
            .order_by("created_at", "pk")[:limit]
        )
        assert [_fields(r) for r in got] == [_fields(r) for r in orm]
        assert len(got) == min(limit, {"none": 6, "middle": 3, "tie": 3}[cursor])


@pytest.mark.parametrize(
    ("where", "matches"),
    [
        ({"status": Run.Status.COMPLETED}, True),
        ({"status": Run.Status.RUNNING}, False),
        ({"deleted_at": None}, True),
        ({"status": (Run.Status.FAILED, Run.Status.COMPLETED), "deleted_at": None}, True),
        ({"status": (Run.Status.FAILED, Run.Status.RUNNING)}, False),
        ({"memory_error": ""}, True),
    ],
)
def test_update_row_where_is_filter_update(
    teacher: Teacher, where: dict[str, Any], matches: bool
) -> None:
    run_id = int(run_via_api(teacher, "出一份数据结构试卷")["id"])
    expected = Run.objects.filter(
        pk=run_id,
        **{
            f"{k}__isnull" if v is None else f"{k}__in" if isinstance(v, tuple) else k: True
            if v is None
            else v
            for k, v in where.items()
        },
    ).count()
    assert expected == int(matches)
    assert update_row(Run, run_id, {"memory_error": "改了"}, where=where) == int(matches)
    assert (Run.objects.get(pk=run_id).memory_error == "改了") is matches


def test_a_new_thread_reads_back_as_the_run_made_it(teacher: Teacher) -> None:
    body = run_via_api(teacher, "  出一份\n数据结构试卷  ")
    thread = Thread.objects.get(pk=body["thread_id"])
    assert thread.title == "出一份 数据结构试卷"
    assert len(thread.pk) > 0 and thread.status == Thread.Status.ACTIVE
    assert thread.created_at == thread.updated_at
    assert Run.objects.get(pk=body["id"]).thread_id == thread.pk
