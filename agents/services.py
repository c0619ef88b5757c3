"""Writes about accounts and agents that are no operator's job: a user's own
preferences, and the agent settings a school's administrator may change from the API."""

from __future__ import annotations

from django.conf import settings

from agents.models import Agent, Preference
from agents.selectors import User, is_tenant_admin


class LanguageRejected(ValueError):
    """Not one of ``settings.LANGUAGES`` (nor "" for the browser's)."""


def preference_language_set(*, user_id: int, language: str) -> str:
    """Store the user's interface language ("" follows the browser); return it."""
    if language and language not in dict(settings.LANGUAGES):
        raise LanguageRejected(language)
    Preference.objects.update_or_create(user_id=user_id, defaults={"language": language})
    return language


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
