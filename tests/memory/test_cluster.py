"""The memory pipeline with a real qcluster process (file SQLite or PostgreSQL).

Runs are finished by separate driver processes running the server's settings, so each
job travels through the broker to the cluster exactly as in production: the ORM broker,
or Redis when Q_BROKER_URL is set (tests/cluster.py). The ordering and crash tests also
run with 4 workers: correctness never rests on there being one (DESIGN.md "Write path").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.models import OrmQ

from agents.models import Run
from memory.models import RecallEntry, RecallScope
from tests.cluster import (
    Cluster,
    all_memory_done,
    assert_threads_exact,
    broker_kind,
    caught_up,
    drive,
    finish,
    finish_manage,
    manage,
    manage_async,
    queue_purge,
    queue_size,
    wait_until,
)
from tests.factories import Teacher, make_teacher
from tests.fakellm import unused_port

pytestmark = [pytest.mark.slow, pytest.mark.cluster, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _empty_queue() -> Iterator[None]:
    """Leave no task behind: a Redis queue outlives the test database."""
    yield
    queue_purge()


@pytest.fixture
def school(transactional_db: None) -> Teacher:
    return make_teacher(tenant_name="集群学校", username="q")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    started = Cluster(tmp_path / "qcluster.log").start()
    yield started
    started.stop()


@pytest.mark.parametrize("workers", [1, 4], ids=["1-worker", "4-workers"])
def test_two_threads_from_four_processes_fold_every_run_once_in_order(
    school: Teacher, tmp_path: Path, workers: int
) -> None:
    cluster = Cluster(tmp_path / "qcluster.log", workers=workers).start()
    try:
        _fold_two_threads_from_four_processes(school, cluster)
    finally:
        cluster.stop()


def _fold_two_threads_from_four_processes(school: Teacher, cluster: Cluster) -> None:
    agent, owner = school.agent.pk, school.user.pk
    seeds = [
        finish(drive(agent_id=agent, owner_id=owner, count=1, new_thread=True)) for _ in range(2)
    ]
    threads = [str(seed["thread_id"]) for seed in seeds]
    # Four processes, two per thread, 19 more runs per thread (20 with the seed).
    procs = [
        drive(agent_id=agent, owner_id=owner, count=count, thread_id=thread, prefix=f"p{i}")
        for i, (thread, count) in enumerate(
            [(threads[0], 10), (threads[0], 9), (threads[1], 10), (threads[1], 9)]
        )
    ]
    for proc in procs:
        finish(proc)
    assert Run.objects.count() == 40
    wait_until(lambda: all_memory_done() and caught_up(threads), timeout=180, what="jobs to finish")
    assert_threads_exact(threads)
    assert "database is locked" not in cluster.log()


FAULT_POINTS = [
    "compress.before_llm",
    "compress.after_llm",
    "compress.before_commit",
    "compress.after_commit",
    "job.start",
]


def _kill_trial(
    school: Teacher, tmp_path: Path, point: str, trial: int, *, workers: int = 1
) -> None:
    faults = tmp_path / f"faults-{trial}"
    faults.mkdir()
    cluster = Cluster(
        tmp_path / f"qcluster-{trial}.log", workers=workers, MEMORY_FAULT_DIR=str(faults)
    )
    agent, owner = school.agent.pk, school.user.pk
    # Three runs with the cluster down: their jobs wait in the queue.
    seed = finish(drive(agent_id=agent, owner_id=owner, count=3, new_thread=True))
    thread_id = str(seed["thread_id"])
    (faults / f"{point}.pause").touch()
    cluster.start()
    try:
        finish(drive(agent_id=agent, owner_id=owner, count=2, thread_id=thread_id))
        wait_until(lambda: (faults / f"{point}.reached").exists(), timeout=60, what=point)
        cluster.kill()
        (faults / f"{point}.pause").unlink()
        # Restart recovery: a new cluster and one sweep; the killed job's queue row is
        # also redelivered later by django-q2 (at least once): both must be harmless.
        cluster.start()
        manage("memory_sweep", "--stale-after", "0")
        wait_until(
            lambda: all_memory_done() and caught_up([thread_id]), timeout=90, what="recovery"
        )
        assert_threads_exact([thread_id])
    finally:
        cluster.stop()


@pytest.mark.parametrize("trial", range(5))
def test_sigkill_at_fault_points_never_skips_or_double_counts(
    school: Teacher, tmp_path: Path, trial: int
) -> None:
    _kill_trial(school, tmp_path, FAULT_POINTS[trial % len(FAULT_POINTS)], trial)


@pytest.mark.parametrize("trial", range(5, 15))
@pytest.mark.slow_extra
def test_sigkill_more_trials(school: Teacher, tmp_path: Path, trial: int) -> None:
    _kill_trial(school, tmp_path, FAULT_POINTS[trial % len(FAULT_POINTS)], trial)


# With 4 workers the three queued jobs of one thread run side by side, so the kill lands
# while other jobs of the same thread race for its cursor. Two fault points in the
# default suite (after the LLM call, before the commit: the widest race windows), all
# five with `make test-crash`.
@pytest.mark.parametrize("point", ["compress.after_llm", "compress.before_commit"])
def test_sigkill_with_four_workers_never_skips_or_double_counts(
    school: Teacher, tmp_path: Path, point: str
) -> None:
    _kill_trial(school, tmp_path, point, FAULT_POINTS.index(point), workers=4)


@pytest.mark.parametrize("point", FAULT_POINTS)
@pytest.mark.slow_extra
def test_sigkill_with_four_workers_all_points(school: Teacher, tmp_path: Path, point: str) -> None:
    _kill_trial(school, tmp_path, point, FAULT_POINTS.index(point), workers=4)


def test_eight_processes_fifty_runs_each_lose_no_job(school: Teacher, cluster: Cluster) -> None:
    agent, owner = school.agent.pk, school.user.pk
    procs = [
        drive(agent_id=agent, owner_id=owner, count=50, new_thread=True, prefix=f"w{i}")
        for i in range(8)
    ]
    results = [finish(proc, timeout=600) for proc in procs]
    assert Run.objects.count() == 400
    threads = [str(r["thread_id"]) for r in results]
    wait_until(lambda: all_memory_done() and caught_up(threads), timeout=600, what="400 jobs")
    assert Run.objects.filter(memory_state="done").count() == 400
    assert_threads_exact(threads)
    # Recall: exactly one entry per completed run, none lost to concurrent run ends.
    completed = set(Run.objects.filter(status="completed").values_list("pk", flat=True))
    assert len(completed) == 400
    assert sorted(RecallEntry.objects.values_list("run_id", flat=True)) == sorted(completed)
    assert RecallScope.objects.get().entry_count == 400
    assert "database is locked" not in cluster.log()


def test_restart_with_pending_work_on_fifty_threads(school: Teacher, tmp_path: Path) -> None:
    agent, owner = school.agent.pk, school.user.pk
    # With no cluster running, 50 threads get 3 runs each. Then the server "restarts"
    # an hour later with the queue lost (a flushed broker): the work is pending but
    # nothing will deliver it.
    procs = [
        drive(agent_id=agent, owner_id=owner, count=3, new_thread=True, threads=10, prefix=f"t{i}")
        for i in range(5)
    ]
    threads = [str(t) for proc in procs for t in finish(proc)["thread_ids"]]
    assert len(set(threads)) == 50
    queue_purge()
    Run.objects.update(memory_enqueued_at=timezone.now() - timedelta(hours=1))
    assert Run.objects.exclude(memory_state="done").count() == 150

    # Two sweeps at the same moment claim each run once between them.
    sweeps = [manage_async("memory_sweep") for _ in range(2)]
    reports = [json.loads(finish_manage(sweep)) for sweep in sweeps]
    assert sum(r["runs_reenqueued"] for r in reports) == 150
    assert sum(r["threads_reenqueued"] for r in reports) == 0  # their runs carry the work
    assert queue_size() == 150
    again = json.loads(manage("memory_sweep"))
    assert again == {
        "stale_runs_failed": 0,
        "runs_reenqueued": 0,
        "threads_reenqueued": 0,
        "jobs_reenqueued": 0,
        "facts_expired": 0,
        "kb_documents_reenqueued": 0,
    }
    assert queue_size() == 150

    cluster = Cluster(tmp_path / "qcluster.log").start()
    try:
        wait_until(lambda: all_memory_done() and caught_up(threads), timeout=300, what="recovery")
    finally:
        cluster.stop()
    assert_threads_exact(threads)


def test_the_queue_is_on_the_broker_the_environment_names(school: Teacher, tmp_path: Path) -> None:
    """Q_BROKER_URL set: the jobs of runs finished elsewhere wait in Redis, not the ORM."""
    finish(drive(agent_id=school.agent.pk, owner_id=school.user.pk, count=2, new_thread=True))
    expected = "Redis" if broker_kind() == "redis" else "ORM"
    assert type(get_broker()).__name__ == expected
    assert queue_size() == 2
    assert OrmQ.objects.count() == (2 if expected == "ORM" else 0)


def test_a_run_whose_transaction_rolls_back_enqueues_nothing(school: Teacher) -> None:
    """Enqueue-with-the-run on either broker: the ORM row rolls back with the run; on
    Redis the push waits for the commit (transaction.on_commit), so it never happens."""
    agent, owner = school.agent.pk, school.user.pk
    rolled_back = finish(
        drive(agent_id=agent, owner_id=owner, count=3, new_thread=True, rollback=True)
    )
    assert len(rolled_back["run_ids"]) == 3
    assert not Run.objects.filter(pk__in=rolled_back["run_ids"]).exists()
    assert queue_size() == 0
    committed = finish(drive(agent_id=agent, owner_id=owner, count=1, new_thread=True))
    assert queue_size() == 1
    assert Run.objects.get(pk=committed["run_ids"][0]).memory_state == "pending"


@pytest.mark.skipif(
    broker_kind() != "redis",
    # The ORM queue row cannot be lost apart from its run; CI's Redis step runs this.
    reason="Redis only",
)
def test_a_push_lost_with_redis_down_is_recovered_by_the_sweeper(
    school: Teacher, tmp_path: Path
) -> None:
    """Redis down when the run commits: the run still finishes (the failed push is
    logged, never raised), its memory is pending, and the sweeper enqueues it once Redis
    is back (config/settings.py, Q_BROKER_URL)."""
    down = f"redis://127.0.0.1:{unused_port()}/0"
    process = drive(
        agent_id=school.agent.pk,
        owner_id=school.user.pk,
        count=2,
        new_thread=True,
        env={"Q_BROKER_URL": down},
    )
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode()[-3000:]
    run_ids = json.loads(out)["run_ids"]
    runs = Run.objects.filter(pk__in=run_ids)
    assert [r.status for r in runs] == ["completed", "completed"]
    assert {r.memory_state for r in runs} == {"pending"}
    assert queue_size() == 0  # nothing reached the real Redis
    assert b"ConnectionError" in err  # logged, not raised

    report = json.loads(manage("memory_sweep", "--stale-after", "0"))
    assert report["runs_reenqueued"] == 2
    assert queue_size() == 2
    cluster = Cluster(tmp_path / "qcluster.log").start()
    try:
        wait_until(lambda: all_memory_done(), timeout=90, what="the recovered jobs")
    finally:
        cluster.stop()
    assert RecallEntry.objects.filter(run_id__in=run_ids).count() == 2
