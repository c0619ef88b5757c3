"""Load test: simulated teachers against `make serve`'s production profile (`make load`).

    .venv/bin/python benchmarks/load.py [--backend sqlite|postgres|all] [--users 230]
        [--pace 3] [--duration 60] [--warmup 15] [--workers N] [--web-processes N]
        [--redis redis://127.0.0.1:6379/N]

Per backend, on a fresh database: teachers in schools of 15 (each school one agent on the
offline model, zero delay), each with an API token and a logged-in browser session;
then scripts/serve.sh (gunicorn gthread + one qcluster, DEBUG off; one web process on
SQLite, two on PostgreSQL unless --web-processes) on a free loopback port, and locust
headless (benchmarks/locustfile.py, FastHttpUser) for --duration seconds. Every user is
one teacher doing one task per --pace seconds: sync and streamed runs in threads, now
and then the memory panel and a confirm. At the default pace a teacher sends ~18 runs a
minute, under the per-user run throttle (~30/min); the offered load comes from many
teachers, not from a fast one: the default 230 offer about 63 runs/s, above #15's
target of 50 on PostgreSQL, so that a run shows whether the server holds it.

Reported (a table, and JSON in artifacts/load-<backend>.json):
- runs/s sustained: runs that finished in the measured window (after --warmup) / window;
- run latency p50/p95/p99 as the client saw it (sync and stream; a stream is timed to
  its last event), errors of every request (target 0);
- context assembly share: the read path's time (``manifest.prepare_ms``) over the run's
  server time (started → finished);
- memory lag p50/p95/max: run end → its memory job done, for the window's runs, after
  the queue has drained (runs still not done after the drain are counted).
The machine's load (`uptime`) before and after is printed: figures from a busy machine
are not comparable.

``--redis URL``: the scale-out profile, Redis as the queue broker (Q_BROKER_URL) and as
the run limits' store (LIMITS_CACHE_URL, the next database number), which takes the
queue's and the limits' writes off the database; the Redis server's CPU is counted.
"""

from __future__ import annotations

import csv
import json
import os
import resource
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup

# Django is configured in the per-backend child only (_setup.django_ready), so Django and
# project modules are imported inside the functions that run there, after it.

ROOT = _setup.ROOT
# locust lives in a venv of its own (make load builds .venv-load; pyproject's `load` extra).
LOCUST = os.environ.get("LOAD_LOCUST", str(ROOT / ".venv-load" / "bin" / "locust"))
SCHOOL_SIZE = 15
DRAIN_TIMEOUT = 180.0


def _options() -> Any:
    def extra(parser: Any) -> None:
        parser.add_argument("--users", type=int, default=230)
        parser.add_argument("--pace", type=float, default=3.0, help="seconds per task per user")
        parser.add_argument("--duration", type=int, default=60, help="seconds of load")
        parser.add_argument("--warmup", type=int, default=15, help="seconds not measured")
        parser.add_argument("--spawn-rate", type=float, default=50.0)
        parser.add_argument("--workers", type=int, default=0, help="Q_WORKERS (0: the default)")
        parser.add_argument("--web-processes", type=int, default=0)
        parser.add_argument("--web-threads", type=int, default=8)
        parser.add_argument("--redis", default="", help="redis://host:port/N: queue and limits")

    return _setup.parse(__doc__ or "", extra)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def accounts(users: int) -> list[dict[str, Any]]:
    """Teachers in schools of SCHOOL_SIZE, each with a token and a browser session.

    Sessions are made here (no password hashing under load: a teacher logs in once a
    day, not once a run). The server must run with this process's DJANGO_SECRET_KEY.
    """
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )
    from django.contrib.sessions.backends.db import SessionStore
    from rest_framework.authtoken.models import Token

    from agents.models import Agent, Membership, Tenant
    from agents.services_demo import offline_provider_ensure

    user_model = get_user_model()
    provider = offline_provider_ensure()
    accounts = []
    for school in range((users + SCHOOL_SIZE - 1) // SCHOOL_SIZE):
        tenant = Tenant.objects.create(name=f"压测学校{school}")
        agent = Agent.objects.create(
            tenant=tenant, name="教学助手", system_prompt="你是教学助手。", provider=provider
        )
        for seat in range(min(SCHOOL_SIZE, users - school * SCHOOL_SIZE)):
            user = user_model(username=f"load{school}-{seat}")
            user.set_unusable_password()
            user.save()
            Membership.objects.create(tenant=tenant, user=user, role=Membership.Role.TEACHER)
            session = SessionStore()
            session[SESSION_KEY] = str(user.pk)
            session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.create()
            accounts.append(
                {
                    "username": user.username,
                    "agent_id": agent.pk,
                    "token": Token.objects.create(user=user).key,
                    "session": session.session_key,
                    "csrf": secrets.token_hex(16),  # 32 characters: an unmasked CSRF secret
                }
            )
    return accounts


def _serve(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["scripts/serve.sh"],
        cwd=ROOT,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _wait_ready(base: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"serve.sh exited:\n{log.read_text()[-3000:]}")
        try:
            urllib.request.urlopen(f"{base}/accounts/login/", timeout=5).read()
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit("the server did not come up")


def _locust(base: str, env: dict[str, str], args: Any, work: Path) -> dict[str, dict[str, str]]:
    prefix = work / "locust"
    command = [
        LOCUST,
        "-f",
        str(ROOT / "benchmarks" / "locustfile.py"),
        "--headless",
        "--host",
        base,
        "--users",
        str(args.users),
        "--spawn-rate",
        str(args.spawn_rate),
        "--run-time",
        f"{args.duration}s",
        "--stop-timeout",
        "30",
        "--csv",
        str(prefix),
        "--only-summary",
        "--loglevel",
        "WARNING",
    ]
    result = subprocess.run(command, cwd=ROOT, env=env, check=False, timeout=args.duration + 300)
    # locust exits 1 when a request failed: the figures are still what we report.
    if result.returncode not in (0, 1):
        raise SystemExit(f"locust failed ({result.returncode})")
    with (work / "locust_stats.csv").open() as handle:
        return {row["Name"]: row for row in csv.DictReader(handle)}


def _processes() -> dict[int, tuple[int, str, float]]:
    """Every process: pid -> (parent pid, command line, CPU seconds used so far by it and
    by the children it has reaped)."""
    ticks = os.sysconf("SC_CLK_TCK")
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        # fields[1] is the parent pid; utime, stime, cutime and cstime are fields 14-17 of
        # stat. The last two are the children it has reaped: a django-q2 worker recycled
        # after `recycle` tasks (or a gunicorn worker restarted) took its CPU with it, and
        # its parent in the tree has it now.
        found[int(entry.name)] = (
            int(fields[1]),
            cmdline,
            sum(int(field) for field in fields[11:15]) / ticks,
        )
    return found


def _next_database(url: str) -> str:
    """The same Redis with the next database number (redis://h:p/0 -> redis://h:p/1)."""
    head, _, number = url.rstrip("/").rpartition("/")
    if not number.isdigit():
        return url.rstrip("/") + "/1"
    return f"{head}/{int(number) + 1}"


def _cpu_by_part(root: int, database: str) -> dict[str, float]:
    """CPU seconds so far of the server's parts: web, memory worker, PostgreSQL backends
    serving ``database`` (the machine's other databases are not ours)."""
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in procs.items():
        children.setdefault(parent, []).append(pid)
    parts = {"web": 0.0, "worker": 0.0, "postgres": 0.0, "redis": 0.0}
    stack = [root]
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        if pid in procs:
            cmdline, cpu = procs[pid][1], procs[pid][2]
            if "gunicorn" in cmdline:
                parts["web"] += cpu
            elif "qcluster" in cmdline:
                parts["worker"] += cpu
    for _, cmdline, cpu in procs.values():
        if cmdline.startswith("postgres:") and f" {database} " in cmdline:
            parts["postgres"] += cpu
        elif cmdline.startswith("redis-server"):
            parts["redis"] += cpu  # the machine's one Redis (only this load uses it here)
    # A backend that ended in between (a connection past DB_CONN_MAX_AGE is replaced)
    # took its CPU with it; the server's main process has it, as its reaped children's
    # time. So the difference of two readings counts it (with any other database's
    # ended backends: the machine's other work, small while nothing else connects).
    parts["postgres"] += _postmaster_children_cpu()
    return parts


def _postmaster_children_cpu() -> float:
    """CPU seconds of the PostgreSQL server's ended (reaped) processes, from the main
    process's /proc stat (cutime and cstime), or 0 when it is not readable here."""
    ticks = os.sysconf("SC_CLK_TCK")
    for pid_file in Path("/var/run/postgresql").glob("*.pid"):
        try:
            pid = int(pid_file.read_text().split()[0])
            fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, ValueError, IndexError):
            continue
        # cutime and cstime are fields 16 and 17 of stat (13 and 14 after the name).
        return (int(fields[13]) + int(fields[14])) / ticks
    return 0.0


def _database_figures(window: tuple[datetime, datetime]) -> dict[str, Any]:
    from django.db.models import Q

    from agents.models import Run

    start, end = window
    runs = Run.objects.filter(finished_at__gte=start, finished_at__lt=end)
    deadline = time.monotonic() + DRAIN_TIMEOUT
    while (
        Run.objects.filter(Q(status="running") | Q(memory_state="pending")).exists()
        and time.monotonic() < deadline
    ):
        time.sleep(0.5)
    rows = list(
        runs.select_related("context_record").only(
            "status", "started_at", "finished_at", "memory_done_at", "context_record__manifest"
        )
    )
    lags = sorted(
        (r.memory_done_at - r.finished_at).total_seconds()
        for r in rows
        if r.memory_done_at is not None and r.finished_at is not None
    )
    prepare = sum(
        float(r.context_record.manifest.get("prepare_ms", 0)) / 1000
        for r in rows
        if hasattr(r, "context_record")
    )
    server = sum(
        (r.finished_at - r.started_at).total_seconds()
        for r in rows
        if r.started_at is not None and r.finished_at is not None
    )
    seconds = (end - start).total_seconds()
    return {
        "runs_in_window": len(rows),
        "runs_failed": sum(r.status != "completed" for r in rows),
        "runs_per_second": len(rows) / seconds,
        "server_run_ms_mean": 1000 * server / max(1, len(rows)),
        "context_share": prepare / server if server else float("nan"),
        "memory_lag_p50_s": _setup.percentile(lags, 0.50),
        "memory_lag_p95_s": _setup.percentile(lags, 0.95),
        "memory_lag_max_s": lags[-1] if lags else float("nan"),
        "memory_not_done": len(rows) - len(lags),
    }


def _latency(stats: dict[str, dict[str, str]]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for name, row in stats.items():
        figures[name] = {
            "requests": int(row["Request Count"]),
            "failures": int(row["Failure Count"]),
            "p50_ms": float(row["50%"]),
            "p95_ms": float(row["95%"]),
            "p99_ms": float(row["99%"]),
            "per_second": float(row["Requests/s"]),
        }
    return figures


def _report(backend: str, args: Any, figures: dict[str, Any]) -> None:
    requests = figures["requests"]
    db = figures["database"]
    print(
        f"\nload  backend={backend} users={args.users} pace={args.pace}s "
        f"duration={args.duration}s (measured after {args.warmup}s) "
        f"web={figures['web_processes']}x{args.web_threads} workers={figures['workers']}"
        f" queue={'redis' if args.redis else 'database'}"
    )
    print(f"load  machine before: {figures['uptime_before']}")
    print(f"load  machine after:  {figures['uptime_after']}")
    print("| request | count | errors | req/s | p50 ms | p95 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, row in requests.items():
        print(
            f"| {name} | {row['requests']} | {row['failures']} | {row['per_second']:.1f} "
            f"| {row['p50_ms']:.0f} | {row['p95_ms']:.0f} | {row['p99_ms']:.0f} |"
        )
    cores = ", ".join(f"{part} {used:.2f}" for part, used in figures["cores"].items())
    print(f"load  cores used while loaded: {cores}")
    per_run = figures["cpu_ms_per_run"]
    total = sum(per_run.values())
    parts = ", ".join(f"{part} {ms:.1f}" for part, ms in per_run.items())
    print(
        f"load  CPU per run: {parts} = {total:.1f} ms, i.e. at most "
        f"{2000 / total:.0f} runs/s on 2 idle cores"
    )
    print(
        f"load  runs/s sustained {db['runs_per_second']:.1f} ({db['runs_in_window']} runs, "
        f"{db['runs_failed']} failed); server time per run {db['server_run_ms_mean']:.1f} ms, "
        f"context assembly {100 * db['context_share']:.0f}% of it; memory lag "
        f"p50 {db['memory_lag_p50_s']:.2f} s p95 {db['memory_lag_p95_s']:.2f} s "
        f"max {db['memory_lag_max_s']:.2f} s ({db['memory_not_done']} not done after the drain)"
    )


def main() -> None:
    args = _options()
    if not _setup.is_child():
        forwarded = [
            f"--{name.replace('_', '-')}={value}"
            for name, value in vars(args).items()
            if name != "backend"
        ]
        os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
        _setup.run_per_backend(__file__, forwarded, args.backend)
        return
    _setup.django_ready()
    from django.db import connection
    from django.utils import timezone

    from agents.models import Run

    backend = connection.vendor
    work = Path(tempfile.mkdtemp(prefix=f"load-{backend}-"))
    teachers = accounts(args.users)
    (work / "accounts.json").write_text(json.dumps(teachers))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(
        os.environ,
        HOST="127.0.0.1",
        PORT=str(port),
        WEB_THREADS=str(args.web_threads),
        WEB_ACCESS_LOG="",
        LOG_LEVEL="WARNING",
        OFFLINE_STREAM_DELAY="0",
        DJANGO_STATIC_ROOT=str(work / "static"),
        Q_STAT_DIR=str(work / "qstat"),
        Q_NAME=f"load-{backend}-{os.getpid()}",
        QCLUSTER_LOG=str(work / "qcluster.log"),
        LOAD_ACCOUNTS=str(work / "accounts.json"),
        LOAD_PACE=str(args.pace),
    )
    env.pop("BENCH_CHILD", None)
    if args.workers:
        env["Q_WORKERS"] = str(args.workers)
    if args.web_processes:
        env["WEB_PROCESSES"] = str(args.web_processes)
    if args.redis:
        env["Q_BROKER_URL"] = args.redis
        env["LIMITS_CACHE_URL"] = _next_database(args.redis)
    web_processes = args.web_processes or (2 if backend == "postgresql" else 1)
    figures: dict[str, Any] = {
        "backend": backend,
        "uptime_before": _setup.uptime(),
        "web_processes": web_processes,
        "workers": args.workers or 1,
        "args": vars(args),
    }
    server = _serve(env, work / "serve.log")
    try:
        _wait_ready(base, server, work / "serve.log")
        database = connection.settings_dict["NAME"]
        cpu_before = _cpu_by_part(server.pid, database)
        locust_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = timezone.now()
        stats = _locust(base, env, args, work)
        ended = timezone.now()
        cpu_after = _cpu_by_part(server.pid, database)
        locust_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds = (ended - began).total_seconds()
        # Cores used on average while the load ran, per part (2 on this machine in all).
        figures["cores"] = {
            part: (cpu_after[part] - cpu_before[part]) / seconds for part in cpu_after
        }
        if backend != "postgresql":
            figures["cores"].pop("postgres")
        if not args.redis:
            figures["cores"].pop("redis")
        figures["cores"]["locust"] = (
            locust_after.ru_utime
            + locust_after.ru_stime
            - locust_before.ru_utime
            - locust_before.ru_stime
        ) / seconds
        figures["requests"] = _latency(stats)
        # CPU per run by part, over the whole load (every request type included): what a
        # run costs whatever else the machine runs, and so the ceiling on 2 idle cores.
        runs_all = Run.objects.filter(finished_at__gte=began, finished_at__lt=ended).count()
        figures["cpu_ms_per_run"] = {
            part: 1000 * used * seconds / max(1, runs_all)
            for part, used in figures["cores"].items()
        }
        window = (
            began + timedelta(seconds=args.warmup),
            min(ended, began + timedelta(seconds=args.duration)),
        )
        figures["database"] = _database_figures(window)
    finally:
        _setup.stop_group(server, timeout=60)
    figures["uptime_after"] = _setup.uptime()
    _report(backend, args, figures)
    out = ROOT / "artifacts" / f"load-{backend}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(figures, indent=2, ensure_ascii=False))
    print(f"load  figures in {out.relative_to(ROOT)}; logs in {work}")


if __name__ == "__main__":
    main()
