"""Memory-job throughput and latency with a real qcluster and the offline provider (#4).

    .venv/bin/python benchmarks/jobs.py [--backend sqlite|postgres|all] [--runs 200]

1. Backlog: N runs finished with the worker stopped, then one worker started:
   jobs per second until all are done.
2. Live: 8 processes finish N runs (one every 0.5 s each) while the worker runs:
   p50/p95 from a run's end (finished_at) to its memory job done (summary updated;
   memory_done_at).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup


def main() -> None:
    args = _setup.parse(__doc__ or "", lambda p: p.add_argument("--runs", type=int, default=200))
    if not _setup.is_child():
        _setup.run_per_backend(__file__, ["--runs", str(args.runs)], args.backend)
        return
    _setup.django_ready()
    from django.db import connection

    from agents.models import Agent, Run
    from agents.services_demo import demo_bootstrap
    from memory.models import Thread

    account = demo_bootstrap(tenant_name="基准学校", username="bench")
    agent = Agent.objects.get(pk=account.agent_id)
    owner = agent.tenant.memberships.get().user_id
    log = (
        Path(os.environ["DATABASE_URL"].split("///")[-1]).parent / "qcluster.log"
        if "sqlite" in os.environ["DATABASE_URL"]
        else Path("/tmp/bench-qcluster.log")
    )

    def wait_done(total: int, timeout: float = 900) -> None:
        deadline = time.monotonic() + timeout
        while Run.objects.filter(memory_state="done").count() < total:
            if time.monotonic() > deadline:
                raise SystemExit("timed out")
            time.sleep(0.1)

    # 1. backlog throughput
    _setup.drive_runs(agent=agent.pk, owner=owner, procs=4, count=args.runs // 4)
    backlog = Run.objects.count()
    cluster = _setup.start_cluster(log)
    began = time.monotonic()
    wait_done(backlog)
    elapsed = time.monotonic() - began
    print(
        f"jobs  backend={connection.vendor:<10} backlog={backlog} jobs in {elapsed:.1f} s "
        f"= {backlog / elapsed:.1f} jobs/s (incl. worker start-up)"
    )

    # 2. live latency: 8 processes, one thread each, a run every 0.5 s per process
    # (~16 runs/s offered, below the worker's capacity, so latency is not queueing).
    _setup.drive_runs(agent=agent.pk, owner=owner, procs=8, count=args.runs // 8, pace=0.5)
    total = Run.objects.count()
    wait_done(total)
    # Every job is done: nothing is lost by stopping the worker hard.
    os.killpg(cluster.pid, signal.SIGKILL)
    cluster.wait(timeout=30)
    latencies = sorted(
        (r.memory_done_at - r.finished_at).total_seconds() * 1000
        for r in Run.objects.filter(pk__gt=0)
        .order_by("pk")[backlog:]
        .only("finished_at", "memory_done_at")
        if r.memory_done_at is not None and r.finished_at is not None
    )
    p50, p95 = _setup.percentiles(latencies)
    summaries = Thread.objects.exclude(rolling_summary="").count()
    print(
        f"jobs  backend={connection.vendor:<10} live: {len(latencies)} runs, run end -> memory "
        f"done p50={p50:.0f} ms p95={p95:.0f} ms; threads with a summary: {summaries}"
    )


if __name__ == "__main__":
    main()
