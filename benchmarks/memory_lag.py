"""Memory throughput at scale: run end → memory done, with 1, 2 and 4 workers (#15).

    .venv/bin/python benchmarks/memory_lag.py [--backend sqlite|postgres|all]
        [--workers 1,2,4] [--models offline,paced] [--seconds 30]

Two memory models, the runs themselves always on the offline model at zero delay:
- ``offline``: the built-in model, no delay: what the job itself costs (recall upsert,
  rolling compression, fact extraction, red line; database writes);
- ``paced``: the agent's memory model is the loopback fake OpenAI-compatible server
  (tests/fakellm.py) answering each call after 1–3 s (uniform), as a real model would,
  with the offline model's own answers (so summaries fold and facts are proposed; the
  red-line judge is asked about each proposal, as with any real model).

For each model and worker count, on a fresh teacher:
1. capacity: a backlog of runs finished with the cluster stopped, then the cluster
   started: jobs per second from the first job done to the last (start-up excluded).
   This is the rate at which that many workers saturate;
2. sustained: driver processes finish runs at a fixed offered rate for --seconds while
   the cluster runs; lag = memory_done_at − finished_at per run, after the queue drains.
   An offered rate above the capacity shows as a lag that grows with the run's place in
   the load (p95 and max far above p50).
"""

from __future__ import annotations

import os
import random
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup

# Django is configured in the per-backend child only (_setup.django_ready), so Django and
# project modules are imported inside the functions that run there, after it.

# Offered load of the sustained phase per memory model: (driver processes, seconds
# between runs per process, threads per process). offline: ~32 runs/s; paced: 0.5 runs/s.
# Each process's runs go round-robin over its threads, so a thread's next run comes
# 1 s (offline) or 16 s (paced) after its last, as a teacher's would, not at once.
OFFERED = {"offline": (8, 0.25, 4), "paced": (1, 2.0, 8)}
# Backlog of the capacity phase per worker.
BACKLOG_PER_WORKER = {"offline": 96, "paced": 6}
MODEL_DELAY = (1.0, 3.0)
DRAIN_TIMEOUT = 600.0


def _options() -> Any:
    def extra(parser: Any) -> None:
        parser.add_argument("--workers", default="1,2,4")
        parser.add_argument("--models", default="offline,paced")
        parser.add_argument("--seconds", type=int, default=30)

    return _setup.parse(__doc__ or "", extra)


def _paced_reply(body: dict[str, Any]) -> str:
    """What the offline model would answer, after a real model's thinking time."""
    from agents.providers.offline import RUN_MARKER_RE, propose_facts, summarise

    time.sleep(random.uniform(*MODEL_DELAY))
    user = next(
        (m["content"] for m in reversed(body.get("messages", [])) if m.get("role") == "user"),
        "",
    )
    if RUN_MARKER_RE.search(user):
        return summarise(user)
    if "【候选记忆】" in user:
        return "NO"
    return propose_facts(user)


def main() -> None:
    args = _options()
    if not _setup.is_child():
        forwarded = [f"--workers={args.workers}", f"--models={args.models}"]
        _setup.run_per_backend(__file__, [*forwarded, f"--seconds={args.seconds}"], args.backend)
        return
    _setup.django_ready()
    from django.db import connection

    from agents.models import Agent, Provider, Run
    from agents.services_demo import demo_bootstrap
    from tests.fakellm import FakeLLMServer

    print(f"memory_lag  backend={connection.vendor}  machine: {_setup.uptime()}")
    fake = FakeLLMServer(reply=_paced_reply).start()
    paced = Provider.objects.create(
        name="paced-fake",
        kind=Provider.Kind.OPENAI_COMPAT,
        base_url=fake.base_url,
        model="fake-model",
        locality=Provider.Locality.LOCAL,
        price_input_per_mtok=Decimal("1"),
        price_output_per_mtok=Decimal("2"),
        timeout_seconds=30,
    )
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"memory-lag-{os.getpid()}.log"
    print(
        "| memory model | workers | capacity jobs/s | offered runs/s | runs | "
        "lag p50 s | lag p95 s | lag max s | memory calls/job |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for model in args.models.split(","):
            for workers in [int(w) for w in args.workers.split(",")]:
                account = demo_bootstrap(
                    tenant_name=f"滞后学校-{model}-{workers}", username=f"lag-{model}-{workers}"
                )
                agent = Agent.objects.get(pk=account.agent_id)
                if model == "paced":
                    agent.memory_provider = paced
                    agent.save(update_fields=["memory_provider"])
                owner = agent.tenant.memberships.get().user_id
                runs = Run.objects.filter(agent=agent)

                def drained(timeout: float = DRAIN_TIMEOUT) -> None:
                    deadline = time.monotonic() + timeout
                    while runs.exclude(memory_state="done").exists():  # noqa: B023
                        if time.monotonic() > deadline:
                            raise SystemExit("timed out waiting for the memory jobs")
                        time.sleep(0.2)

                # 1. capacity
                backlog = BACKLOG_PER_WORKER[model] * workers
                # Threads of three runs (the third folds the first into the summary).
                _setup.drive_runs(
                    agent=agent.pk,
                    owner=owner,
                    procs=2,
                    count=3,
                    pace=0.0,
                    threads=max(1, backlog // 6),
                    prefix="我教高二数学，以后出题都用人教版 d",
                )
                cluster = _setup.start_cluster(log, workers=workers)
                try:
                    drained()
                    done = sorted(
                        d for d in runs.values_list("memory_done_at", flat=True) if d is not None
                    )
                    capacity = (len(done) - 1) / (done[-1] - done[0]).total_seconds()
                    first_new = runs.order_by("-pk").values_list("pk", flat=True).first() or 0
                    # 2. sustained
                    procs, pace, threads = OFFERED[model]
                    _setup.drive_runs(
                        agent=agent.pk,
                        owner=owner,
                        procs=procs,
                        count=max(1, round(args.seconds / pace / threads)),
                        pace=pace,
                        threads=threads,
                        prefix="我教高二数学，以后出题都用人教版 d",
                    )
                    drained()
                finally:
                    _setup.stop_group(cluster)
                live = runs.filter(pk__gt=first_new).order_by("pk")
                lags = sorted(
                    (done_at - finished).total_seconds()
                    for finished, done_at in live.values_list("finished_at", "memory_done_at")
                    if finished is not None and done_at is not None
                )
                window = [f for f in live.values_list("finished_at", flat=True) if f is not None]
                span = (max(window) - min(window)).total_seconds() or 1.0
                calls = agent.memory_ops.count() / max(1, runs.count())
                p50, p95 = _setup.percentile(lags, 0.5), _setup.percentile(lags, 0.95)
                print(
                    f"| {model} | {workers} | {capacity:.2f} | {len(lags) / span:.2f} | "
                    f"{len(lags)} | {p50:.2f} | {p95:.2f} | "
                    f"{lags[-1]:.2f} | {calls:.1f} |",
                    flush=True,
                )
    finally:
        fake.stop()
    print(f"memory_lag  machine after: {_setup.uptime()}")


if __name__ == "__main__":
    main()
