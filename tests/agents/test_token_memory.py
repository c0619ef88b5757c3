"""API tokens remembered per process (agents/api/authentication.py): a query saved per
request, and revocation (token deleted, teacher deactivated) honoured within
API_TOKEN_CACHE_SECONDS, at once with 0. Real time with a short setting: the bound is
what is tested."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from agents.api.authentication import RememberedTokenAuthentication, remembered
from tests.factories import Teacher, make_teacher

pytestmark = pytest.mark.django_db

TTL = 0.6


@pytest.fixture(autouse=True)
def forget_tokens() -> Any:
    remembered.clear()
    yield
    remembered.clear()


def agents_of(teacher: Teacher) -> int:
    return int(teacher.client.get("/api/agents").status_code)


def token_reads(teacher: Teacher) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert agents_of(teacher) == 200
    return sum(1 for q in queries if "authtoken_token" in q["sql"])


def test_a_valid_token_is_read_once_per_period(settings: Any, teacher: Teacher) -> None:
    settings.API_TOKEN_CACHE_SECONDS = 60
    assert token_reads(teacher) == 1
    assert token_reads(teacher) == 0
    assert token_reads(teacher) == 0


@pytest.mark.parametrize(
    "revoke",
    [
        lambda t: Token.objects.filter(key=t.token).delete(),
        lambda t: type(t.user).objects.filter(pk=t.user.pk).update(is_active=False),
    ],
    ids=["token deleted", "teacher deactivated"],
)
def test_revocation_takes_effect_within_the_period(
    settings: Any, teacher: Teacher, revoke: Any
) -> None:
    settings.API_TOKEN_CACHE_SECONDS = TTL
    began = time.monotonic()
    assert agents_of(teacher) == 200
    # The token was remembered at some moment of that first request: the period ends
    # between began + TTL and (end of the first request) + TTL.
    remembered_by = time.monotonic() - began
    revoke(teacher)
    statuses = []
    while time.monotonic() - began < TTL + remembered_by + 0.5:
        sent = time.monotonic() - began
        status = agents_of(teacher)
        statuses.append((sent, time.monotonic() - began, status))
        time.sleep(0.05)
    # Accepted while surely remembered (answered before the earliest end of the period),
    # refused for good once the latest end has passed (a slow machine blurs only between).
    assert all(status == 200 for _, answered, status in statuses if answered < TTL)
    assert all(status == 401 for sent, _, status in statuses if sent > TTL + remembered_by)
    assert statuses[-1][2] == 401


def test_with_zero_seconds_a_revoked_token_is_refused_at_once(
    settings: Any, teacher: Teacher
) -> None:
    settings.API_TOKEN_CACHE_SECONDS = 0
    assert agents_of(teacher) == 200
    Token.objects.filter(key=teacher.token).delete()
    assert agents_of(teacher) == 401


def test_unknown_tokens_are_not_remembered_and_users_are_not_shared(
    settings: Any, teacher: Teacher
) -> None:
    settings.API_TOKEN_CACHE_SECONDS = 60
    other = make_teacher(tenant_name="别校", username="other-school")
    stranger = other.client
    stranger.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    for _ in range(3):
        assert stranger.get("/api/agents").status_code == 401
    assert len(remembered._entries) == 0
    # Each request gets its own user object: one request's changes never reach another's.
    auth = RememberedTokenAuthentication()
    first, _ = auth.authenticate_credentials(teacher.token)
    first.first_name = "changed by one request"
    second, _ = auth.authenticate_credentials(teacher.token)
    assert second is not first and second.first_name != "changed by one request"
    assert second.pk == teacher.user.pk
