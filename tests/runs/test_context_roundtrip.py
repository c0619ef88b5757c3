"""Any run ``context`` the API stores can be rendered back, wherever a run is shown.

A property over arbitrary JSON values (any code point, lone surrogates and NUL
included, as a hostile client would send them): a request is either refused with a 400
and no run row, or its run is created and rendered back, with the same context, by
``GET /api/runs/{id}``, ``GET /api/threads/{id}/runs`` and the stream's ``done`` event.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.models import Run
from tests.factories import Teacher
from tests.hostile import Tally, no_run_limits, tally_fixture  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_run_limits")]

ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=10)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(ANY_TEXT, children, max_size=3)
    ),
    max_leaves=15,
)
CONTEXTS = st.dictionaries(ANY_TEXT, VALUES, max_size=4)


tally = tally_fixture("test_context_roundtrip")


def normalised(value: Any) -> Any:
    """JSON as the databases give it back: numbers compared as numbers (PostgreSQL's jsonb
    writes 1e300 as an integer), object key order ignored."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [normalised(item) for item in value]
    return {key: normalised(item) for key, item in value.items()}


def sse_events(response: Any) -> list[tuple[str, Any]]:
    body = b"".join(response.streaming_content).decode("utf-8")
    events = []
    for block in body.strip().split("\n\n"):
        # SSE lines end at \n only (str.splitlines would also split at U+2028).
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def _post(tally: Tally, teacher: Teacher, context: Any, *, stream: bool) -> Any:
    path = f"/api/agents/{teacher.agent.pk}/run" + ("/stream" if stream else "")
    body = json.dumps({"input": "出一份数据结构试卷", "context": context}).encode()
    return tally.send(teacher.client, "post", path, data=body, content_type="application/json")


@pytest.mark.slow
@given(context=CONTEXTS, stream=st.booleans())
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_a_stored_context_is_rendered_back_everywhere(
    tally: Tally, teacher: Teacher, context: dict[str, Any], stream: bool
) -> None:
    runs_before = Run.objects.count()
    response = _post(tally, teacher, context, stream=stream)
    assert response.status_code in (200, 400), response.content
    if response.status_code == 400:
        # A message on context (context.mode, context.run_id: the options' own checks),
        # or, for NaN and Infinity (no JSON), the body refused as a whole.
        errors = response.json()
        on_context = all(key.startswith("context") for key in errors)
        assert on_context or errors.get("code") == "parse_error", errors
        assert Run.objects.count() == runs_before
        return
    if stream:
        events = sse_events(response)
        assert events[-1][0] == "done", events
        run_id = events[0][1]["run_id"]
        rendered = [events[-1][1]["run"]["context"]]
    else:
        run_id = response.json()["id"]
        rendered = [response.json()["context"]]
    detail = tally.send(teacher.client, "get", f"/api/runs/{run_id}")
    assert detail.status_code == 200
    thread_id = detail.json()["thread_id"]
    runs = tally.send(teacher.client, "get", f"/api/threads/{thread_id}/runs")
    assert runs.status_code == 200
    rendered += [detail.json()["context"], runs.json()["results"][-1]["context"]]
    assert Run.objects.count() == runs_before + 1
    for shown in rendered:
        assert normalised(shown) == normalised(context)


def test_every_kind_of_unstorable_context_is_refused_before_a_run_exists(
    tally: Tally, teacher: Teacher
) -> None:
    bad = [
        {"x": "\ud800"},
        {"\udc00": 1},
        {"x": ["a", {"y": "b\x00"}]},
        {"\x00": True},
        {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {}}}}}}}}},
        {"notes": "长" * 10_001},
    ]
    for context in bad:
        for stream in (False, True):
            response = _post(tally, teacher, context, stream=stream)
            assert response.status_code == 400, (context, response.content)
            assert list(response.json()) == ["context"]
    # 1e400 parses as infinity, which no JSON can hold.
    raw = b'{"input": "x", "context": {"x": [1e400]}}'
    path = f"/api/agents/{teacher.agent.pk}/run"
    response = tally.send(teacher.client, "post", path, data=raw, content_type="application/json")
    assert response.status_code == 400
    assert "超出范围" in response.json()["context"][0]
    assert Run.objects.count() == 0
