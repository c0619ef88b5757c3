"""Parsing an extraction answer: one fact length for the parser, the columns and the API."""

from __future__ import annotations

import json

import pytest

from memory.extraction import parse_proposals
from memory.models import MAX_FACT_CHARS, CoreCandidate, CoreFact


def answer(fact: str) -> str:
    return json.dumps({"facts": [{"fact": fact, "evidence": "人教版", "confidence": 0.9}]})


@pytest.mark.parametrize(
    ("fact", "kept"),
    [
        ("用" * MAX_FACT_CHARS, True),
        ("用" * (MAX_FACT_CHARS + 1), False),
        ("老师偏好人教版教材", True),
        ("   ", False),
    ],
)
def test_the_parser_keeps_facts_up_to_the_column_length(fact: str, kept: bool) -> None:
    proposals = parse_proposals(answer(fact), max_fact_chars=MAX_FACT_CHARS)
    assert [p.fact for p in proposals] == ([fact.strip()] if kept else [])


@pytest.mark.parametrize("text", ["NONE", "", "没有可记的", "{broken", "[1, 2]", '{"facts": 7}'])
def test_garbage_gives_nothing(text: str) -> None:
    assert parse_proposals(text, max_fact_chars=MAX_FACT_CHARS) == []


def test_the_columns_hold_the_longest_fact() -> None:
    assert CoreFact._meta.get_field("text").max_length == MAX_FACT_CHARS
    assert CoreCandidate._meta.get_field("fact").max_length == MAX_FACT_CHARS
