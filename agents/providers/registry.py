"""Turns a configured :class:`~agents.models.Provider` row into a client."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from django.conf import settings

from agents.providers.base import LLMClient
from agents.providers.offline import OfflineClient
from agents.providers.openai_compat import OpenAICompatClient

if TYPE_CHECKING:
    from agents.models import Provider


def client_for(provider: Provider) -> LLMClient:
    if provider.kind == "offline":
        return OfflineClient(
            name=provider.name,
            stream_delay=settings.OFFLINE_STREAM_DELAY,
            supports_tools=provider.supports_tools,
        )
    api_key = os.environ.get(provider.api_key_env) if provider.api_key_env else None
    return OpenAICompatClient(
        name=provider.name,
        base_url=provider.base_url,
        model=provider.model,
        api_key=api_key or None,
        timeout=provider.timeout_seconds,
        supports_tools=provider.supports_tools,
    )
