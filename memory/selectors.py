"""Reads of memory objects: access-checked getters and cost totals.

Getters (see ``agents.selectors`` for the contract): threads are their owner's alone;
candidates and facts may be managed by their owner and by an administrator of their
tenant (the API); the memory panel narrows that to one scope, the teacher's own, by
passing ``scope``. Knowledge-base documents are readable by every member of their
tenant when shared with the agent, by their owner alone when private.

Cost totals: run cost and memory-operation cost, summed apart (design v2 §5) into one
Decimal :class:`CostTotals`, for the thread API and the operators' admin alike; the same
sums per local day (:func:`cost_by_day`, :class:`DailyCost`) for the admin's cost chart.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, Literal

from django.db.models import (
    Count,
    DecimalField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, TruncDate
from django.http import Http404
from django.utils import timezone

from agents.models import Membership, Run
from agents.selectors import User, actor_id, tenant_ids_for
from memory.models import (
    CoreCandidate,
    CoreFact,
    KBDocument,
    MemoryAuditEvent,
    MemoryJob,
    MemoryOp,
    Thread,
)
from memory.scope import Scope


def thread_get(*, actor: User, thread_id: str) -> Thread:
    """The actor's own thread in one of their tenants, or Http404."""
    thread = (
        Thread.objects.visible()
        .filter(pk=thread_id, owner_id=actor_id(actor), tenant_id__in=tenant_ids_for(actor))
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
    """The candidates the actor may confirm or reject (within ``scope`` if given); none
    from a deleted run (it is being erased with it)."""
    queryset = CoreCandidate.objects.filter(_manageable(actor), source_run__deleted_at__isnull=True)
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


def memory_job_get(*, actor: User, job_id: int) -> MemoryJob:
    """A governance job the actor started, in one of their tenants, or Http404."""
    job = MemoryJob.objects.filter(
        pk=job_id, actor_id=actor_id(actor), tenant_id__in=tenant_ids_for(actor)
    ).first()
    if job is None:
        raise Http404
    return job


def audit_events_for(*, scope: Scope) -> QuerySet[MemoryAuditEvent]:
    """The audit events of one teacher's memory with one agent, newest first."""
    return MemoryAuditEvent.objects.filter(**scope.filter_kwargs()).order_by("-created_at", "-pk")


def audit_events_administered(*, actor: User) -> QuerySet[MemoryAuditEvent]:
    """Every audit event of the tenants the actor administers (the admin's list)."""
    admin_tenants = Membership.objects.filter(
        user_id=actor_id(actor), role=Membership.Role.ADMIN
    ).values("tenant_id")
    return MemoryAuditEvent.objects.filter(tenant_id__in=admin_tenants)


def kb_documents_readable(*, actor: User) -> QuerySet[KBDocument]:
    """Knowledge-base documents the actor may read: in one of their tenants, shared with
    the agent's members or their own (a colleague's private document is not there)."""
    return KBDocument.objects.filter(tenant_id__in=tenant_ids_for(actor)).filter(
        Q(visibility=KBDocument.Visibility.AGENT) | Q(owner_id=actor_id(actor))
    )


def kb_document_get(*, actor: User, document_id: int) -> KBDocument:
    """A knowledge-base document the actor may read, or Http404."""
    document = (
        kb_documents_readable(actor=actor)
        .filter(pk=document_id)
        .select_related("owner", "agent")
        .first()
    )
    if document is None:
        raise Http404
    return document


def kb_documents_deletable(*, actor: User, documents: Collection[KBDocument]) -> set[int]:
    """Which of ``documents`` the actor may delete (one query at most): their own, and
    shared ones in a tenant they administer."""
    me = actor_id(actor)
    shared_elsewhere = {
        d.tenant_id
        for d in documents
        if d.owner_id != me and d.visibility == KBDocument.Visibility.AGENT
    }
    administered = (
        set(
            Membership.objects.filter(
                user_id=me, tenant_id__in=shared_elsewhere, role=Membership.Role.ADMIN
            ).values_list("tenant_id", flat=True)
        )
        if shared_elsewhere
        else set()
    )
    return {
        d.pk
        for d in documents
        if d.owner_id == me
        or (d.visibility == KBDocument.Visibility.AGENT and d.tenant_id in administered)
    }


def kb_document_may_delete(*, actor: User, document: KBDocument) -> bool:
    """Its owner may delete a document; an administrator of its tenant a shared one too."""
    return document.pk in kb_documents_deletable(actor=actor, documents=[document])


# -- cost totals --------------------------------------------------------------------------
# The column of Run and MemoryOp that points at the row being totalled.
CostKey = Literal["thread_id", "agent_id", "tenant_id"]
_MONEY = DecimalField(max_digits=20, decimal_places=6)
# Costs are stored to the micro-unit (Provider.cost_of); SQLite sums decimals as floats,
# so a sum is brought back to that precision.
_MICRO = Decimal("0.000001")


@dataclass(frozen=True, slots=True)
class CostTotals:
    """What some runs and their memory work cost, apart; ``total_cost`` is their sum."""

    run_count: int = 0
    run_cost: Decimal = Decimal(0)
    run_input_tokens: int = 0
    run_output_tokens: int = 0
    memory_op_count: int = 0
    memory_cost: Decimal = Decimal(0)
    memory_input_tokens: int = 0
    memory_output_tokens: int = 0

    @property
    def total_cost(self) -> Decimal:
        return self.run_cost + self.memory_cost


_SUMS = {
    "count": Count("pk"),
    "cost": Sum("cost"),
    "input_tokens": Sum("input_tokens"),
    "output_tokens": Sum("output_tokens"),
}
_NONE: dict[str, Any] = {}


def _money(value: Decimal | None) -> Decimal:
    return (value or Decimal(0)).quantize(_MICRO)


def _totals(runs: dict[str, Any], ops: dict[str, Any]) -> CostTotals:
    return CostTotals(
        run_count=runs.get("count") or 0,
        run_cost=_money(runs.get("cost")),
        run_input_tokens=runs.get("input_tokens") or 0,
        run_output_tokens=runs.get("output_tokens") or 0,
        memory_op_count=ops.get("count") or 0,
        memory_cost=_money(ops.get("cost")),
        memory_input_tokens=ops.get("input_tokens") or 0,
        memory_output_tokens=ops.get("output_tokens") or 0,
    )


def cost_totals(*, memory_ops: QuerySet[MemoryOp], runs: QuerySet[Run] | None = None) -> CostTotals:
    """The totals of a filtered set of memory operations (and runs): one query each."""
    run_sums = runs.aggregate(**_SUMS) if runs is not None else _NONE
    return _totals(run_sums, memory_ops.aggregate(**_SUMS))


def cost_totals_by(*, key: CostKey, ids: Collection[Any]) -> dict[Any, CostTotals]:
    """Totals per thread, agent or tenant, for every id given: two grouped queries."""
    if not ids:
        return {}

    def grouped(queryset: QuerySet[Any]) -> dict[Any, dict[str, Any]]:
        rows = queryset.filter(**{f"{key}__in": ids}).order_by().values(key).annotate(**_SUMS)
        return {row[key]: row for row in rows}

    runs = grouped(Run.objects.all())
    ops = grouped(MemoryOp.objects.all())
    return {pk: _totals(runs.get(pk, _NONE), ops.get(pk, _NONE)) for pk in ids}


def cost_ordering(*, key: CostKey, part: Literal["run", "memory"]) -> Coalesce:
    """A sort expression on one row's run or memory cost (the admin's sortable columns)."""
    model: Any = Run if part == "run" else MemoryOp
    total = (
        model.objects.filter(**{key: OuterRef("pk")})
        .order_by()
        .values(key)
        .annotate(total=Sum("cost"))
        .values("total")[:1]
    )
    return Coalesce(Subquery(total, output_field=_MONEY), Value(Decimal(0)), output_field=_MONEY)


@dataclass(frozen=True, slots=True)
class DailyCost:
    """Run cost and memory cost of one local day (the server's time zone), apart."""

    day: date
    run_cost: Decimal = Decimal(0)
    memory_cost: Decimal = Decimal(0)

    @property
    def total_cost(self) -> Decimal:
        return self.run_cost + self.memory_cost


def cost_by_day(
    *,
    key: CostKey | None,
    ids: Collection[Any] = (),
    days: int = 30,
    today: date | None = None,
) -> list[DailyCost]:
    """The last ``days`` local days up to ``today``, oldest first, every day present.

    Runs and memory operations of the given threads, agents or tenants (``key`` and
    ``ids``), or of everything (``key=None``), each counted on the day it was created:
    two grouped queries over the ``(key, created_at)`` indexes.
    """
    zone = timezone.get_current_timezone()
    today = today or timezone.localdate()
    first = today - timedelta(days=days - 1)
    since = timezone.make_aware(datetime.combine(first, time.min), zone)

    def per_day(model: Any) -> dict[date, Decimal]:
        queryset = model.objects.filter(created_at__gte=since)
        if key is not None:
            queryset = queryset.filter(**{f"{key}__in": ids})
        rows = (
            queryset.order_by()
            .annotate(day=TruncDate("created_at", tzinfo=zone))
            .values("day")
            .annotate(cost=Sum("cost"))
        )
        return {row["day"]: _money(row["cost"]) for row in rows}

    runs, ops = per_day(Run), per_day(MemoryOp)
    return [
        DailyCost(
            day=day, run_cost=runs.get(day, _money(None)), memory_cost=ops.get(day, _money(None))
        )
        for day in (first + timedelta(days=offset) for offset in range(days))
    ]
