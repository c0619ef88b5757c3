"""L4: archiving a run's artifact into the knowledge base (agent opt-in).

The knowledge base itself is not built yet; the step exists in the job so that its
place in the order (after extraction) and its idempotency contract are fixed.
"""

from __future__ import annotations

from agents.models import Run


def run_archive(*, run: Run) -> bool:
    """Archive the run's output if its agent opted in. Returns whether anything was done."""
    return False
