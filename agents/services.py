"""Agent settings a school's administrator may change from the API."""

from __future__ import annotations

from agents.models import Agent
from agents.selectors import User, is_tenant_admin


class AgentSettingsForbidden(PermissionError):
    """Only an administrator of the agent's tenant changes its settings."""


def agent_settings_update(*, agent: Agent, actor: User, archive_artifacts: bool | None) -> Agent:
    """Change the agent's opt-in settings. Raises :class:`AgentSettingsForbidden`."""
    if not is_tenant_admin(actor=actor, tenant_id=agent.tenant_id):
        raise AgentSettingsForbidden
    if archive_artifacts is not None and archive_artifacts != agent.archive_artifacts:
        Agent.objects.filter(pk=agent.pk).update(archive_artifacts=archive_artifacts)
        agent.archive_artifacts = archive_artifacts
    return agent
