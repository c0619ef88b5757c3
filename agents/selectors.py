"""Tenant-scoped reads for interface code. Another tenant's object looks missing."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from agents.models import Agent, Membership, Run

User = AbstractBaseUser | AnonymousUser


def _uid(user: User) -> int:
    if user.pk is None:
        raise ValueError("an anonymous user has no tenant")
    return int(user.pk)


def tenant_ids_for(user: User) -> list[int]:
    return list(Membership.objects.filter(user_id=_uid(user)).values_list("tenant_id", flat=True))


def agent_list(*, user: User) -> QuerySet[Agent]:
    return (
        Agent.objects.filter(tenant__memberships__user_id=_uid(user))
        .select_related("tenant", "provider", "memory_provider")
        .order_by("tenant_id", "name", "pk")
        .distinct()
    )


def agent_get(*, user: User, agent_id: int) -> Agent | None:
    return agent_list(user=user).filter(pk=agent_id).first()


def is_tenant_admin(*, user: User, tenant_id: int) -> bool:
    return Membership.objects.filter(
        user_id=_uid(user), tenant_id=tenant_id, role=Membership.Role.ADMIN
    ).exists()


def run_get(*, user: User, run_id: int) -> Run | None:
    """The caller's own run, or any run of a tenant the caller administers."""
    run = (
        Run.objects.filter(pk=run_id, tenant__memberships__user_id=_uid(user))
        .select_related("agent", "thread")
        .first()
    )
    if run is None:
        return None
    if run.owner_id == user.pk or is_tenant_admin(user=user, tenant_id=run.tenant_id):
        return run
    return None


def run_get_owned(*, user: User, run_id: int) -> Run | None:
    """Only the run's owner (used for the context manifest)."""
    return (
        Run.objects.filter(pk=run_id, owner_id=_uid(user), tenant__memberships__user_id=_uid(user))
        .select_related("agent", "thread")
        .first()
    )
