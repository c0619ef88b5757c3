"""What the API accepts as JSON: bounded depth, finite numbers, text that can be written back."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.api import jsonbody

# Text as a hostile client sends it: any code point, lone surrogates and NUL included.
ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=12)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(ANY_TEXT, children, max_size=4)
    ),
    max_leaves=25,
)


def nested(depth: int, *, inner: str = "[]") -> str:
    return "[" * (depth - 1) + inner + "]" * (depth - 1)


@pytest.mark.parametrize("depth", [jsonbody.MAX_DEPTH + 1, 100, 5_000, 200_000])
def test_deep_nesting_is_refused_without_recursion(depth: int) -> None:
    with pytest.raises(jsonbody.BodyRejected, match="嵌套过深"):
        jsonbody.loads(nested(depth))
    with pytest.raises(jsonbody.BodyRejected, match="嵌套过深"):
        jsonbody.loads('{"a":' * depth + "1" + "}" * depth)


def test_nesting_at_the_limit_is_accepted() -> None:
    assert jsonbody.loads(nested(jsonbody.MAX_DEPTH)) is not None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("NaN", "NaN"),
        ('{"a": Infinity}', "Infinity"),
        ("[-Infinity]", "-Infinity"),
        ("{", "JSON"),
        ('{"a": 1,}', "JSON"),
        ("\ufeff{}", "JSON"),
        ("", "JSON"),
        ("1" * 5_000, "数字过长"),
    ],
)
def test_unparseable_text_is_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(jsonbody.BodyRejected, match=reason):
        jsonbody.loads(text)


@pytest.mark.parametrize(
    ("value", "where", "reason"),
    [
        ({"a": "x\x00y"}, "a", "空字符"),
        ({"a": ["ok", "\ud800"]}, "a[1]", "U+D800"),
        ({"a": {"b\udfff": 1}}, "a", "键名"),
        ({"a\x00": 1}, "", "键名"),
        ({"a": 1e400}, "a", "超出范围"),
        ({"a": [float("-inf")]}, "a[0]", "超出范围"),
        ({"a": float("nan")}, "a", "超出范围"),
        ({1: "x"}, "", "字符串"),
        ({"a": {1, 2}}, "a", "JSON"),
        ({"a": b"bytes"}, "a", "JSON"),
        ({"k" * 100: "\x00"}, "k" * 40 + "…", "空字符"),
    ],
)
def test_unstorable_values_are_found_with_their_path(value: Any, where: str, reason: str) -> None:
    unsafe = jsonbody.find_unsafe(value)
    assert unsafe is not None
    assert unsafe.where == where
    assert reason in unsafe.message


def test_the_first_problem_in_document_order_is_reported() -> None:
    unsafe = jsonbody.find_unsafe({"a": ["fine", {"b": "\x00"}], "c": "\ud800"})
    assert unsafe is not None and unsafe.where == "a[1].b"


def test_depth_counts_containers() -> None:
    assert jsonbody.find_unsafe({"a": {"b": 1}}, max_depth=2) is None
    unsafe = jsonbody.find_unsafe({"a": {"b": []}}, max_depth=2)
    assert unsafe is not None and unsafe.where == "a.b"


def _writable(value: Any) -> bool:
    """Independently: can this value be written as UTF-8 JSON without NUL and read back?"""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (ValueError, TypeError, UnicodeEncodeError):
        return False
    return "\x00" not in text and "\\u0000" not in text


@given(JSON_VALUES)
@settings(max_examples=400, deadline=None)
def test_a_value_is_safe_exactly_when_it_can_be_written_back(value: Any) -> None:
    assert (jsonbody.find_unsafe(value, max_depth=100) is None) == _writable(value)


@given(JSON_VALUES)
@settings(max_examples=300, deadline=None)
def test_loads_of_a_safe_value_gives_it_back(value: Any) -> None:
    if jsonbody.find_unsafe(value) is not None:
        return
    text = json.dumps(value, ensure_ascii=False)
    assert jsonbody.find_unsafe(jsonbody.loads(text)) is None
    assert json.dumps(jsonbody.loads(text), ensure_ascii=False) == text


@given(st.floats())
def test_only_finite_numbers_are_safe(number: float) -> None:
    assert (jsonbody.find_unsafe([number]) is None) == math.isfinite(number)
