"""Operators' view of the memory: threads, memory ops and cost, candidates, facts, audit."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib import admin, messages
from django.db.models import Count, DecimalField, OuterRef, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.translation import gettext_lazy as _

from agents.models import Run
from memory.models import (
    CoreCandidate,
    CoreFact,
    MemoryOp,
    RecallEntry,
    RedlineAudit,
    RunContext,
    Thread,
)
from memory.services import facts

_MONEY = DecimalField(max_digits=14, decimal_places=6)


def _sum_subquery(model: Any, field: str, **filters: Any) -> Subquery:
    return Subquery(
        model.objects.filter(**filters)
        .order_by()
        .values(*filters.keys())
        .annotate(total=Sum(field))
        .values("total")[:1],
        output_field=_MONEY,
    )


def with_costs(queryset: QuerySet[Any], key: str) -> QuerySet[Any]:
    """Annotate run cost and memory-op cost (kept apart, design v2 §5) per row.

    ``key`` is the column of Run and MemoryOp that points at the row (thread_id,
    agent_id or tenant_id).
    """
    return queryset.annotate(
        _run_cost=Coalesce(_sum_subquery(Run, "cost", **{key: OuterRef("pk")}), Value(Decimal(0))),
        _memory_cost=Coalesce(
            _sum_subquery(MemoryOp, "cost", **{key: OuterRef("pk")}), Value(Decimal(0))
        ),
    )


class CostColumns:
    """Admin columns for rows annotated by :func:`with_costs`."""

    @admin.display(description=_("运行成本"), ordering="_run_cost")
    def run_cost_total(self, obj: Any) -> Decimal:
        return obj._run_cost

    @admin.display(description=_("记忆成本"), ordering="_memory_cost")
    def memory_cost_total(self, obj: Any) -> Decimal:
        return obj._memory_cost

    @admin.display(description=_("累计成本"))
    def cost_total(self, obj: Any) -> Decimal:
        return obj._run_cost + obj._memory_cost


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Thread)
class ThreadAdmin(CostColumns, admin.ModelAdmin):
    list_display = [
        "id",
        "title",
        "agent",
        "owner",
        "status",
        "runs_total",
        "summary_upto_run_id",
        "run_cost_total",
        "memory_cost_total",
        "cost_total",
        "updated_at",
    ]
    list_filter = ["status", "agent__tenant", "agent"]
    list_select_related = ["agent", "owner"]
    search_fields = ["id", "title", "owner__username"]
    readonly_fields = [
        "id",
        "tenant",
        "agent",
        "owner",
        "rolling_summary",
        "summary_upto_at",
        "summary_upto_run_id",
        "compress_enqueued_at",
        "created_at",
        "updated_at",
    ]
    fields = ["title", "status", *readonly_fields]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Thread]:
        queryset = super().get_queryset(request).annotate(_runs=Count("runs", distinct=True))
        return with_costs(queryset, "thread_id")

    @admin.display(description=_("运行数"), ordering="_runs")
    def runs_total(self, obj: Any) -> int:
        return int(obj._runs)


@admin.register(MemoryOp)
class MemoryOpAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "kind",
        "agent",
        "thread",
        "run",
        "provider_name",
        "input_tokens",
        "output_tokens",
        "cost",
        "success",
        "error_code",
    ]
    list_filter = ["kind", "success", "provider_name", "agent__tenant"]
    list_select_related = ["agent", "thread", "run"]
    search_fields = ["thread__id", "run__id"]
    date_hierarchy = "created_at"

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        response = super().changelist_view(request, extra_context)
        if (
            isinstance(response, TemplateResponse)
            and response.context_data
            and "cl" in response.context_data
        ):
            queryset = response.context_data["cl"].queryset
            totals = queryset.aggregate(
                cost=Sum("cost"),
                input_tokens=Sum("input_tokens"),
                output_tokens=Sum("output_tokens"),
            )
            self.message_user(
                request,
                _("当前筛选合计：%(n)d 次，输入 %(i)s token，输出 %(o)s token，成本 %(c)s")
                % {
                    "n": queryset.count(),
                    "i": totals["input_tokens"] or 0,
                    "o": totals["output_tokens"] or 0,
                    "c": totals["cost"] or 0,
                },
                level=messages.INFO,
            )
        return response


@admin.register(RunContext)
class RunContextAdmin(ReadOnlyAdmin):
    list_display = ["run", "created_at"]
    list_select_related = ["run"]
    search_fields = ["run__id"]


def _actor_id(request: HttpRequest) -> int:
    return int(request.user.pk or 0)


@admin.action(description=_("确认所选候选（以管理员身份）"))
def confirm_candidates(
    modeladmin: Any, request: HttpRequest, queryset: QuerySet[CoreCandidate]
) -> None:
    result = facts.candidates_confirm_many(candidates=queryset, actor_id=_actor_id(request))
    modeladmin.message_user(
        request,
        _("已确认 %(d)d 条，未能确认 %(f)d 条。")
        % {"d": len(result.confirmed), "f": len(result.refused)},
    )
    if result.evicted_texts:
        modeladmin.message_user(
            request,
            _("已达上限，已淘汰最久未使用的记忆：%(facts)s")
            % {"facts": "、".join(f"「{t}」" for t in result.evicted_texts)},
            level=messages.INFO,
        )


@admin.action(description=_("删除所选候选"))
def reject_candidates(
    modeladmin: Any, request: HttpRequest, queryset: QuerySet[CoreCandidate]
) -> None:
    result = facts.candidates_reject_many(candidates=queryset, actor_id=_actor_id(request))
    modeladmin.message_user(
        request,
        _("已删除 %(d)d 条，无权删除 %(f)d 条。") % {"d": result.done, "f": result.forbidden},
    )


@admin.action(description=_("删除所选记忆"))
def delete_facts(modeladmin: Any, request: HttpRequest, queryset: QuerySet[CoreFact]) -> None:
    result = facts.facts_delete_many(facts=queryset, actor_id=_actor_id(request))
    modeladmin.message_user(
        request,
        _("已删除 %(d)d 条，无权删除 %(f)d 条。") % {"d": result.done, "f": result.forbidden},
    )


class ServiceOnlyAdmin(ReadOnlyAdmin):
    """Rows changed only through services: the actions call them.

    No add, change or delete view, and no ``delete_selected``: Django's delete would
    bypass the services' permission checks.
    """

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(CoreCandidate)
class CoreCandidateAdmin(ServiceOnlyAdmin):
    list_display = [
        "fact",
        "owner",
        "agent",
        "confidence",
        "seen_count",
        "source_run",
        "created_at",
    ]
    list_filter = ["agent__tenant", "agent"]
    list_select_related = ["owner", "agent", "source_run"]
    search_fields = ["fact", "owner__username"]
    actions = [confirm_candidates, reject_candidates]


@admin.register(CoreFact)
class CoreFactAdmin(ServiceOnlyAdmin):
    list_display = ["text", "owner", "agent", "confirmed_by", "confirmed_at", "last_used_at"]
    list_filter = ["agent__tenant", "agent"]
    list_select_related = ["owner", "agent", "confirmed_by"]
    search_fields = ["text", "owner__username"]
    actions = [delete_facts]


@admin.register(RedlineAudit)
class RedlineAuditAdmin(ReadOnlyAdmin):
    list_display = ["day", "category", "source", "count", "agent", "owner"]
    list_filter = ["category", "source", "agent__tenant"]
    list_select_related = ["agent", "owner"]
    date_hierarchy = "day"


@admin.register(RecallEntry)
class RecallEntryAdmin(ReadOnlyAdmin):
    list_display = ["run", "owner", "agent", "created_at", "text"]
    list_filter = ["agent__tenant", "agent"]
    list_select_related = ["run", "owner", "agent"]
    search_fields = ["text", "owner__username"]
    exclude = ["terms"]
