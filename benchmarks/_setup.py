"""Shared setup for the benchmarks: a fresh database per backend, Django configured.

Each benchmark runs itself once per backend in a child process (Django settings are
per process): ``--backend sqlite`` uses a temporary file, ``--backend postgres`` a fresh
``bench_agent_memory`` database on the local server (``BENCH_PG_URL`` to change it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_URL = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/bench_agent_memory")


def parse(
    description: str, extra: Callable[[argparse.ArgumentParser], None] | None = None
) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "all"], default="all")
    if extra:
        extra(parser)
    return parser.parse_args()


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


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return p50, p95
