"""CPU per memory job, in process and through a real qcluster (#15).

    .venv/bin/python benchmarks/job_cpu.py [--backend sqlite|postgres|all] [--runs 300]
        [--threads 30] [--profile N]

CPU time, not wall-clock time, so that the figures hold on a machine shared with other
work. The runs are the load test's (benchmarks/locustfile.py's messages, threads of six
turns, several threads side by side), finished with no worker running, so that their
memory jobs wait in the queue:

1. in process: every queued job's service called in run order, one at a time:
   CPU ms and database queries per job (``memory.tasks`` entry point, no django-q2);
2. cluster: the same number of new runs, then one ``qcluster`` with one worker started
   and left to drain the queue: the CPU of the whole cluster (sentinel, pusher, worker,
   monitor) per run, from /proc, start-up excluded (measured while idle, subtracted).

``--profile N`` prints the N most expensive functions (cumulative) of part 1.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup

TURNS_PER_THREAD = 6


def _options() -> Any:
    def extra(parser: Any) -> None:
        parser.add_argument("--runs", type=int, default=300)
        parser.add_argument("--threads", type=int, default=30)
        parser.add_argument("--profile", type=int, default=0)
        parser.add_argument("--sort", default="cumulative", help="pstats order of --profile")

    return _setup.parse(__doc__ or "", extra)


def messages() -> list[str]:
    import ast

    source = (Path(__file__).parent / "locustfile.py").read_text()
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MESSAGES":
            return list(ast.literal_eval(node.value))
    raise SystemExit("MESSAGES not found in locustfile.py")


def _finish_runs(*, agent_id: int, owner_id: int, runs: int, threads: int) -> list[int]:
    """``runs`` finished runs, round-robin over ``threads`` threads of six turns."""
    from agents.models import Agent
    from runs.services import run_execute, run_start

    agent = Agent.objects.select_related("provider").get(pk=agent_id)
    texts = messages()
    slots: list[tuple[str | None, int]] = [(None, 0)] * threads
    ids = []
    for index in range(runs):
        slot = index % threads
        thread_id, turns = slots[slot]
        if turns >= TURNS_PER_THREAD:
            thread_id, turns = None, 0
        started = run_start(
            agent=agent,
            owner_id=owner_id,
            user_input=texts[(index + slot) % len(texts)],
            thread_id=thread_id,
        )
        run = run_execute(started=started)
        slots[slot] = (run.thread_id, turns + 1)
        ids.append(run.pk)
    return ids


def _queued() -> list[int]:
    from django_q.models import OrmQ

    return [
        task.args()[0]
        for task in OrmQ.objects.order_by("pk")
        if task.func() == "memory.tasks.after_run"
    ]


def _cluster_cpu(pid: int) -> float:
    """CPU seconds of a process group's members so far (a cluster: its processes)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pid:  # the process group
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def _database_ms(began: float | None, count: int) -> str:
    """The database server's CPU since ``began`` (``_setup.database_cpu``), per item."""
    now = _setup.database_cpu()
    if began is None or now is None:
        return "(not measured)"
    return f"{1000 * (now - began) / count:.2f} ms CPU"


def main() -> None:
    args = _options()
    if not _setup.is_child():
        forwarded = [
            f"--runs={args.runs}",
            f"--threads={args.threads}",
            f"--profile={args.profile}",
            f"--sort={args.sort}",
        ]
        _setup.run_per_backend(__file__, forwarded, args.backend)
        return
    _setup.django_ready()
    from django.db import connection
    from django_q.models import OrmQ

    from agents.models import Agent, Run
    from agents.services_demo import demo_bootstrap
    from memory import tasks

    print(f"job_cpu  backend={connection.vendor}  machine: {_setup.uptime()}")
    account = demo_bootstrap(tenant_name="作业学校", username="jobcpu")
    agent = Agent.objects.get(pk=account.agent_id)
    owner = agent.tenant.memberships.get().user_id

    # 1. in process
    began = time.process_time()
    _finish_runs(agent_id=agent.pk, owner_id=owner, runs=args.runs, threads=args.threads)
    web_cpu = time.process_time() - began
    queued = _queued()
    OrmQ.objects.all().delete()
    # CPU time, not wall-clock time: the database's own work is not counted.
    profile = cProfile.Profile(time.process_time) if args.profile else None
    queries = 0

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        nonlocal queries
        queries += 1
        return execute(sql, params, many, context)

    began = time.process_time()
    database_began = _setup.database_cpu()
    with connection.execute_wrapper(count):
        for run_id in queued:
            if profile:
                profile.enable()
            tasks.after_run(run_id)
            if profile:
                profile.disable()
    job_cpu = time.process_time() - began
    database = _database_ms(database_began, len(queued))
    done = Run.objects.filter(pk__in=queued, memory_state="done").count()
    ops = agent.memory_ops.count()
    print(
        f"job_cpu  backend={connection.vendor} in process: {len(queued)} jobs, "
        f"{1000 * job_cpu / len(queued):.2f} ms CPU/job (profiler "
        f"{'on' if profile else 'off'}), {queries / len(queued):.1f} queries/job, "
        f"{ops / len(queued):.2f} model calls/job, {done} done; the database server "
        f"{database} per job; "
        f"runs themselves (run_start + run_execute): {1000 * web_cpu / args.runs:.2f} ms CPU/run"
    )
    if profile:
        pstats.Stats(profile).sort_stats(args.sort).print_stats(args.profile)

    # 2. through a cluster with one worker
    first = Run.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    _finish_runs(agent_id=agent.pk, owner_id=owner, runs=args.runs, threads=args.threads)
    fresh = Run.objects.filter(pk__gt=first)
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"job-cpu-{os.getpid()}.log"
    cluster = _setup.start_cluster(log, workers=1)
    try:
        deadline = time.monotonic() + 600
        while not fresh.filter(memory_state="done").exists():
            if time.monotonic() > deadline:
                raise SystemExit("timed out waiting for the first memory job")
            time.sleep(0.05)
        # Start-up excluded: from the first job done to the last.
        base_cpu, base_done = _cluster_cpu(cluster.pid), fresh.filter(memory_state="done").count()
        while fresh.exclude(memory_state="done").exists():
            if time.monotonic() > deadline:
                raise SystemExit("timed out waiting for the memory jobs")
            time.sleep(0.05)
        drained = _cluster_cpu(cluster.pid) - base_cpu
        drained_at = time.monotonic()
        time.sleep(5.0)
        idle_rate = (_cluster_cpu(cluster.pid) - base_cpu - drained) / (
            time.monotonic() - drained_at
        )
    finally:
        _setup.stop_group(cluster)
    done_at = sorted(d for d in fresh.values_list("memory_done_at", flat=True) if d is not None)
    span = (done_at[-1] - done_at[0]).total_seconds()
    jobs = len(done_at) - base_done
    print(
        f"job_cpu  backend={connection.vendor} cluster (1 worker): {jobs} jobs after the "
        f"first, {1000 * drained / jobs:.2f} ms CPU/job (every cluster process); idle "
        f"cluster {idle_rate:.3f} cores; {len(done_at) / span:.1f} jobs/s wall "
        f"(first to last done); machine: {_setup.uptime()}"
    )


if __name__ == "__main__":
    main()
