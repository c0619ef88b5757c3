"""The OpenAPI schema says what the API does: pages, validated bodies, constrained
parameters and the errors each operation answers. (schemathesis checks the running
server against it: scripts/api-fuzz.sh.)"""

from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def op(schema: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    return schema["paths"][path][method]


def resolve(schema: dict[str, Any], ref: dict[str, Any]) -> dict[str, Any]:
    return schema["components"]["schemas"][ref["$ref"].rsplit("/", 1)[-1]]


def query(operation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "query"}


@pytest.mark.parametrize(
    "path",
    [
        "/api/agents/{agent_id}/threads/",
        "/api/agents/{agent_id}/memory/candidates/",
        "/api/threads/{thread_id}/runs/",
    ],
)
def test_paginated_lists_are_documented_as_pages(schema: dict[str, Any], path: str) -> None:
    operation = op(schema, "get", path)
    page = resolve(schema, operation["responses"]["200"]["content"]["application/json"]["schema"])
    assert set(page["properties"]) == {"count", "next", "previous", "results"}
    assert page["properties"]["results"]["type"] == "array"
    params = query(operation)
    assert params["page"]["schema"]["minimum"] == 1
    assert params["page_size"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 100}
    assert "404" in operation["responses"]


@pytest.mark.parametrize(
    ("path", "field"),
    # (A fact's PATCH takes text or valid_until, at least one: neither alone is required.)
    [("/api/threads/{thread_id}/", "title")],
)
def test_patch_bodies_are_documented_as_validated(
    schema: dict[str, Any], path: str, field: str
) -> None:
    body = op(schema, "patch", path)["requestBody"]
    assert body["required"] is True
    component = resolve(schema, body["content"]["application/json"]["schema"])
    assert component["required"] == [field]
    assert component["properties"][field]["minLength"] == 1
    assert component["additionalProperties"] is False


def test_query_parameters_are_constrained(schema: dict[str, Any]) -> None:
    recall = query(op(schema, "get", "/api/agents/{agent_id}/recall/"))
    assert recall["q"]["required"] is True
    assert recall["q"]["schema"]["minLength"] == 1 and recall["q"]["schema"]["maxLength"] == 2000
    assert "pattern" in recall["q"]["schema"]
    assert recall["limit"]["schema"]["minimum"] == 1 and recall["limit"]["schema"]["maximum"] == 50
    threads = query(op(schema, "get", "/api/agents/{agent_id}/threads/"))
    assert threads["status"]["schema"]["enum"] == ["active", "archived"]


def test_path_ids_are_ascii_digits(schema: dict[str, Any]) -> None:
    for path, methods in schema["paths"].items():
        for operation in methods.values():
            for param in operation.get("parameters", []):
                if param["in"] == "path":
                    assert param["schema"]["pattern"] in (
                        "^[1-9][0-9]{0,17}$",
                        "^th_[0-9a-f]{1,28}$",
                    ), (path, param)


@pytest.mark.parametrize(
    ("method", "path", "codes"),
    [
        (
            "post",
            "/api/agents/{agent_id}/run/",
            {"200", "400", "401", "403", "404", "413", "415", "429"},
        ),
        ("post", "/api/agents/{agent_id}/run/stream/", {"200", "400", "401", "404", "413", "429"}),
        ("post", "/api/auth/token/", {"200", "400", "413", "415", "429"}),
        ("get", "/api/runs/{run_id}/", {"200", "401", "404"}),
        ("get", "/api/runs/{run_id}/export/", {"200", "400", "401", "404", "409"}),
        ("patch", "/api/threads/{thread_id}/", {"200", "400", "401", "403", "404", "413", "415"}),
        ("post", "/api/memory/candidates/{candidate_id}/reject/", {"204", "401", "403", "404"}),
        ("get", "/api/agents/", {"200", "401"}),
    ],
)
def test_errors_are_documented_where_they_happen(
    schema: dict[str, Any], method: str, path: str, codes: set[str]
) -> None:
    responses = op(schema, method, path)["responses"]
    assert codes <= set(responses), sorted(set(responses))
    if "429" in codes:
        assert "Retry-After" in responses["429"]["headers"]
    if "401" not in codes:
        assert "401" not in responses


def test_the_stream_documents_its_events_and_its_errors_as_events(schema: dict[str, Any]) -> None:
    responses = op(schema, "post", "/api/agents/{agent_id}/run/stream/")["responses"]
    event = responses["200"]["content"]["text/event-stream"]["schema"]
    assert event["properties"]["event"]["enum"] == ["started", "delta", "tool", "done", "error"]
    error = responses["400"]["content"]["text/event-stream"]["schema"]
    assert error["properties"]["event"]["enum"] == ["error"]


def test_only_the_export_takes_a_format_parameter(schema: dict[str, Any]) -> None:
    # DRF's ?format= renderer switch is off (Accept negotiates): an empty or unknown
    # value would otherwise be accepted against a documented enum (schemathesis ST201).
    with_format = {
        (path, method)
        for path, methods in schema["paths"].items()
        for method, operation in methods.items()
        if "format" in query(operation)
    }
    assert with_format == {("/api/runs/{run_id}/export/", "get")}
