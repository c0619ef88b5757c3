"""L4: archiving a run's artifact into the knowledge base (agent opt-in).

The memory job's last step. When the run's agent has ``archive_artifacts`` on, a
completed run's output becomes its owner's private knowledge-base document (titled from
the thread's title and the date), red-line redacted like every chunk; one document per
run, so a redelivered job changes nothing.
"""

from __future__ import annotations

from agents.models import Run
from memory.services.kb_documents import kb_artifact_archive


def run_archive(*, run: Run) -> bool:
    """Archive the run's output if its agent opted in. Returns whether a document exists
    for the run afterwards."""
    if not run.agent.archive_artifacts:
        return False
    return kb_artifact_archive(run=run) is not None
