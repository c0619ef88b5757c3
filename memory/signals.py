"""Signal receivers of the memory app (connected in ``MemoryConfig.ready``).

One receiver: a removed recall entry, by whatever path (a governance cascade, the admin
deleting a run, a user or agent deleted), bumps its scope's version and epoch in the
removing transaction, so that every process's index drops it (memory.services.recall).
A receiver rather than a call in each service, because Django's cascades delete entries
that no service sees.
"""

from __future__ import annotations

from typing import Any

from memory.models import RecallEntry
from memory.scope import Scope
from memory.services.recall import recall_entry_removed


def recall_entry_post_delete(
    sender: type[RecallEntry], instance: RecallEntry, **kwargs: Any
) -> None:
    recall_entry_removed(scope=Scope.of(instance))
