"""Where the shared development data lives (../shared/data beside the project).

A clone elsewhere (CI's clean clone in a temporary folder) finds it through
AGENT_MEMORY_DEV_DATA or the workplace's fixed location.
"""

from __future__ import annotations

import os
from pathlib import Path

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
