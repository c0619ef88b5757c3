"""Operators' view of the memory: threads, memory ops and cost, candidates, facts, audit.

Costs come from ``memory.selectors`` (:class:`~memory.selectors.CostTotals`), the same
totals the thread API shows; every cost changelist also has a chart page of the last 30
days (``<id>/cost/`` for one row, ``cost/`` for all: :func:`~memory.selectors.cost_by_day`
drawn as server-rendered SVG by :mod:`memory.costchart`, with a table alternative).
The tenant and agent changelists of ``agents.admin`` are registered again here with
their cost columns, because a cost total includes memory operations (dependency
direction: memory → agents, never back).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal, cast

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from agents.admin import AgentAdmin, TenantAdmin
from agents.models import Agent, Tenant
from memory.costchart import cost_chart
from memory.models import (
    CoreCandidate,
    CoreFact,
    MemoryOp,
    RecallEntry,
    RedlineAudit,
    RunContext,
    Thread,
)
from memory.selectors import (
    CostKey,
    CostTotals,
    cost_by_day,
    cost_ordering,
    cost_totals,
    cost_totals_by,
)
from memory.services import facts


class CostAdmin(admin.ModelAdmin):
    """A changelist with cost columns (see :func:`cost_column`).

    ``cost_key`` is the column of Run and MemoryOp that points at the row.
    """

    cost_key: CostKey
    CHART_DAYS = 30

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return CostChangeList

    def get_urls(self) -> list[URLPattern]:
        # Before the default routes: "<id>/" would take "cost/" as an object id.
        chart = self.admin_site.admin_view(self.cost_chart_view)
        name = f"{self.opts.app_label}_{self.opts.model_name}"
        return [
            path("cost/", chart, name=f"{name}_cost_all"),
            path("<path:object_id>/cost/", chart, name=f"{name}_cost"),
            *super().get_urls(),
        ]

    def cost_chart_view(self, request: HttpRequest, object_id: str | None = None) -> HttpResponse:
        """Run cost and memory cost per day, the last CHART_DAYS days: one row or all."""
        subject = None
        if object_id is not None:
            subject = self.get_object(request, unquote(object_id))
            if subject is None:
                raise Http404
        if not self.has_view_permission(request, subject):
            raise PermissionDenied
        days = cost_by_day(
            key=None if subject is None else self.cost_key,
            ids=() if subject is None else [subject.pk],
            days=self.CHART_DAYS,
        )
        name = (
            str(subject)
            if subject is not None
            else gettext("全部%(items)s") % {"items": self.opts.verbose_name_plural}
        )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "subject": subject,
            "subject_name": name,
            "title": gettext("%(name)s：近 %(days)d 天成本") % {"name": name, "days": len(days)},
            "days": len(days),
            "chart": cost_chart(days),
            "all_url": reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_cost_all"),
        }
        return TemplateResponse(request, "admin/memory/cost_chart.html", context)

    @admin.display(description=_("成本图表"))
    def cost_chart_link(self, obj: Any) -> str:
        url = reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_cost", args=[obj.pk])
        return format_html('<a href="{}">{}</a>', url, gettext("每日成本"))


class CostChangeList(ChangeList):
    """Gives every row of the page its :class:`CostTotals` (two grouped queries a page)."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        rows = list(self.result_list)  # evaluates the page once; the template reuses it
        key = cast(CostAdmin, self.model_admin).cost_key
        totals = cost_totals_by(key=key, ids=[row.pk for row in rows])
        for row in rows:
            row.cost_totals = totals[row.pk]


def cost_column(*, key: CostKey, part: Literal["run", "memory", "total"]) -> Any:
    """A changelist column of a :class:`CostAdmin`: run cost, memory cost or their sum."""
    descriptions = {"run": _("运行成本"), "memory": _("记忆成本"), "total": _("累计成本")}

    def column(modeladmin: Any, obj: Any) -> Decimal:
        totals: CostTotals = obj.cost_totals
        if part == "run":
            return totals.run_cost
        return totals.memory_cost if part == "memory" else totals.total_cost

    ordering = None if part == "total" else cost_ordering(key=key, part=part)
    return admin.display(description=descriptions[part], ordering=ordering)(column)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Thread)
class ThreadAdmin(CostAdmin):
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

    cost_key = "thread_id"
    run_cost_total = cost_column(key="thread_id", part="run")
    memory_cost_total = cost_column(key="thread_id", part="memory")
    cost_total = cost_column(key="thread_id", part="total")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Thread]:
        return super().get_queryset(request).annotate(_runs=Count("runs"))

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
            totals = cost_totals(memory_ops=response.context_data["cl"].queryset)
            self.message_user(
                request,
                _("当前筛选合计：%(n)d 次，输入 %(i)s token，输出 %(o)s token，成本 %(c)s")
                % {
                    "n": totals.memory_op_count,
                    "i": totals.memory_input_tokens,
                    "o": totals.memory_output_tokens,
                    "c": totals.memory_cost,
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


# -- tenants and agents, with their cost ----------------------------------------------------
admin.site.unregister(Tenant)
admin.site.unregister(Agent)


@admin.register(Tenant)
class TenantCostAdmin(TenantAdmin, CostAdmin):
    list_display = [
        "name",
        "run_cost_total",
        "memory_cost_total",
        "cost_total",
        "cost_chart_link",
        "created_at",
    ]
    cost_key = "tenant_id"
    run_cost_total = cost_column(key="tenant_id", part="run")
    memory_cost_total = cost_column(key="tenant_id", part="memory")
    cost_total = cost_column(key="tenant_id", part="total")


@admin.register(Agent)
class AgentCostAdmin(AgentAdmin, CostAdmin):
    list_display = [
        *AgentAdmin.list_display,
        "run_cost_total",
        "memory_cost_total",
        "cost_total",
        "cost_chart_link",
    ]
    cost_key = "agent_id"
    run_cost_total = cost_column(key="agent_id", part="run")
    memory_cost_total = cost_column(key="agent_id", part="memory")
    cost_total = cost_column(key="agent_id", part="total")
