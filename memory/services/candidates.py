"""Core-memory candidate extraction (design v2 §4): filled by the core-memory issue."""

from __future__ import annotations

from agents.models import Run


def candidates_extract(*, run: Run) -> int:
    """Propose pending candidates from the teacher's own words in this run."""
    return 0
