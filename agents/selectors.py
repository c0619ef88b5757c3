"""Tenant-scoped reads for interface code: the actor's tenants and agents.

Every access-checked getter in the project (``agent_get`` here, ``thread_get``,
``candidate_get`` and ``fact_get`` in ``memory.selectors``, ``run_get`` in
``runs.selectors``) takes the acting user and returns the object or raises
:class:`~django.http.Http404`: a missing object and one the actor may not see look the
same. DRF and Django views both answer ``Http404`` with a 404, so a view calls the
getter and nothing else.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.http import Http404

from agents.models import Agent, Membership, Preference

User = AbstractBaseUser | AnonymousUser


def actor_id(actor: User) -> int:
    """The acting user's id. Interface code only calls selectors behind authentication."""
    if actor.pk is None:
        raise ValueError("an anonymous user has no tenant")
    return int(actor.pk)


def tenant_ids_for(actor: User) -> QuerySet[Membership, int]:
    """The actor's tenants, as a subquery (``tenant_id__in=...`` stays one query)."""
    return Membership.objects.filter(user_id=actor_id(actor)).values_list("tenant_id", flat=True)


def is_tenant_admin(*, actor: User, tenant_id: int) -> bool:
    return Membership.objects.filter(
        user_id=actor_id(actor), tenant_id=tenant_id, role=Membership.Role.ADMIN
    ).exists()


def agent_list(*, actor: User) -> QuerySet[Agent]:
    """The agents of every tenant the actor belongs to."""
    return (
        Agent.objects.filter(tenant__memberships__user_id=actor_id(actor))
        .select_related("tenant", "provider", "memory_provider")
        .order_by("tenant_id", "name", "pk")
        .distinct()
    )


def agent_get(*, actor: User, agent_id: int) -> Agent:
    """An agent of one of the actor's tenants, or Http404."""
    # One agent: the tenants as a subquery (no join with DISTINCT, no ordering).
    agent = (
        Agent.objects.filter(pk=agent_id, tenant_id__in=tenant_ids_for(actor))
        .select_related("tenant", "provider", "memory_provider")
        .first()
    )
    if agent is None:
        raise Http404
    return agent


def preferred_language(*, user_id: int) -> str:
    """The user's chosen interface language, or "" to follow the browser's."""
    language = Preference.objects.filter(user_id=user_id).values_list("language", flat=True).first()
    return language or ""
