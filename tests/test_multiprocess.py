"""Several web processes and the memory worker stay consistent (DESIGN.md "Storage and scale").

Two gunicorn servers — separate processes, each with its own in-memory recall indexes,
caches of the database checked against a version row on every search — and a real
qcluster with two workers, all on the test database (SQLite in CI's first pass,
PostgreSQL in its second). Eight clients run at once, two per teacher (so two threads
write into one memory scope side by side), each alternating between the two servers and
between sync and streamed runs. After every run, as soon as the worker has written its
memory, every search in :data:`SEARCHES` is asked of both processes: the two answers must
be identical, and a search that should find the new run must already find it. At the
end every thread's rolling summary has folded each of its old runs exactly once, in
order, with its cursor on the last one, and both processes list the same runs.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.db import connection

from memory.models import RecallScope, Thread
from memory.scope import Scope
from tests.cluster import (
    Cluster,
    Gunicorn,
    all_memory_done,
    assert_threads_exact,
    caught_up,
    production_env,
    queue_purge,
    wait_until,
)
from tests.factories import Teacher, make_teacher

pytestmark = [pytest.mark.slow, pytest.mark.cluster, pytest.mark.django_db(transaction=True)]

CLIENTS = 8
RUNS_PER_CLIENT = 6
MEMORY_TIMEOUT = 90.0
PAIR_ATTEMPTS = 20
TOPICS = ["数据结构", "线性代数", "古诗词", "电磁学", "有机化学", "世界史", "概率论", "编译原理"]


@dataclass
class Client:
    """One simulated teacher's browser tab: a thread of its own, on both servers."""

    index: int
    teacher: Teacher
    ports: tuple[int, int]
    thread_id: str | None = None
    run_ids: list[int] = field(default_factory=list)
    searches: int = 0
    straddled: int = 0  # answer pairs asked again: a write came in between

    def request(
        self, port: int, method: str, path: str, body: dict[str, Any] | None = None
    ) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = {"Authorization": f"Token {self.teacher.token}"}
        payload = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            payload = json.dumps(body).encode()
        try:
            conn.request(method, path, body=payload, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def get_json(self, port: int, path: str) -> Any:
        status, body = self.request(port, "GET", path)
        assert status == 200, (port, path, status, body[:500])
        return json.loads(body)


@dataclass(frozen=True)
class FinishedRun:
    run_id: int
    thread_id: str
    marker: str


@dataclass(frozen=True)
class Search:
    """A search both processes must answer identically right after the worker wrote.

    ``path`` builds the GET request for a client's finished run; ``finds`` (if given)
    says whether an answer contains that run, which it must already do.
    """

    name: str
    path: Callable[[Client, FinishedRun], str]
    finds: Callable[[Any, FinishedRun], bool] | None = None


def _recall_hit_runs(answer: Any) -> list[int]:
    return [hit["run_id"] for hit in answer["results"]]


SEARCHES: list[Search] = [
    # The run's own words: its recall entry must be there, ranked the same by both.
    Search(
        "recall",
        lambda c, r: f"/api/agents/{c.teacher.agent.pk}/recall?q={quote(r.marker)}&limit=20",
        lambda answer, r: r.run_id in _recall_hit_runs(answer),
    ),
    # As the read path asks it: the thread's summary and recent turns join the query
    # (and its verbatim turns are excluded), so the thread's state must agree too.
    Search(
        "recall in thread",
        lambda c, r: (
            f"/api/agents/{c.teacher.agent.pk}/recall"
            f"?q={quote('上次的' + TOPICS[c.index] + '试卷')}&thread_id={r.thread_id}&limit=20"
        ),
    ),
    # The knowledge-base search joins here when it lands (branch kb): a Search whose path
    # asks it for a document of the client's scope, answered alike by both processes.
]


def _run(client: Client, number: int) -> FinishedRun:
    """One run on one of the servers, sync or streamed, alternating."""
    port = client.ports[(client.index + number) % 2]
    marker = f"mk{client.index}x{number}q"
    body: dict[str, Any] = {
        "input": f"第{number}次：出一份{TOPICS[client.index]}小测验，编号 {marker}",
        "thread_id": client.thread_id,
    }
    path = f"/api/agents/{client.teacher.agent.pk}/run"
    if number % 2:
        status, raw = client.request(port, "POST", f"{path}/stream", body)
        assert status == 200, raw[:500]
        events = [
            dict(line.split(": ", 1) for line in block.splitlines())
            for block in raw.decode().split("\n\n")
            if block.strip()
        ]
        assert [e["event"] for e in events][:: len(events) - 1] == ["started", "done"], events
        started = json.loads(events[0]["data"])
        run_id, thread_id = int(started["run_id"]), str(started["thread_id"])
    else:
        status, raw = client.request(port, "POST", path, body)
        assert status in (200, 201), raw[:500]
        run = json.loads(raw)
        assert run["status"] == "completed", run
        run_id, thread_id = int(run["id"]), str(run["thread_id"])
    assert client.thread_id in (None, thread_id)
    client.thread_id = thread_id
    client.run_ids.append(run_id)
    return FinishedRun(run_id=run_id, thread_id=thread_id, marker=marker)


def _memory_written(client: Client, run: FinishedRun) -> None:
    wait_until(
        lambda: (
            client.get_json(client.ports[0], f"/api/runs/{run.run_id}")["memory_state"] == "done"
        ),
        timeout=MEMORY_TIMEOUT,
        interval=0.1,
        what=f"the memory job of run {run.run_id}",
    )


def _memory_version(client: Client) -> tuple[object, ...]:
    """What the searches read besides the query: the scope's recall version and the
    client's thread cursor. (The knowledge base's version joins it with its search.)"""
    scope = Scope.for_agent(client.teacher.agent, owner_id=client.teacher.user.pk)
    recall = RecallScope.objects.filter(**scope.filter_kwargs()).values_list("version").first()
    thread = (
        Thread.objects.filter(pk=client.thread_id)
        .values_list("summary_upto_run_id", "updated_at")
        .first()
    )
    return recall, thread


def _both_answer_alike(client: Client, run: FinishedRun) -> None:
    """Each search, asked of both processes while nothing changed in between, gets the
    same answer. The other client of the same teacher may be writing into the scope at
    that moment: a pair of answers that straddles a write is asked again."""
    for search in SEARCHES:
        path = search.path(client, run)
        for _ in range(PAIR_ATTEMPTS):
            before = _memory_version(client)
            first, second = (client.get_json(port, path) for port in client.ports)
            if _memory_version(client) == before:
                break
            client.straddled += 1
        else:
            raise AssertionError(f"{search.name}: the scope never stood still for {path}")
        assert first == second, f"{search.name}: the two processes differ for {path}"
        if search.finds is not None:
            assert search.finds(first, run), f"{search.name}: run {run.run_id} not found"
        client.searches += 1


def _client_session(client: Client) -> Client:
    try:
        for number in range(RUNS_PER_CLIENT):
            run = _run(client, number)
            _memory_written(client, run)
            _both_answer_alike(client, run)
    finally:
        connection.close()  # this thread's own connection (_memory_version)
    return client


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[int, int]]:
    """Two gunicorn servers (one process each) and a cluster with two workers."""
    (tmp_path / "static").mkdir()  # the API serves no static file: none collected
    env = production_env(tmp_path / "static", WEB_PROCESSES="1", WEB_THREADS="4")
    # One secret key for all: the cluster checks the signature of every queued task.
    cluster = Cluster(
        tmp_path / "qcluster.log", workers=2, DJANGO_SECRET_KEY=env["DJANGO_SECRET_KEY"]
    ).start()
    web = [Gunicorn(tmp_path / f"gunicorn-{i}.log", env) for i in range(2)]
    try:
        for server in web:
            server.start(ready_path="/api/runs/0")
        yield web[0].port, web[1].port
    finally:
        for server in web:
            server.stop()
        cluster.stop()
        queue_purge()


def test_two_web_processes_answer_alike_while_eight_clients_run(
    servers: tuple[int, int],
) -> None:
    teachers = [make_teacher(tenant_name=f"一致性学校{i % 2}", username=f"mp{i}") for i in range(4)]
    clients = [Client(index=i, teacher=teachers[i // 2], ports=servers) for i in range(CLIENTS)]
    with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
        finished = list(pool.map(_client_session, clients))

    assert sum(len(c.run_ids) for c in finished) == CLIENTS * RUNS_PER_CLIENT
    assert all(c.searches == RUNS_PER_CLIENT * len(SEARCHES) for c in finished)
    threads = [str(c.thread_id) for c in finished]
    assert len(set(threads)) == CLIENTS
    wait_until(lambda: all_memory_done() and caught_up(threads), timeout=60, what="the cursors")
    assert_threads_exact(threads)
    for client in finished:
        listings = [
            client.get_json(port, f"/api/threads/{client.thread_id}/runs?page_size=50")
            for port in servers
        ]
        assert listings[0] == listings[1]
        listed = sorted(run["id"] for run in listings[0]["results"])
        assert listed == sorted(client.run_ids)
