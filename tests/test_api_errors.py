"""Every response under /api/ is JSON, whatever produced it; pages keep their HTML.

Resolver 404s, 405s, Django's own size limit (413), a bad Host (400), unhandled
exceptions in DRF and plain views (500 with a request id that the log has too), a stream
that breaks after it started. tests/api_fault_urls.py adds views that fail on purpose.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from runs.api.sse import guarded
from tests.factories import Teacher

pytestmark = pytest.mark.django_db

FAULTS = "tests.api_fault_urls"


@pytest.fixture(params=[False, True], ids=["debug-off", "debug-on"])
def debug(request: Any, settings: Any) -> bool:
    settings.DEBUG = request.param
    return bool(request.param)


def assert_json_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    body: dict[str, Any] = response.json()
    assert body["code"] == code
    assert isinstance(body["detail"], str) and body["detail"]
    assert len(response["X-Request-ID"]) == 16
    return body


@pytest.mark.parametrize(
    "path",
    [
        "/api/nothing-here",
        "/api/runs/-1",
        "/api/runs/abc",
        "/api/threads/th_XYZ",
        "/api/",
        "/api/agents/1/run/stream/extra",
        "/api/runs/%EF%BC%91",  # ／api/runs/１
        "/api/th%C3%A9",
    ],
)
def test_resolver_404s_under_api_are_json(debug: bool, teacher: Teacher, path: str) -> None:
    assert_json_error(teacher.client.get(path), 404, "not_found")


def test_pages_keep_html_error_pages(settings: Any) -> None:
    settings.DEBUG = False
    response = Client().get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert "X-Request-ID" not in response


def test_405_is_json_and_names_the_allowed_methods(teacher: Teacher) -> None:
    response = teacher.client.put(f"/api/agents/{teacher.agent.pk}/run", {}, format="json")
    assert_json_error(response, 405, "method_not_allowed")
    assert "POST" in response["Allow"]


def test_a_bad_host_is_a_json_400(settings: Any) -> None:
    settings.DEBUG = False
    response = Client(HTTP_HOST="evil.example").get("/api/agents")
    assert_json_error(response, 400, "bad_request")


def test_a_parser_over_djangos_own_limit_is_a_json_413(settings: Any, teacher: Teacher) -> None:
    settings.ROOT_URLCONF = FAULTS
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = teacher.client.post(
        "/api/test-faults/form",
        data="a=" + "x" * 2000,
        content_type="application/x-www-form-urlencoded",
    )
    assert_json_error(response, 413, "payload_too_large")
    small = teacher.client.post(
        "/api/test-faults/form", data="a=1", content_type="application/x-www-form-urlencoded"
    )
    assert small.json() == {"fields": ["a"]}


@pytest.mark.parametrize("path", ["/api/test-faults/drf", "/api/test-faults/plain"])
def test_a_500_says_only_that_something_failed_with_the_id_in_the_log(
    debug: bool, settings: Any, teacher: Teacher, caplog: Any, path: str
) -> None:
    settings.ROOT_URLCONF = FAULTS
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {teacher.token}")
    with caplog.at_level(logging.ERROR, logger="agents.api"):
        response = client.get(path)
    body = assert_json_error(response, 500, "server_error")
    assert set(body) == {"detail", "code", "request_id"}
    assert body["request_id"] == response["X-Request-ID"]
    assert "secret" not in response.content.decode() and "Broken" not in response.content.decode()
    logged = [r for r in caplog.records if body["request_id"] in r.getMessage()]
    assert logged and logged[0].exc_info is not None
    assert "secret detail" in str(logged[0].exc_info[1])


def test_a_page_500_stays_html(settings: Any) -> None:
    settings.ROOT_URLCONF = FAULTS
    settings.DEBUG = False
    response = Client(raise_request_exception=False).get("/test-faults/plain")
    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")


def test_an_html_error_from_a_view_under_api_becomes_json(settings: Any) -> None:
    settings.ROOT_URLCONF = FAULTS
    assert_json_error(Client().get("/api/test-faults/html"), 400, "bad_request")


def test_a_stream_that_breaks_ends_with_an_error_event(
    settings: Any, teacher: Teacher, caplog: Any
) -> None:
    settings.ROOT_URLCONF = FAULTS
    with caplog.at_level(logging.ERROR):
        response = Client().get("/api/test-faults/stream")
        body = b"".join(response.streaming_content).decode()
    assert body.startswith("event: started\n")
    last = body.strip().split("\n\n")[-1]
    assert last.startswith("event: error\n")
    assert '"code":"server_error"' in last and response["X-Request-ID"] in last
    assert "secret" not in body
    assert any(response["X-Request-ID"] in r.getMessage() for r in caplog.records)


def test_guarded_passes_a_healthy_stream_through_unchanged() -> None:
    assert list(guarded(iter(["a", "b"]), request_id="x")) == ["a", "b"]


def test_a_nul_in_the_input_is_named_as_such(teacher: Teacher) -> None:
    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/run",
        data=b'{"input": "\\u51fa\\u9898\\u0000"}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json() == {"input": ["不能包含空字符（U+0000）。"]}
