"""Which commits wait for the disk (memory/durability.py): on PostgreSQL a run's start
and its context record do not, its finishing commit does (and flushes them), and the
memory worker's tasks do not. The finishing commit waits by the connection's session
setting, said once per connection. SQLite (WAL, synchronous=NORMAL) is left as it is."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memory.durability import synchronous_commit
from memory.tasks import after_run
from tests.factories import Teacher, run_via_api

pytestmark = pytest.mark.django_db

OFF, ON = "SET LOCAL synchronous_commit TO OFF", "SET SESSION synchronous_commit TO ON"


def _durability_sql(ctx: CaptureQueriesContext) -> list[tuple[int, str]]:
    return [
        (index, query["sql"])
        for index, query in enumerate(ctx.captured_queries)
        if "synchronous_commit" in query["sql"]
    ]


def _finishing_update(ctx: CaptureQueriesContext) -> int:
    return next(
        index
        for index, query in enumerate(ctx.captured_queries)
        if query["sql"].startswith('UPDATE "agents_run" SET "status"')
    )


@pytest.mark.parametrize("path", ["run", "run/stream"])
def test_only_the_finishing_commit_of_a_run_waits_for_the_disk(teacher: Teacher, path: str) -> None:
    with CaptureQueriesContext(connection) as ctx:
        response = teacher.client.post(
            f"/api/agents/{teacher.agent.pk}/{path}", {"input": "出一份数据结构试卷"}, format="json"
        )
        if path == "run/stream":
            b"".join(response.streaming_content)  # type: ignore[attr-defined]
    assert response.status_code == 200
    issued = _durability_sql(ctx)
    if connection.vendor != "postgresql":
        assert issued == []
        return
    # Inside the test's transaction a session setting is never remembered (a rollback
    # would undo it), so every run says it.
    assert [sql for _, sql in issued] == [OFF, OFF, ON]
    # The waiting one comes right before the transaction that stores the answer.
    on_at = issued[-1][0]
    assert on_at < _finishing_update(ctx)
    assert ctx.captured_queries[on_at + 1]["sql"].startswith(("BEGIN", "SAVEPOINT"))


def test_the_worker_commits_without_waiting_and_a_later_run_still_waits(
    teacher: Teacher,
) -> None:
    first = run_via_api(teacher, "出一份数据结构试卷")
    with CaptureQueriesContext(connection) as ctx:
        assert after_run(int(first["id"]))["state"] == "done"
    issued = [sql for _, sql in _durability_sql(ctx)]
    if connection.vendor != "postgresql":
        assert issued == []
        return
    assert issued[0] == "SET SESSION synchronous_commit TO OFF"
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "off"
    # A process that ran a memory task (sync mode) still makes the finishing commit wait.
    with CaptureQueriesContext(connection) as ctx:
        run_via_api(teacher, "简答题换两道", str(first["thread_id"]))
    assert [sql for _, sql in _durability_sql(ctx)][-1] == ON


def _session_setting() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return str(cursor.fetchone()[0])


def _finishing_statements() -> list[str]:
    """What a run's finishing transaction says about durability (as run_finish does)."""
    with CaptureQueriesContext(connection) as ctx:
        synchronous_commit(wait=True, session=True)
        with transaction.atomic():
            pass
    return [query["sql"] for query in ctx.captured_queries if "synchronous_commit" in query["sql"]]


@pytest.mark.django_db(transaction=True)
def test_a_connection_says_it_once_and_every_finishing_commit_still_waits() -> None:
    """Said outside a transaction, the session setting is remembered: later finishing
    commits on the connection send no statement of their own, and still wait. A memory task in the
    same process (sync mode) or a new connection makes the next one say it again."""
    if connection.vendor != "postgresql":
        assert _finishing_statements() == []
        return
    assert _finishing_statements() == [ON]
    assert _session_setting() == "on"
    assert _finishing_statements() == []
    assert _session_setting() == "on"
    synchronous_commit(wait=False, session=True)  # a memory task's
    assert _session_setting() == "off"
    assert _finishing_statements() == [ON]
    assert _session_setting() == "on"
    connection.close()
    assert _finishing_statements() == [ON]
    assert _finishing_statements() == []


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_session_setting_is_not_remembered() -> None:
    if connection.vendor != "postgresql":
        assert _finishing_statements() == []
        return
    synchronous_commit(wait=False, session=True)
    with pytest.raises(RuntimeError), transaction.atomic():
        synchronous_commit(wait=True, session=True)
        raise RuntimeError("rolled back")
    assert _session_setting() == "off"
    assert _finishing_statements() == [ON]
    assert _session_setting() == "on"
