"""Parsing an extraction answer: robust, pure. Garbage gives nothing, never a crash."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

MAX_FACTS = 5
MAX_EVIDENCE_CHARS = 500


@dataclass(frozen=True, slots=True)
class Proposal:
    fact: str
    evidence: str
    confidence: float


def _json_candidates(text: str) -> list[Any]:
    """JSON values found in ``text``: the whole, a fenced block, or the first {...}/[...]."""
    found: list[Any] = []
    pieces = [text]
    pieces += re.findall(r"```(?:json)?\s*(.*?)```", text, flags=re.S)
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            pieces.append(text[start : end + 1])
    for piece in pieces:
        try:
            found.append(json.loads(piece))
        except (ValueError, RecursionError):
            continue
    return found


def _confidence(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.5
    if math.isnan(number) or math.isinf(number):
        return 0.5
    if number > 1 and number <= 100:  # a percentage
        number /= 100
    return min(1.0, max(0.0, number))


def parse_proposals(text: str, *, max_fact_chars: int) -> list[Proposal]:
    """Proposals from a model answer; ``NONE``, prose or broken JSON give ``[]``.

    A fact longer than ``max_fact_chars`` (``memory.models.MAX_FACT_CHARS``) is dropped.
    """
    if not isinstance(text, str) or not text.strip():
        return []
    stripped = text.strip()
    if stripped.upper().startswith("NONE") and "{" not in stripped:
        return []
    for value in _json_candidates(stripped):
        items = value.get("facts") if isinstance(value, dict) else value
        if isinstance(value, dict) and items is None and "fact" in value:
            items = [value]
        if not isinstance(items, list):
            continue
        proposals: list[Proposal] = []
        for item in items[:MAX_FACTS]:
            if not isinstance(item, dict):
                continue
            fact, evidence = item.get("fact"), item.get("evidence")
            if not isinstance(fact, str) or not isinstance(evidence, str):
                continue
            fact, evidence = fact.strip(), evidence.strip()
            if not fact or not evidence or len(fact) > max_fact_chars:
                continue
            proposals.append(
                Proposal(
                    fact=fact,
                    evidence=evidence[:MAX_EVIDENCE_CHARS],
                    confidence=_confidence(item.get("confidence")),
                )
            )
        return proposals
    return []
