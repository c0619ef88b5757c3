"""Named pause points for crash tests of the memory worker.

In production this is a no-op: unless MEMORY_FAULT_DIR is set in the environment, a
checkpoint costs one dictionary lookup. A crash test sets it, creates
``<dir>/<name>.pause``, waits for ``<dir>/<name>.reached`` and then kills the worker
with SIGKILL, so a job dies exactly at that point (before/after the LLM call, before/
after the commit of the new summary).
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def checkpoint(name: str) -> None:
    directory = os.environ.get("MEMORY_FAULT_DIR")
    if not directory:
        return
    pause = Path(directory) / f"{name}.pause"
    if not pause.exists():
        return
    (Path(directory) / f"{name}.reached").write_text(str(os.getpid()))
    # Wait to be killed; a test that forgets us is released after a while.
    deadline = time.monotonic() + 120
    while pause.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
