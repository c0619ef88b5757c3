"""Limits: runs per teacher and per school (DRF throttles), wrong passwords per username
and per client address on every login surface (django-axes), with test-sized limits.

The cool-down is shown by moving the recorded failures back in time (the clock, not the
rule, is what a test should not wait for); tests/test_throttling_live.py waits for real,
across two server processes.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.db.models import F
from django.test import Client
from rest_framework.test import APIClient

from agents.models import Run
from tests.factories import Teacher, make_teacher

pytestmark = pytest.mark.django_db

COOLOFF = timedelta(minutes=15)


@pytest.fixture
def limits(settings: Any) -> Any:
    settings.RUN_RATE_USER = "3/minute"
    settings.RUN_RATE_TENANT = "100/minute"
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = COOLOFF
    return settings


def run(teacher: Teacher, *, stream: bool = False, agent_id: int | None = None) -> Any:
    path = f"/api/agents/{agent_id or teacher.agent.pk}/run" + ("/stream" if stream else "")
    response = teacher.client.post(path, {"input": "出一份数据结构试卷"}, format="json")
    if stream and response.status_code == 200:
        b"".join(response.streaming_content)
    return response


def assert_throttled(response: Any) -> int:
    assert response.status_code == 429, response.content
    body = response.json()
    wait = int(response["Retry-After"])
    assert 1 <= wait <= 60
    assert body["code"] == "throttled" and body["retry_after"] == wait
    assert "请稍后再试" in body["detail"]
    return wait


def cool_down() -> None:
    """As if the cool-off time had passed since every recorded failure."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - COOLOFF - timedelta(seconds=1))


def test_a_teacher_gets_the_user_rate_across_sync_and_stream(
    limits: Any, teacher: Teacher, colleague: Teacher
) -> None:
    assert run(teacher).status_code == 200
    assert run(teacher, stream=True).status_code == 200
    assert run(teacher).status_code == 200
    runs = Run.objects.count()
    assert_throttled(run(teacher))
    assert_throttled(run(teacher, stream=True))
    assert Run.objects.count() == runs
    # The limit is the teacher's own: a colleague on the same agent still runs.
    assert run(colleague).status_code == 200


def test_a_school_gets_the_tenant_rate_across_its_teachers(
    limits: Any, teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    limits.RUN_RATE_USER = "100/minute"
    limits.RUN_RATE_TENANT = "3/minute"
    assert [run(t).status_code for t in (teacher, colleague, teacher)] == [200, 200, 200]
    assert_throttled(run(colleague))
    assert_throttled(run(teacher, stream=True))
    assert run(outsider).status_code == 200


def test_requests_for_another_schools_agent_do_not_spend_its_limit(
    limits: Any, teacher: Teacher, outsider: Teacher
) -> None:
    limits.RUN_RATE_USER = "100/minute"
    limits.RUN_RATE_TENANT = "3/minute"
    for _ in range(5):
        assert run(outsider, agent_id=teacher.agent.pk).status_code == 404
    assert [run(teacher).status_code for _ in range(3)] == [200, 200, 200]


def test_anonymous_run_requests_are_401_not_throttled(limits: Any, teacher: Teacher) -> None:
    client = APIClient()
    for _ in range(5):
        response = client.post(f"/api/agents/{teacher.agent.pk}/run", {"input": "x"}, format="json")
        assert response.status_code == 401


def token(username: str, password: str, address: str = "198.51.100.7", **extra: str) -> Any:
    return APIClient().post(
        "/api/auth/token",
        {"username": username, "password": password},
        format="json",
        REMOTE_ADDR=address,
        **extra,
    )


def assert_locked_api(response: Any) -> None:
    assert response.status_code == 429, response.content
    body = response.json()
    assert body["code"] == "login_locked"
    assert "登录失败次数过多" in body["detail"] and "分钟后再试" in body["detail"]
    assert int(response["Retry-After"]) == body["retry_after"]
    assert COOLOFF.total_seconds() - 5 <= body["retry_after"] <= COOLOFF.total_seconds()


def test_token_wrong_passwords_lock_the_username_then_recover(
    limits: Any, teacher: Teacher
) -> None:
    assert token("zhang", "wrong-1").status_code == 400
    assert token("zhang", "wrong-2").status_code == 400
    assert_locked_api(token("zhang", "wrong-3"))
    # Locked: even the right password is refused, from another address too.
    assert_locked_api(token("zhang", "pw-zhang"))
    assert_locked_api(token("zhang", "pw-zhang", address="203.0.113.9"))
    cool_down()
    good = token("zhang", "pw-zhang")
    assert good.status_code == 200 and good.json()["token"] == teacher.token


def test_attempts_while_locked_do_not_extend_the_lockout(limits: Any, teacher: Teacher) -> None:
    for n in range(3):
        token("zhang", f"wrong-{n}")
    before = list(AccessAttempt.objects.values_list("attempt_time", "failures_since_start"))
    for _ in range(5):
        assert_locked_api(token("zhang", "wrong-again"))
    assert list(AccessAttempt.objects.values_list("attempt_time", "failures_since_start")) == before


def test_one_address_trying_many_usernames_is_locked(
    limits: Any, teacher: Teacher, outsider: Teacher
) -> None:
    for name in ("nobody-1", "nobody-2", "nobody-3"):
        token(name, "guess", address="192.0.2.50")
    assert_locked_api(token("zhang", "pw-zhang", address="192.0.2.50"))
    assert token("wang", "pw-wang", address="192.0.2.51").status_code == 200


def test_a_clients_own_forwarded_for_header_is_ignored_without_a_proxy(
    limits: Any, teacher: Teacher
) -> None:
    for n in range(3):
        token(f"nobody-{n}", "guess", address="192.0.2.60", HTTP_X_FORWARDED_FOR=f"10.9.0.{n}")
    assert_locked_api(
        token("zhang", "pw-zhang", address="192.0.2.60", HTTP_X_FORWARDED_FOR="10.9.0.99")
    )


def test_behind_a_proxy_the_forwarded_address_is_the_client(limits: Any, teacher: Teacher) -> None:
    limits.REST_FRAMEWORK = {**limits.REST_FRAMEWORK, "NUM_PROXIES": 1}
    proxy = "127.0.0.1"
    for n in range(3):
        token(f"nobody-{n}", "guess", address=proxy, HTTP_X_FORWARDED_FOR="192.0.2.70")
    assert_locked_api(token("zhang", "pw-zhang", address=proxy, HTTP_X_FORWARDED_FOR="192.0.2.70"))
    assert (
        token("zhang", "pw-zhang", address=proxy, HTTP_X_FORWARDED_FOR="192.0.2.71").status_code
        == 200
    )


def login_page(client: Client, path: str, username: str, password: str) -> Any:
    return client.post(
        path, {"username": username, "password": password}, REMOTE_ADDR="198.51.100.8"
    )


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_login_pages_lock_with_a_chinese_message_then_recover(
    limits: Any, teacher: Teacher, path: str
) -> None:
    user = get_user_model().objects.get(username="zhang")
    user.is_staff = user.is_superuser = True
    user.save()
    client = Client()
    assert login_page(client, path, "zhang", "wrong-1").status_code == 200
    assert login_page(client, path, "zhang", "wrong-2").status_code == 200
    for password in ("wrong-3", "pw-zhang"):
        locked = login_page(client, path, "zhang", password)
        assert locked.status_code == 429
        page = locked.content.decode()
        assert locked["Content-Type"].startswith("text/html")
        assert "登录失败次数过多" in page and "分钟后再试" in page
        assert 'lang="zh-hans"' in page
    assert "_auth_user_id" not in client.session
    cool_down()
    response = login_page(client, path, "zhang", "pw-zhang")
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(user.pk)


def test_the_three_surfaces_share_one_count(limits: Any, teacher: Teacher) -> None:
    login_page(Client(), "/accounts/login/", "zhang", "wrong-1")
    login_page(Client(), "/admin/login/", "zhang", "wrong-2")
    assert token("zhang", "wrong-3", address="198.51.100.8").status_code == 429
    assert_locked_api(token("zhang", "pw-zhang", address="203.0.113.1"))


def test_a_successful_login_does_not_reset_the_address_count(
    limits: Any, teacher: Teacher, outsider: Teacher
) -> None:
    """Else one valid account would let an attacker spray other usernames forever."""
    token("nobody-1", "guess", address="192.0.2.80")
    token("nobody-2", "guess", address="192.0.2.80")
    assert token("wang", "pw-wang", address="192.0.2.80").status_code == 200
    assert_locked_api(token("nobody-3", "guess", address="192.0.2.80"))
    make_teacher(tenant_name="第三中学", username="zhao")
    assert_locked_api(token("zhao", "pw-zhao", address="192.0.2.80"))
