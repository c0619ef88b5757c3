"""The memory scope: (tenant, agent, owner). Teacher A's memory never reaches teacher B."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Scope:
    tenant_id: int
    agent_id: int
    owner_id: int

    @classmethod
    def of(cls, obj: object) -> Scope:
        """The scope of anything with tenant_id, agent_id and owner_id (a run, a thread)."""
        return cls(
            tenant_id=obj.tenant_id,  # type: ignore[attr-defined]
            agent_id=obj.agent_id,  # type: ignore[attr-defined]
            owner_id=obj.owner_id,  # type: ignore[attr-defined]
        )

    def filter_kwargs(self) -> dict[str, int]:
        return {"tenant_id": self.tenant_id, "agent_id": self.agent_id, "owner_id": self.owner_id}
