"""CPU per run request in the web process, in process, end to end (#15).

    .venv/bin/python benchmarks/run_cpu.py [--backend sqlite|postgres|all] [--runs 300]
        [--users 165] [--profile N] [--sort cumulative]

A run request as gunicorn hands it to Django: a WSGI environ through Django's WSGI
handler (every middleware, DRF, the throttles, the run, the enqueue, the response),
DEBUG off as in production, the offline model at zero delay. The teachers, schools and
messages are the load test's (benchmarks/load.py, benchmarks/locustfile.py): each teacher
continues a thread for six turns, then starts a new one; sync and streamed runs take
turns. Between rounds (one run per teacher) the queued memory jobs are done in process,
unmeasured, so that the read path finds the memory it finds under load.

Reported per backend and kind (sync, stream): CPU ms per run (``time.process_time``, so
the figure holds on a shared machine; the database server's own work is not in it),
of which context assembly (``memory.services.context.context_assemble``, measured
around the call), and the rest (this issue's part); database queries per run.
``--profile N`` prints the N most expensive functions of the measured requests (and
keeps the profile in artifacts/run_cpu-<backend>-<kind>.prof).
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup
import load
from job_cpu import TURNS_PER_THREAD, messages

KINDS = ("sync", "stream")
CONFIRM_FORM = re.compile(rb'action="(/memory/candidates/\d+/confirm/)"')


def _options() -> Any:
    def extra(parser: Any) -> None:
        parser.add_argument("--runs", type=int, default=300, help="measured runs per kind")
        parser.add_argument("--users", type=int, default=165)
        parser.add_argument("--profile", type=int, default=0)
        parser.add_argument("--sort", default="cumulative", help="pstats order of --profile")

    return _setup.parse(__doc__ or "", extra)


class _Meter:
    """CPU seconds spent inside one function, and its calls (wraps the module's name)."""

    def __init__(self, module: Any, name: str) -> None:
        self.seconds = 0.0
        self.calls = 0
        inner = getattr(module, name)

        def measured(*args: Any, **kwargs: Any) -> Any:
            began = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - began
                self.calls += 1

        setattr(module, name, measured)

    def reset(self) -> None:
        self.seconds, self.calls = 0.0, 0


class _Teacher:
    def __init__(self, account: dict[str, Any]) -> None:
        self.agent_id = int(account["agent_id"])
        self.token = str(account["token"])
        self.cookie = f"sessionid={account['session']}; csrftoken={account['csrf']}"
        self.csrf = str(account["csrf"])
        self.thread_id: str | None = None
        self.turns = 0


def _request(
    app: Callable[..., Iterable[bytes]], teacher: _Teacher, *, kind: str, text: str
) -> None:
    """One run request through the WSGI handler, read to its end, as gunicorn would."""
    if teacher.turns >= TURNS_PER_THREAD:
        teacher.thread_id, teacher.turns = None, 0
    body = json.dumps({"input": text, "thread_id": teacher.thread_id}).encode()
    path = f"/api/agents/{teacher.agent_id}/run" + ("/stream" if kind == "stream" else "")
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "HTTP_AUTHORIZATION": f"Token {teacher.token}",
        "HTTP_ACCEPT": "text/event-stream" if kind == "stream" else "application/json",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    status, content = _call(app, environ)
    if not status.startswith("200"):
        raise SystemExit(f"{path}: {status} {content[-300:]!r}")
    if kind == "sync":
        run = json.loads(content)
    else:
        run = json.loads(content.rsplit(b"event: done\ndata: ", 1)[1].split(b"\n", 1)[0])["run"]
    if run.get("status") != "completed":
        raise SystemExit(f"{path}: run {run.get('id')} {run.get('status')}")
    teacher.thread_id = run["thread_id"]
    teacher.turns += 1


def _call(app: Callable[..., Iterable[bytes]], environ: dict[str, Any]) -> tuple[str, bytes]:
    status: list[str] = []
    response = app(environ, lambda s, headers, exc_info=None: status.append(s))
    try:
        content = b"".join(response)
    finally:
        close = getattr(response, "close", None)
        if close is not None:
            close()  # request_finished: what gunicorn does after the last byte
    return (status[0] if status else ""), content


def _browser(teacher: _Teacher, method: str, path: str, query: str, body: bytes) -> dict[str, Any]:
    return {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "HTTP_COOKIE": teacher.cookie,
        "HTTP_ACCEPT": "text/html",
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def _panel_visit(app: Callable[..., Iterable[bytes]], teacher: _Teacher) -> bool:
    """The load test's third task: the memory panel, and its first candidate confirmed.
    Whether a candidate was confirmed."""
    query = f"agent={teacher.agent_id}"
    status, page = _call(app, _browser(teacher, "GET", "/memory/", query, b""))
    if not status.startswith("200"):
        raise SystemExit(f"/memory/: {status} {page[-300:]!r}")
    confirm = CONFIRM_FORM.search(page)
    if confirm is None:
        return False
    body = f"csrfmiddlewaretoken={teacher.csrf}&agent={teacher.agent_id}".encode()
    status, content = _call(app, _browser(teacher, "POST", confirm.group(1).decode(), "", body))
    if not status.startswith("302"):
        raise SystemExit(f"confirm: {status} {content[-300:]!r}")
    return True


def _drain_jobs() -> None:
    """The queued memory jobs, done in process (not measured)."""
    from django_q.models import OrmQ

    from memory import tasks

    for task in OrmQ.objects.order_by("pk"):
        if task.func() == "memory.tasks.after_run":
            tasks.after_run(task.args()[0])
    OrmQ.objects.all().delete()


def main() -> None:
    args = _options()
    if not _setup.is_child():
        _setup.production_settings()
        # One database connection for the whole measurement (the server's CPU is read
        # off its backend process).
        os.environ.setdefault("DB_CONN_MAX_AGE", "3600")
        # The panel's page names its static files through the manifest, as in production.
        os.environ["DJANGO_STATIC_ROOT"] = tempfile.mkdtemp(prefix="run_cpu-static-")
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
            cwd=_setup.ROOT,
            check=True,
        )
        forwarded = [
            f"--runs={args.runs}",
            f"--users={args.users}",
            f"--profile={args.profile}",
            f"--sort={args.sort}",
        ]
        _setup.run_per_backend(__file__, forwarded, args.backend)
        return
    _setup.django_ready()
    from django.core.handlers.wsgi import WSGIHandler
    from django.db import connection

    from runs import services

    context = _Meter(services, "context_assemble")
    app = WSGIHandler()
    teachers = [_Teacher(account) for account in load.accounts(args.users)]
    texts = messages()
    queries = 0

    def count(execute: Any, sql: str, params: Any, many: bool, ctx: Any) -> Any:
        nonlocal queries
        queries += 1
        return execute(sql, params, many, ctx)

    print(f"run_cpu  backend={connection.vendor}  machine: {_setup.uptime()}")
    said = 0

    def round_of(kind: str, limit: int) -> int:
        nonlocal said
        done = 0
        for teacher in teachers[:limit]:
            said += 1
            _request(app, teacher, kind=kind, text=texts[said % len(texts)])
            done += 1
        return done

    # Warm-up: a round of each kind (tokenizer, indexes, connections), then their jobs.
    for kind in KINDS:
        round_of(kind, len(teachers))
    _drain_jobs()
    for kind in KINDS:
        profile = cProfile.Profile(time.process_time) if args.profile else None
        cpu = 0.0
        database = 0.0
        runs = 0
        queries = 0
        context.reset()
        while runs < args.runs:
            limit = min(len(teachers), args.runs - runs)
            began = time.process_time()
            database_began = _setup.database_cpu()
            with connection.execute_wrapper(count):
                if profile:
                    profile.enable()
                runs += round_of(kind, limit)
                if profile:
                    profile.disable()
            cpu += time.process_time() - began
            database_now = _setup.database_cpu()
            if database_began is not None and database_now is not None:
                database += database_now - database_began
            _drain_jobs()
        total = 1000 * cpu / runs
        assembly = 1000 * context.seconds / runs
        print(
            f"run_cpu  backend={connection.vendor} {kind:6}: {runs} runs, {total:.2f} ms "
            f"CPU/run (profiler {'on' if profile else 'off'}): context assembly "
            f"{assembly:.2f}, the rest {total - assembly:.2f}; {queries / runs:.1f} "
            f"queries/run"
            + (
                f"; the database server {1000 * database / runs:.2f} ms CPU/run"
                if connection.vendor == "postgresql"
                else ""
            )
        )
        if profile:
            out = _setup.ROOT / "artifacts" / f"run_cpu-{connection.vendor}-{kind}.prof"
            out.parent.mkdir(exist_ok=True)
            profile.dump_stats(out)
            pstats.Stats(profile).sort_stats(args.sort).print_stats(args.profile)
            print(f"run_cpu  the profile in {out.relative_to(_setup.ROOT)}")
    # The panel: one visit per teacher, after the jobs have proposed their candidates.
    visits = min(len(teachers), args.runs)
    queries = 0
    began = time.process_time()
    database_began = _setup.database_cpu()
    with connection.execute_wrapper(count):
        confirmed = sum(_panel_visit(app, teacher) for teacher in teachers[:visits])
    cpu = time.process_time() - began
    database_now = _setup.database_cpu()
    print(
        f"run_cpu  backend={connection.vendor} panel : {visits} visits ({confirmed} with a "
        f"confirm), {1000 * cpu / visits:.2f} ms CPU/visit; {queries / visits:.1f} "
        f"queries/visit"
        + (
            f"; the database server {1000 * (database_now - database_began) / visits:.2f} "
            "ms CPU/visit"
            if database_began is not None and database_now is not None
            else ""
        )
    )
    print(f"run_cpu  backend={connection.vendor}  machine: {_setup.uptime()}")


if __name__ == "__main__":
    main()
