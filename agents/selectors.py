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

from agents.models import Agent, Membership, Preference, Provider, Tenant
from agents.rows import PlanCache, RowPlan

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
    """An agent of one of the actor's tenants, with its tenant and providers, or Http404.

    Plain SQL (agents/rows.py), as the read path's other per-run reads: every run request
    starts here, and compiling the ORM query (three ``select_related`` and the tenants
    subquery) cost more than running it. The instances are the ORM's own
    (``Model.from_db`` with the fields' converters), related objects cached as
    ``select_related`` would.
    """
    found = _AGENT_PLAN.get().fetch_one([agent_id, actor_id(actor)])
    if found is None:
        raise Http404
    agent, tenant, provider, memory_provider = found
    assert isinstance(agent, Agent)
    Agent.tenant.field.set_cached_value(agent, tenant)
    Agent.provider.field.set_cached_value(agent, provider)
    Agent.memory_provider.field.set_cached_value(agent, memory_provider)
    return agent


def _agent_plan() -> RowPlan:
    agents = Agent._meta.db_table
    tenants = Tenant._meta.db_table
    providers = Provider._meta.db_table
    memberships = Membership._meta.db_table
    return RowPlan(
        f"SELECT {{columns}} FROM {agents} a "
        f"JOIN {tenants} t ON t.id = a.tenant_id "
        f"JOIN {providers} p ON p.id = a.provider_id "
        f"LEFT JOIN {providers} m ON m.id = a.memory_provider_id "
        f"WHERE a.id = %s AND a.tenant_id IN "
        f"(SELECT tenant_id FROM {memberships} WHERE user_id = %s)",
        [(Agent, "a"), (Tenant, "t"), (Provider, "p"), (Provider, "m")],
    )


_AGENT_PLAN = PlanCache(_agent_plan)


def preferred_language(*, user_id: int) -> str:
    """The user's chosen interface language, or "" to follow the browser's."""
    language = Preference.objects.filter(user_id=user_id).values_list("language", flat=True).first()
    return language or ""
