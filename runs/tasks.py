"""django-q2 task entry points of the runs app: take ids, call one service, return a dict."""

from __future__ import annotations

from memory.durability import synchronous_commit
from runs.sweeper import recovery_sweep


def sweep() -> dict[str, int]:
    synchronous_commit(wait=False, session=True)  # redone when lost (memory/durability.py)
    return recovery_sweep().as_dict()
