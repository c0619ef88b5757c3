"""Every API operation, attacked: each hostile request is a JSON 4xx and changes nothing.

The operations are read from the OpenAPI schema (tests/hostile.py), so an endpoint added
later is covered by every table here. Tables: raw bodies (deep nesting, huge, not UTF-8,
not JSON, not an object, NaN, 1e400, huge integers), each field of each body (NUL, lone
surrogates, wrong types, too long, unknown fields), ids in odd forms in every path, and
a property over arbitrary hostile JSON placed anywhere in a body. "Changes nothing" is
checked against every row of every model, before and after.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agents.api.schema import NON_BLANK_TEXT_PATTERN
from tests.factories import Teacher
from tests.hostile import (
    Operation,
    Tally,
    World,
    api_operations,
    as_json,
    build_world,
    changed_models,
    database_state,
    no_run_limits,  # noqa: F401 (a fixture)
    sample_body,
    tally_fixture,
)

OPERATIONS = api_operations()
BODY_OPERATIONS = [op for op in OPERATIONS if op.request_schema is not None]
ID_OPERATIONS = [op for op in OPERATIONS if op.path_params]


def _json(body: bytes | None) -> dict[str, Any]:
    return {"data": body, "content_type": "application/json"} if body else {}


tally = tally_fixture("test_hostile_input")
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_run_limits")]


@pytest.fixture
def world(teacher: Teacher, outsider: Teacher) -> World:
    return build_world(teacher, outsider)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


RAW_BODIES: list[tuple[str, bytes, str]] = [
    ("array nested 100k deep", nested(100_000).encode(), "application/json"),
    ("object nested 33 deep", ('{"a":' * 33 + "1" + "}" * 33).encode(), "application/json"),
    ("field nested 40 deep", b'{"input": ' + nested(40).encode() + b"}", "application/json"),
    (
        "over the size limit",
        b'{"input": "' + "长".encode() * 1_000_000 + b'"}',
        "application/json",
    ),
    ("not UTF-8", b'{"input": "\xff\xfe\xfd"}', "application/json"),
    ("UTF-8 BOM", b'\xef\xbb\xbf{"input": "x"}', "application/json"),
    ("truncated", b'{"input": "abc', "application/json"),
    ("trailing garbage", b'{"input": "abc"} {}', "application/json"),
    ("NaN literal", b'{"input": NaN}', "application/json"),
    ("Infinity literal", b'{"title": Infinity, "text": Infinity}', "application/json"),
    ("number out of range", b'{"input": 1e400, "title": 1e400, "text": 1e400}', "application/json"),
    ("5000-digit integer", b'{"input": ' + b"9" * 5000 + b"}", "application/json"),
    ("an array", b"[]", "application/json"),
    ("a string", b'"input"', "application/json"),
    ("a number", b"42", "application/json"),
    ("null", b"null", "application/json"),
    ("true", b"true", "application/json"),
    ("lone surrogate key", b'{"\\ud800": 1}', "application/json"),
    ("NUL key", b'{"\\u0000": 1}', "application/json"),
    ("form body", b"input=x&title=x&text=x", "application/x-www-form-urlencoded"),
    ("plain text", b"input", "text/plain"),
    ("compressing charset", b'{"input": "x"}', "application/json; charset=bz2_codec"),
    ("UTF-16 without saying so", '{"input": "x"}'.encode("utf-16"), "application/json"),
]


def _attack(
    tally: Tally, world: World, op: Operation, case: str, *, expect: set[int], **kwargs: Any
) -> Any:
    before = database_state()
    response = tally.send(world.teacher.client, op.method, world.url(op), **kwargs)
    assert response.status_code in expect, (op.label, case, response.status_code, response.content)
    as_json(response)
    assert changed_models(before, database_state()) == [], (op.label, case)
    return response


@pytest.mark.parametrize("op", BODY_OPERATIONS, ids=lambda op: op.label)
def test_hostile_raw_bodies_are_json_4xx_and_store_nothing(
    tally: Tally, world: World, op: Operation
) -> None:
    for name, body, content_type in RAW_BODIES:
        expect = {413} if name == "over the size limit" else {400}
        if content_type.startswith("text/plain"):
            expect = {415}
        elif content_type.startswith("application/x-www-form"):
            # A form is refused as a type (415), or, where the operation takes forms (an
            # upload), read and refused for its fields (400).
            expect = {400, 415} if op.takes_forms else {415}
        response = _attack(
            tally, world, op, name, expect=expect, data=body, content_type=content_type
        )
        if name.startswith(("array nested", "object nested")):
            assert "嵌套过深" in response.json()["detail"], name


def field_attacks(op: Operation) -> list[tuple[str, dict[str, Any]]]:
    """(name, body): a sample body with one field made hostile, for every field."""
    schema = op.request_schema or {}
    base = sample_body(op)
    attacks: list[tuple[str, dict[str, Any]]] = [
        ("unknown field", {**base, "zzz": 1}),
        ("unknown field alone", {"zzz": "x"}),
        ("misspelt field", {**base, **{name + "_": "x" for name in base}}),
    ]
    for name, prop in schema.get("properties", {}).items():
        if prop.get("type") == "object":
            values: dict[str, Any] = {
                "NUL deep": {"a": [{"b": "x\x00"}]},
                "surrogate deep": {"a": {"b": ["ok", "\udbff"]}},
                "surrogate key": {"\ud83d": 1},
                "NUL key": {"a": {"\x00": 1}},
                "nested 9 deep": json.loads('{"a":' * 9 + "1" + "}" * 9),
                "too large": {"notes": "长" * 10_001},
                "a string": "x",
                "an array": [1, 2],
                "a number": 3,
            }
        else:
            values = {
                "NUL": "a\x00b",
                "only NUL": "\x00",
                "lone high surrogate": "\ud800",
                "lone low surrogate inside": "x\udfffy",
                "integer": 7,
                "float": 1.5,
                "boolean": True,
                "array": ["x"],
                "object": {"x": "y"},
                "too long": "长" * 200_000,
            }
            # A value of the field's own type is no attack on it.
            for own in {"boolean": ["boolean"], "integer": ["integer"]}.get(
                prop.get("type", ""), []
            ):
                values.pop(own)
            if not prop.get("nullable"):
                values["null"] = None
            if prop.get("minLength"):
                values["empty"] = ""
            if prop.get("pattern") == NON_BLANK_TEXT_PATTERN:
                values["blank"] = " \u3000\t "
        attacks.extend((f"{name}: {what}", {**base, name: value}) for what, value in values.items())
    return attacks


@pytest.mark.slow
@pytest.mark.parametrize("op", BODY_OPERATIONS, ids=lambda op: op.label)
def test_hostile_fields_are_a_400_naming_the_field_and_store_nothing(
    tally: Tally, world: World, op: Operation
) -> None:
    for case, body in field_attacks(op):
        raw = json.dumps(body).encode()  # \ud800 and \u0000 travel as JSON escapes
        response = _attack(
            tally, world, op, case, expect={400}, data=raw, content_type="application/json"
        )
        errors = json.dumps(response.json(), ensure_ascii=False)
        field = case.split(":", 1)[0]
        if ":" in case:
            assert f'"{field}"' in errors, (op.label, case, errors)
        if "NUL" in case and "key" not in case:
            assert "空字符" in errors, (op.label, case, errors)
        if "surrogate" in case:
            assert "代理项" in errors, (op.label, case, errors)


ODD_IDS = [
    "１",  # full-width digit one
    "٣",  # Arabic-Indic three
    "¹",
    "0",
    "-1",
    "+1",
    "1.0",
    "1e3",
    "0x1",
    " 1",
    "1 ",
    "007",
    "9" * 19,
    "99999999999999999999999999",
    "1\x00",
    "\x00",
    "1;",
    "abc",
    "th_ＡＢ",
    "th_XYZ",
    "TH_ab",
    "th_" + "a" * 40,
    "th_-1",
    "th_ab\u200b",
    "..",
]


@pytest.mark.slow
@pytest.mark.parametrize("op", ID_OPERATIONS, ids=lambda op: op.label)
def test_ids_in_odd_forms_are_json_404_and_change_nothing(
    tally: Tally, world: World, op: Operation
) -> None:
    body = json.dumps(sample_body(op)).encode() if op.request_schema else None
    for name in op.path_params:
        for odd in ODD_IDS:
            before = database_state()
            path = world.url(op, **{name: quote(odd, safe="")})
            response = tally.send(world.teacher.client, op.method, path, **_json(body))
            assert response.status_code == 404, (op.label, name, odd, response.status_code)
            assert as_json(response)["code"] == "not_found"
            assert changed_models(before, database_state()) == [], (op.label, odd)


@pytest.mark.parametrize("op", ID_OPERATIONS, ids=lambda op: op.label)
def test_another_schools_ids_are_json_404_and_change_nothing(
    tally: Tally, world: World, op: Operation
) -> None:
    other = build_world(world.outsider, world.teacher).ids
    body = json.dumps(sample_body(op)).encode() if op.request_schema else None
    for name in op.path_params:
        before = database_state()
        response = tally.send(
            world.teacher.client, op.method, world.url(op, **{name: other[name]}), **_json(body)
        )
        assert response.status_code == 404, (op.label, name)
        as_json(response)
        assert changed_models(before, database_state()) == []


def test_every_operation_is_attacked() -> None:
    """The tables above cover every operation of the schema, bodies and ids alike."""
    assert len(OPERATIONS) >= 19
    labels = {op.label for op in OPERATIONS}
    assert "POST /api/agents/{agent_id}/run/" in labels
    assert "POST /api/auth/token/" in labels
    assert {op.label for op in BODY_OPERATIONS} >= {
        "POST /api/agents/{agent_id}/run/",
        "POST /api/agents/{agent_id}/run/stream/",
        "POST /api/auth/token/",
        "PATCH /api/threads/{thread_id}/",
        "PATCH /api/memory/facts/{fact_id}/",
        "POST /api/memory/candidates/{candidate_id}/confirm/",
    }
    for op in OPERATIONS:
        assert op.request_schema is not None or op.path_params or op.method == "get", op.label


@pytest.mark.parametrize(
    "op", [op for op in OPERATIONS if not op.request_schema], ids=lambda op: op.label
)
def test_operations_without_a_body_ignore_a_hostile_one(
    tally: Tally, world: World, op: Operation
) -> None:
    """A body the operation does not take is never read: no 5xx whatever it holds."""
    for body in (nested(100_000).encode(), b'{"\\ud800": "\\u0000"}', b"\xff" * 1000):
        response = tally.send(
            world.teacher.client,
            op.method.upper(),
            world.url(op),
            data=body,
            content_type="application/json",
        )
        assert response.status_code < 500, (op.label, response.content)
        if response.status_code >= 400:
            as_json(response)


# -- property: arbitrary hostile JSON anywhere in a body ---------------------------------
NASTY_TEXT = st.one_of(
    st.text(st.characters(codec=None, categories=None), max_size=8),
    st.sampled_from(["\x00", "\ud800", "\udfff", "１２", "\u200b", "‹用户›", "\ufeff", "\u3000"]),
)
HOSTILE_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | NASTY_TEXT,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(NASTY_TEXT, children, max_size=3)
    ),
    max_leaves=12,
)


@pytest.mark.slow
@given(
    op_index=st.integers(min_value=0, max_value=len(BODY_OPERATIONS) - 1),
    field_choice=st.integers(min_value=0, max_value=10),
    value=HOSTILE_JSON,
)
@hsettings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_arbitrary_hostile_json_anywhere_is_never_a_5xx_and_a_4xx_stores_nothing(
    tally: Tally, world: World, op_index: int, field_choice: int, value: Any
) -> None:
    op = BODY_OPERATIONS[op_index]
    body = sample_body(op)
    fields = [*body, "extra"]
    body[fields[field_choice % len(fields)]] = value
    before = database_state()
    response = tally.send(
        world.teacher.client,
        op.method,
        world.url(op),
        data=json.dumps(body).encode(),
        content_type="application/json",
    )
    assert response.status_code < 500, (op.label, body, response.content)
    if op.path.endswith("/run/stream/") and response.status_code == 200:
        b"".join(response.streaming_content)  # type: ignore[attr-defined]
        return
    errors = as_json(response)
    if response.status_code >= 400:
        changed = changed_models(before, database_state())
        if "non_field_errors" in errors and op.path == "/api/auth/token/":
            # Well-formed credentials that are wrong: counted, by design (agents/logins.py).
            assert changed in ([], ["axes.AccessAttempt"]), (op.label, body)
        else:
            assert changed == [], (op.label, body)
