"""The memory scope: (tenant, agent, owner). Teacher A's memory never reaches teacher B."""

from __future__ import annotations

from dataclasses import dataclass

from agents.models import Agent


@dataclass(frozen=True, slots=True)
class Scope:
    tenant_id: int
    agent_id: int
    owner_id: int

    @classmethod
    def for_agent(cls, agent: Agent, owner_id: int) -> Scope:
        """The memory of ``owner_id`` with ``agent`` (an agent the caller already checked)."""
        return cls(tenant_id=agent.tenant_id, agent_id=agent.pk, owner_id=owner_id)

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
