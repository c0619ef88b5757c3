"""Knowledge base (L4) retrieval: not built yet; its slot in the ledger exists."""

from __future__ import annotations

from memory.render import EMPTY, Rendered
from memory.scope import Scope


def kb_render(*, scope: Scope, query: str, budget: int) -> Rendered:
    """The ``[知识库检索结果]`` section: empty until a knowledge base exists."""
    return EMPTY
