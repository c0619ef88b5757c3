"""Real django-q2 clusters and driver processes for the queue tests.

The test process runs on config.settings_test (sync mode); everything here starts
separate processes on config.settings with Q_SYNC=0, sharing the test database.

The broker follows the environment, as in production: unset Q_BROKER_URL is the ORM
broker; ``Q_BROKER_URL=redis://127.0.0.1:6379/<db> pytest -m cluster`` runs the same
tests on Redis. The children inherit Q_BROKER_URL and this pytest process's own Q_NAME
(config/settings_test.py), so test and children see one queue that no other run shares.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection
from django_q.brokers import get_broker

from agents.models import Run
from memory.models import Thread
from tests.fakellm import unused_port

ROOT = Path(__file__).resolve().parent.parent


def test_database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    host = db.get("HOST") or "127.0.0.1"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{auth}{host}{port}/{db['NAME']}"


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": test_database_url(),
            "Q_SYNC": "0",
            # Short task timeout so a killed task would be redelivered soon; retry is
            # derived from it in settings and stays above (queue_limit + 2) x timeout.
            "Q_TIMEOUT": "10",
            "Q_QUEUE_LIMIT": "2",
            "OFFLINE_STREAM_DELAY": "0",
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra)
    return env


def production_env(static_root: Path, **extra: str) -> dict[str, str]:
    """:func:`child_env` as a production server has it: DEBUG off, a secret key."""
    env = child_env(
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_STATIC_ROOT=str(static_root),
        **extra,
    )
    # pytest-django's live_server sets it in this process; a server never has it.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


class Gunicorn:
    """``gunicorn -c config/gunicorn.py`` on a free loopback port, with ``env``."""

    def __init__(self, log_path: Path, env: dict[str, str]) -> None:
        self.log_path = log_path
        self.port = unused_port()
        self.env = {**env, "WEB_BIND": f"127.0.0.1:{self.port}"}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *, ready_path: str = "/accounts/login/", timeout: float = 60) -> Gunicorn:
        self.process = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "-c", "config/gunicorn.py"],
            cwd=ROOT,
            env=self.env,
            stdout=self.log_path.open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                conn.request("GET", ready_path)
                conn.getresponse().read()
                conn.close()
                return self
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise AssertionError(self.log()) from None
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def broker_kind() -> str:
    return "redis" if settings.Q_BROKER_URL else "orm"


def queue_size() -> int:
    """Tasks waiting in the broker (not yet taken by a worker)."""
    return int(get_broker().queue_size() or 0)


def queue_purge() -> None:
    """Lose every queued task, as a flushed broker would."""
    get_broker().purge_queue()


class Cluster:
    """A ``manage.py qcluster`` process group with ``workers`` worker processes."""

    def __init__(self, log_path: Path, *, workers: int = 1, **env: str) -> None:
        self.log_path = log_path
        self.workers = workers
        self.env = child_env(Q_WORKERS=str(workers), **env)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Cluster:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return self

    def kill(self) -> None:
        """SIGKILL the whole group: sentinel, pusher, worker and monitor die at once."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        self.process = None

    def stop(self) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            self.kill()
        self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def serve(port: int, log: Path, **env: str) -> subprocess.Popen[bytes]:
    """``manage.py runserver`` on 127.0.0.1:``port`` (config.settings, the test database),
    once it answers; the caller kills it."""
    process = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=child_env(**env),
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/api/schema")
            return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise AssertionError(log.read_text())


def drive(
    *,
    agent_id: int,
    owner_id: int,
    count: int,
    thread_id: str | None = None,
    new_thread: bool = False,
    prefix: str = "消息",
    env: dict[str, str] | None = None,
    threads: int = 1,
    rollback: bool = False,
) -> subprocess.Popen[bytes]:
    args = [
        sys.executable,
        "-m",
        "tests.cluster_driver",
        "--agent",
        str(agent_id),
        "--owner",
        str(owner_id),
        "--count",
        str(count),
        "--prefix",
        prefix,
    ]
    if thread_id:
        args += ["--thread", thread_id]
    if new_thread:
        args += ["--new-thread", "--threads", str(threads)]
    if rollback:
        args.append("--rollback")
    return subprocess.Popen(
        args,
        cwd=ROOT,
        env=child_env(**(env or {})),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish(process: subprocess.Popen[bytes], timeout: float = 300) -> dict[str, Any]:
    out, err = process.communicate(timeout=timeout)
    if process.returncode != 0:
        raise AssertionError(f"driver failed ({process.returncode}): {err.decode()[-3000:]}")
    assert b"database is locked" not in err, err.decode()[-3000:]
    return json.loads(out)


def manage(*args: str, **env: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=child_env(**env),
        capture_output=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(result.stderr.decode()[-3000:])
    return result.stdout.decode()


def manage_async(*args: str, **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=child_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish_manage(process: subprocess.Popen[bytes], timeout: float = 120) -> str:
    out, err = process.communicate(timeout=timeout)
    if process.returncode != 0:
        raise AssertionError(err.decode()[-3000:])
    return out.decode()


def wait_until(
    predicate: Callable[[], bool], *, timeout: float, what: str, interval: float = 0.2
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def q_retry_seconds() -> int:
    return int(settings.Q_CLUSTER["retry"])


# -- a thread's rolling summary, checked against its runs ----------------------------------
# The offline memory model keeps one "#<run id>" marker per folded run in the summary.


def summary_markers(summary: str) -> list[int]:
    return [int(m) for m in re.findall(r"#(\d+)", summary)]


def expected_folded(thread_id: str, keep: int = 2) -> list[int]:
    """The runs a caught-up thread has folded: every finished one but the last ``keep``."""
    finished = list(
        Run.objects.filter(thread_id=thread_id)
        .finished()
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)
    )
    return finished[:-keep] if len(finished) > keep else []


def all_memory_done() -> bool:
    return not Run.objects.exclude(memory_state=Run.MemoryState.DONE).exists()


def caught_up(thread_ids: list[str]) -> bool:
    return all(
        summary_markers(Thread.objects.get(pk=t).rolling_summary) == expected_folded(t)
        for t in thread_ids
    )


def assert_threads_exact(thread_ids: list[str]) -> None:
    """Every thread folded each of its old runs exactly once, in order; cursor on the last."""
    for thread_id in thread_ids:
        thread = Thread.objects.get(pk=thread_id)
        want = expected_folded(thread_id)
        assert summary_markers(thread.rolling_summary) == want, thread_id
        if want:
            assert thread.summary_upto_run_id == want[-1]
