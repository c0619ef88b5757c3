"""django-q2 task entry points of the runs app: take ids, call one service, return a dict."""

from __future__ import annotations

from runs.sweeper import recovery_sweep


def sweep() -> dict[str, int]:
    return recovery_sweep().as_dict()
