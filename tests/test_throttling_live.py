"""The limits hold across processes: two web servers, one limit store, requests alternating.

Each server is its own ``runserver`` process on config.settings with test-sized limits,
sharing the test database (the database cache and axes' attempts live there) or, when
LIMITS_CACHE_URL is set (``.ci/run`` sets a Redis), Redis for the run limits. A count
that lived in each process would let every request below through.
"""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.utils.crypto import get_random_string

from tests.cluster import serve
from tests.factories import Teacher, make_teacher
from tests.fakellm import unused_port

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

COOLOFF_SECONDS = 3
LIMITS = {
    "RUN_RATE_USER": "3/minute",
    "RUN_RATE_TENANT": "1000/minute",
    "LOGIN_FAILURE_LIMIT": "3",
    "LOGIN_COOLOFF_SECONDS": str(COOLOFF_SECONDS),
}


@pytest.fixture
def servers(transactional_db: None, tmp_path: Path) -> Iterator[list[int]]:
    # No clearing of the store (on Redis that would flush a shared database): keys carry
    # this run's Q_NAME and ids that are never reused.
    ports = [unused_port(), unused_port()]
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for n, port in enumerate(ports):
            processes.append(serve(port, tmp_path / f"server-{n}.log", **LIMITS))
        yield ports
    finally:
        for process in processes:
            process.kill()
            process.wait()


def teacher_with_password(username: str) -> Teacher:
    """A teacher whose password the servers can check: they run config.settings, whose
    hashers do not include the test settings' fast MD5."""
    teacher = make_teacher(tenant_name="双进程学校", username=username)
    password = PBKDF2PasswordHasher().encode(f"pw-{username}", get_random_string(12))
    get_user_model().objects.filter(pk=teacher.user.pk).update(password=password)
    return teacher


def request(
    port: int,
    method: str,
    path: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    return response.status, dict(response.getheaders()), response.read()


def post_json(port: int, path: str, payload: dict[str, str], token: str | None = None) -> tuple:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Token {token}"
    return request(port, "POST", path, body=json.dumps(payload).encode(), headers=headers)


def test_the_run_limit_is_shared_by_two_server_processes(servers: list[int]) -> None:
    teacher = make_teacher(tenant_name="双进程学校", username="two")
    path = f"/api/agents/{teacher.agent.pk}/run"
    statuses = []
    for n in range(6):
        status, headers, body = post_json(servers[n % 2], path, {"input": "你好"}, teacher.token)
        statuses.append(status)
        if status == 429:
            assert 1 <= int(headers["Retry-After"]) <= 60
            assert json.loads(body)["code"] == "throttled"
    assert statuses == [200, 200, 200, 429, 429, 429]


def test_wrong_passwords_lock_out_on_both_servers_and_recover(servers: list[int]) -> None:
    teacher = teacher_with_password("locked")
    statuses = [
        post_json(servers[n % 2], "/api/auth/token", {"username": "locked", "password": "bad"})[0]
        for n in range(3)
    ]
    assert statuses == [400, 400, 429]
    for port in servers:
        status, headers, body = post_json(
            port, "/api/auth/token", {"username": "locked", "password": "pw-locked"}
        )
        assert status == 429
        assert json.loads(body)["code"] == "login_locked"
        assert 1 <= int(headers["Retry-After"]) <= COOLOFF_SECONDS
    time.sleep(COOLOFF_SECONDS + 0.5)
    status, _, body = post_json(
        servers[1], "/api/auth/token", {"username": "locked", "password": "pw-locked"}
    )
    assert status == 200 and json.loads(body)["token"] == teacher.token


def _login_form(port: int) -> tuple[str, str]:
    """A fresh login form's CSRF cookie and token."""
    status, headers, body = request(port, "GET", "/accounts/login/")
    assert status == 200
    cookie = re.search(r"csrftoken=([^;]+)", headers["Set-Cookie"])
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body)
    assert cookie and token
    return cookie.group(1), token.group(1).decode()


def login(port: int, username: str, password: str) -> tuple[int, dict[str, str], bytes]:
    cookie, token = _login_form(port)
    form = urlencode({"username": username, "password": password, "csrfmiddlewaretoken": token})
    return request(
        port,
        "POST",
        "/accounts/login/",
        body=form.encode(),
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"csrftoken={cookie}",
        },
    )


def test_the_login_page_locks_across_servers_with_a_chinese_message(servers: list[int]) -> None:
    teacher_with_password("page")
    assert login(servers[0], "page", "bad")[0] == 200
    assert login(servers[1], "page", "bad")[0] == 200
    status, headers, body = login(servers[0], "page", "bad")
    assert status == 429
    assert "登录失败次数过多" in body.decode()
    status, _, _ = login(servers[1], "page", "pw-page")
    assert status == 429
    time.sleep(COOLOFF_SECONDS + 0.5)
    status, headers, _ = login(servers[1], "page", "pw-page")
    assert status == 302 and headers["Location"] == "/chat/"
