"""Episodic recall (L3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory.render import EMPTY, Rendered
from memory.scope import Scope

if TYPE_CHECKING:
    from agents.models import Run


@dataclass(frozen=True, slots=True)
class RecallHit:
    entry_id: int
    run_id: int
    score: float
    passes_gate: bool
    text: str
    created_at: str


def recall_render(
    *, scope: Scope, query: str, exclude_run_ids: set[int], budget: int
) -> tuple[Rendered, list[RecallHit]]:
    """The ``[相关历史]`` section. Filled by the recall issue (#6)."""
    return EMPTY, []


def recall_upsert(*, run: Run) -> None:
    """Write the run's recall entry (idempotent on run id). Filled by the recall issue."""
