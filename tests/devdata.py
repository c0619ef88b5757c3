"""Where the shared development data lives (../shared/data beside the project).

A clone elsewhere (CI's clean clone in a temporary folder) finds it through
AGENT_MEMORY_DEV_DATA or the workplace's fixed location.

Tests that read it call :func:`require_dev_data`: a missing folder FAILS the test, so a
run that silently checked nothing cannot pass (CI must have the data). A developer
without the data may set AGENT_MEMORY_ALLOW_MISSING_DATA=1 to skip those tests instead;
CI never sets it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ALLOW_MISSING = "AGENT_MEMORY_ALLOW_MISSING_DATA"

_CANDIDATES = [
    os.environ.get("AGENT_MEMORY_DEV_DATA", ""),
    str(Path(__file__).resolve().parents[2] / "shared" / "data"),
    "/work/shared/data",
]


def dev_data() -> Path:
    """The first existing candidate (the last one if none exists, for error messages)."""
    for candidate in _CANDIDATES:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return Path(_CANDIDATES[-1])


def require_dev_data(path: Path) -> Path:
    """``path`` if it is there; else fail the test (skip it only if explicitly allowed)."""
    if path.is_dir():
        return path
    message = (
        f"the shared development data is missing: {path} (set AGENT_MEMORY_DEV_DATA; "
        f"{ALLOW_MISSING}=1 skips these tests on a machine without it, never in CI)"
    )
    if os.environ.get(ALLOW_MISSING) == "1":
        pytest.skip(message)
    pytest.fail(message)
