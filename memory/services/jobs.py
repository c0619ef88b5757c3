"""The background memory job for a finished run (DESIGN.md "Write path")."""

from __future__ import annotations


def after_run_enqueue(*, run_id: int) -> None:
    """Enqueue the memory job; call inside the transaction that finishes the run."""
