"""The demo school: one tenant, one teacher, one agent on the offline provider."""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from rest_framework.authtoken.models import Token

from agents.models import Agent, Membership, Provider, Tenant

OFFLINE_PROVIDER_NAME = "离线演示模型"
DEMO_SYSTEM_PROMPT = "你是一名耐心、严谨的教学助手，帮助老师出题、备课和批改。回答使用简体中文。"


@dataclass(frozen=True, slots=True)
class DemoAccount:
    username: str
    password: str
    token: str
    tenant_id: int
    agent_id: int


def offline_provider_ensure() -> Provider:
    provider, _ = Provider.objects.get_or_create(
        name=OFFLINE_PROVIDER_NAME,
        defaults={"kind": Provider.Kind.OFFLINE, "locality": Provider.Locality.LOCAL},
    )
    return provider


def _demo_password(username: str) -> str:
    """Derived from SECRET_KEY, so the command can print it again without storing it."""
    digest = hmac.new(
        settings.SECRET_KEY.encode(), f"demo-password:{username}".encode(), hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest)[:16].decode()


def demo_bootstrap(*, tenant_name: str, username: str, agent_name: str = "教学助手") -> DemoAccount:
    """Idempotent: running it again changes nothing and prints the same account."""
    user_model = get_user_model()
    password = _demo_password(username)
    with transaction.atomic():
        provider = offline_provider_ensure()
        tenant, _ = Tenant.objects.get_or_create(name=tenant_name)
        user, _ = user_model.objects.get_or_create(username=username)
        if not user.check_password(password):
            user.set_password(password)
            user.save(update_fields=["password"])
        Membership.objects.get_or_create(
            tenant=tenant, user=user, defaults={"role": Membership.Role.TEACHER}
        )
        agent, _ = Agent.objects.get_or_create(
            tenant=tenant,
            name=agent_name,
            defaults={"provider": provider, "system_prompt": DEMO_SYSTEM_PROMPT},
        )
        token, _ = Token.objects.get_or_create(user=user)
    return DemoAccount(
        username=username,
        password=password,
        token=token.key,
        tenant_id=tenant.pk,
        agent_id=agent.pk,
    )
