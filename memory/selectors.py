"""Access-checked reads of memory objects (see ``agents.selectors`` for the contract).

Threads are their owner's alone. Candidates and facts may be managed by their owner and
by an administrator of their tenant (the API); the memory panel narrows that to one
scope, the teacher's own, by passing ``scope``.
"""

from __future__ import annotations

from collections.abc import Collection

from django.db.models import Count, Q, QuerySet
from django.http import Http404

from agents.models import Membership
from agents.selectors import User, actor_id, tenant_ids_for
from memory.models import CoreCandidate, CoreFact, Thread
from memory.scope import Scope


def thread_get(*, actor: User, thread_id: str) -> Thread:
    """The actor's own thread in one of their tenants, or Http404."""
    thread = (
        Thread.objects.filter(
            pk=thread_id, owner_id=actor_id(actor), tenant_id__in=tenant_ids_for(actor)
        )
        .select_related("agent", "agent__provider", "agent__memory_provider")
        .annotate(run_count=Count("runs"))
        .first()
    )
    if thread is None:
        raise Http404
    return thread


def _manageable(actor: User) -> Q:
    """Items in the actor's tenants that are theirs, or in a tenant they administer."""
    memberships = Membership.objects.filter(user_id=actor_id(actor))
    admin_tenants = memberships.filter(role=Membership.Role.ADMIN).values("tenant_id")
    return Q(tenant_id__in=memberships.values("tenant_id")) & (
        Q(owner_id=actor_id(actor)) | Q(tenant_id__in=admin_tenants)
    )


def candidates_manageable(*, actor: User, scope: Scope | None = None) -> QuerySet[CoreCandidate]:
    """The candidates the actor may confirm or reject (within ``scope`` if given)."""
    queryset = CoreCandidate.objects.filter(_manageable(actor))
    return queryset if scope is None else queryset.for_scope(**scope.filter_kwargs())


def facts_manageable(*, actor: User, scope: Scope | None = None) -> QuerySet[CoreFact]:
    """The facts the actor may edit or delete (within ``scope`` if given)."""
    queryset = CoreFact.objects.filter(_manageable(actor))
    return queryset if scope is None else queryset.for_scope(**scope.filter_kwargs())


def candidate_get(*, actor: User, candidate_id: int, scope: Scope | None = None) -> CoreCandidate:
    """A candidate the actor may manage (within ``scope`` if given), or Http404."""
    candidate = candidates_manageable(actor=actor, scope=scope).filter(pk=candidate_id).first()
    if candidate is None:
        raise Http404
    return candidate


def candidates_get(
    *, actor: User, candidate_ids: Collection[int], scope: Scope | None = None
) -> list[CoreCandidate]:
    """Every one of the candidates, or Http404 if any is missing or not the actor's."""
    wanted = set(candidate_ids)
    found = list(candidates_manageable(actor=actor, scope=scope).filter(pk__in=wanted))
    if len(found) != len(wanted):
        raise Http404
    return found


def fact_get(*, actor: User, fact_id: int, scope: Scope | None = None) -> CoreFact:
    """A fact the actor may manage (within ``scope`` if given), or Http404."""
    fact = facts_manageable(actor=actor, scope=scope).filter(pk=fact_id).first()
    if fact is None:
        raise Http404
    return fact
