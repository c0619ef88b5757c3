"""Shared setup for the benchmarks: a fresh database per backend, Django configured.

Each benchmark runs itself once per backend in a child process (Django settings are
per process): ``--backend sqlite`` uses a temporary file, ``--backend postgres`` a fresh
``bench_agent_memory`` database on the local server (``BENCH_PG_URL`` to change it).
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_URL = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/bench_agent_memory")


def parse(
    description: str, extra: Callable[[argparse.ArgumentParser], object] | None = None
) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "all"], default="all")
    if extra:
        extra(parser)
    return parser.parse_args()


def production_settings() -> None:
    """Production's settings for the children: DEBUG off (no debug cursor or query log,
    the manifest storage is not touched by the API), as under gunicorn."""
    os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
    os.environ["DJANGO_DEBUG"] = "0"


def run_per_backend(script: str, args: list[str], backend: str) -> None:
    """Re-run ``script`` in a child process per backend (the parent only dispatches)."""
    backends = ["sqlite", "postgres"] if backend == "all" else [backend]
    for name in backends:
        env = dict(os.environ, BENCH_CHILD="1")
        if name == "sqlite":
            env["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='bench-')}/bench.sqlite3"
        else:
            _recreate_pg()
            env["DATABASE_URL"] = PG_URL
        env.setdefault("OFFLINE_STREAM_DELAY", "0")
        env.setdefault("LOG_LEVEL", "WARNING")
        subprocess.run(
            [sys.executable, script, *args, "--backend", name], env=env, check=True, cwd=ROOT
        )


def _recreate_pg() -> None:
    import psycopg

    base, name = PG_URL.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def is_child() -> bool:
    return os.environ.get("BENCH_CHILD") == "1"


def django_ready() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def start_cluster(log: Path, *, workers: int | None = None) -> subprocess.Popen[bytes]:
    """``manage.py qcluster`` (not in sync mode) in a process group of its own."""
    env = dict(os.environ, Q_SYNC="0")
    if workers is not None:
        env["Q_WORKERS"] = str(workers)
    return subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop_group(process: subprocess.Popen[bytes], *, timeout: float = 30) -> None:
    """SIGTERM a process group (a cluster, make serve's script), SIGKILL it if it lingers."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def drive_runs(
    *,
    agent: int,
    owner: int,
    procs: int,
    count: int,
    pace: float = 0.0,
    threads: int = 1,
    prefix: str = "b",
) -> None:
    """``procs`` driver processes (tests/cluster_driver.py) finishing runs at once: each
    ``count`` runs in each of ``threads`` new threads, ``pace`` seconds apart."""
    env = dict(os.environ, Q_SYNC="0")
    running = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.cluster_driver",
                *("--agent", str(agent), "--owner", str(owner), "--count", str(count)),
                *("--new-thread", "--threads", str(threads)),
                *("--prefix", f"{prefix}{i}", "--pace", str(pace)),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        for i in range(procs)
    ]
    for proc in running:
        if proc.wait() != 0:
            raise SystemExit("driver failed")


def uptime() -> str:
    """The machine's load (other sessions share its 2 cores): printed beside figures."""
    out = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout
    return " ".join(out.split())


def database_cpu() -> float | None:
    """CPU seconds used so far by this process's PostgreSQL backend (the server runs on
    this machine: its /proc entry), or None on SQLite or when it cannot be read. Keep
    the connection open between two readings (``DB_CONN_MAX_AGE``), or the backend
    changes."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    # utime and stime are fields 14 and 15 of stat (11 and 12 after the command name).
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted samples, nearest rank; NaN for none."""
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return p50, p95
