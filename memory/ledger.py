"""The read-path budget ledger: pure, Django-free.

One ledger per run holds every injected section plus the mode and continue prompts.
Sections are filled in priority order (core > thread > KB > recall); each gets at most its
own cap and at most what is left of the total. The total itself is clamped so that the
injected context can never push a run past the L0 window.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class LedgerOverdraft(ValueError):
    pass


@dataclass
class Ledger:
    total: int
    spent: dict[str, int] = field(default_factory=dict)

    @classmethod
    def for_run(
        cls, *, cap_total: int, window_tokens: int, protected_tokens: int, reserve: int = 0
    ) -> Ledger:
        """A ledger whose total never reaches the window cap.

        ``protected_tokens`` is what the run sends regardless (system prompt, the
        teacher's message); ``reserve`` is headroom for message framing.
        """
        room = window_tokens - protected_tokens - reserve - 1
        return cls(total=max(0, min(cap_total, room)))

    @property
    def used(self) -> int:
        return sum(self.spent.values())

    @property
    def remaining(self) -> int:
        return self.total - self.used

    def grant(self, cap: int) -> int:
        """How many tokens a section with ``cap`` may use now."""
        return max(0, min(cap, self.remaining))

    def charge(self, name: str, tokens: int) -> None:
        if tokens < 0:
            raise ValueError("a charge cannot be negative")
        if tokens > self.remaining:
            raise LedgerOverdraft(f"{name} needs {tokens} tokens, {self.remaining} left")
        self.spent[name] = self.spent.get(name, 0) + tokens
