"""The production profile for real: gunicorn (gthread, 2 processes), DEBUG off,
static files collected with hashed names and served by WhiteNoise, SSE unbuffered, and
`check --deploy` clean with DJANGO_SECURE=1.

The server runs on config.settings against the test database (tests/cluster.py), in a
fresh STATIC_ROOT of its own, so the manifest path is exercised from scratch.
"""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster import ROOT, Gunicorn, production_env
from tests.factories import make_teacher

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STREAM_DELAY = 0.15
HASHED_CSS = re.compile(r'href="(/static/web/common\.[0-9a-f]{12}\.css)"')


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def request(
    port: int,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: dict[str, object] | None = None,
) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    payload = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=payload, headers=headers or {})
    return conn.getresponse()


@pytest.fixture
def gunicorn(tmp_path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """A collected STATIC_ROOT and gunicorn with config/gunicorn.py: (port, env)."""
    env = production_env(
        tmp_path / "static",
        OFFLINE_STREAM_DELAY=str(STREAM_DELAY),
        WEB_PROCESSES="2",
        WEB_THREADS="4",
    )
    collected = manage(env, "collectstatic", "--noinput", "--verbosity", "0")
    assert collected.returncode == 0, collected.stderr[-3000:]
    server = Gunicorn(tmp_path / "gunicorn.log", env).start()
    try:
        yield server.port, server.env
    finally:
        server.stop()


def test_static_files_are_served_hashed_and_compressed_with_debug_off(
    gunicorn: tuple[int, dict[str, str]],
) -> None:
    port, _ = gunicorn
    page = request(port, "GET", "/accounts/login/")
    assert page.status == 200
    match = HASHED_CSS.search(page.read().decode())
    assert match, "the login page links the hashed stylesheet"
    css = request(port, "GET", match.group(1), headers={"Accept-Encoding": "gzip"})
    body = css.read()
    assert css.status == 200
    assert css.getheader("Content-Encoding") == "gzip"
    assert "immutable" in (css.getheader("Cache-Control") or "")
    assert body[:2] == b"\x1f\x8b"
    # The admin's own CSS (404 under gunicorn before WhiteNoise).
    admin = request(port, "GET", "/admin/login/")
    admin_css = re.search(
        r'href="(/static/admin/css/base\.[0-9a-f]{12}\.css)"', admin.read().decode()
    )
    assert admin_css and request(port, "GET", admin_css.group(1)).status == 200
    assert request(port, "GET", "/static/web/no-such-file.css").status == 404


def test_sse_streams_event_by_event_under_gunicorn(
    gunicorn: tuple[int, dict[str, str]], transactional_db: None
) -> None:
    port, _ = gunicorn
    teacher = make_teacher(tenant_name="流式学校", username="gsse")
    response = request(
        port,
        "POST",
        f"/api/agents/{teacher.agent.pk}/run/stream",
        headers={
            "Authorization": f"Token {teacher.token}",
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
        },
        body={"input": "出一份数据结构试卷"},
    )
    assert response.status == 200
    assert response.getheader("Content-Type", "").startswith("text/event-stream")
    assert "gzip" not in (response.getheader("Content-Encoding") or "")
    events: list[tuple[str, float]] = []
    buffer = b""
    reads = 0
    while chunk := response.read1(65536):
        reads += 1
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            fields = dict(line.split(": ", 1) for line in block.decode().splitlines())
            events.append((fields["event"], time.monotonic()))
    names = [name for name, _ in events]
    assert names[0] == "started" and names[-1] == "done"
    deltas = names.count("delta")
    assert deltas >= 3
    # Unbuffered: the events came in separate reads, spread over the model's pace
    # (STREAM_DELAY between deltas), not in one piece at the end.
    assert reads >= deltas
    started_at, done_at = events[0][1], events[-1][1]
    assert done_at - started_at >= (deltas - 1) * STREAM_DELAY * 0.5


def test_deploy_check_is_clean_with_django_secure_and_not_without(tmp_path: Path) -> None:
    secure = manage(
        production_env(tmp_path, DJANGO_SECURE="1"),
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
    )
    assert secure.returncode == 0, secure.stderr
    plain = manage(production_env(tmp_path), "check", "--deploy", "--fail-level", "WARNING")
    assert plain.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in plain.stderr


def test_doctor_in_production_mode_wants_collected_static_files(tmp_path: Path) -> None:
    env = production_env(tmp_path / "static")
    before = manage(env, "doctor")
    assert before.returncode == 1
    assert re.search(r"✗ static files +not collected", before.stdout), before.stdout
    assert manage(env, "collectstatic", "--noinput", "--verbosity", "0").returncode == 0
    after = manage(env, "doctor")
    assert re.search(r"✓ static files +\d+ files collected", after.stdout), after.stdout
