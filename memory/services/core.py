"""Core memory (L2): confirmed facts, always injected within their cap."""

from __future__ import annotations

from memory.render import EMPTY, Rendered
from memory.scope import Scope


def core_render(*, scope: Scope, budget: int) -> Rendered:
    """The ``[核心记忆]`` section. Filled by the core-memory issue (#5)."""
    return EMPTY
