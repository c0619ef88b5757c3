"""Operators' view of the memory: threads, memory ops and cost, candidates, facts, audit.

Costs come from ``memory.selectors`` (:class:`~memory.selectors.CostTotals`), the same
totals the thread API shows. The tenant and agent changelists of ``agents.admin`` are
registered again here with their cost columns, because a cost total includes memory
operations (dependency direction: memory → agents, never back).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal, cast

from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.translation import gettext_lazy as _

from agents.admin import AgentAdmin, TenantAdmin
from agents.models import Agent, Tenant
from memory.models import (
    CoreCandidate,
    CoreFact,
    KBChunk,
    KBDocument,
    MemoryOp,
    RecallEntry,
    RedlineAudit,
    RunContext,
    Thread,
)
from memory.selectors import CostKey, CostTotals, cost_ordering, cost_totals, cost_totals_by
from memory.services import facts
from memory.services.kb_documents import kb_document_delete


class CostAdmin(admin.ModelAdmin):
    """A changelist with cost columns (see :func:`cost_column`).

    ``cost_key`` is the column of Run and MemoryOp that points at the row.
    """

    cost_key: CostKey

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return CostChangeList


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


# -- the knowledge base ----------------------------------------------------------------------
@admin.action(description=_("删除所选文档（连同片段）"))
def delete_kb_documents(
    modeladmin: Any, request: HttpRequest, queryset: QuerySet[KBDocument]
) -> None:
    documents = list(queryset)
    for document in documents:
        kb_document_delete(document=document)
    modeladmin.message_user(request, _("已删除 %(n)d 份文档。") % {"n": len(documents)})


class KBChunkInline(admin.TabularInline):
    model = KBChunk
    fields = ["position", "heading_path", "tokens", "text"]
    readonly_fields = ["position", "heading_path", "tokens", "text"]
    extra = 0
    show_change_link = True
    can_delete = False
    max_num = 0

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(KBDocument)
class KBDocumentAdmin(ServiceOnlyAdmin):
    """Documents with their status; a failed one shows why. Deleting goes through the
    service (the index versions must move with the rows)."""

    list_display = [
        "title",
        "agent",
        "owner",
        "visibility",
        "status",
        "error",
        "kind",
        "size_bytes",
        "chunk_count",
        "source_run",
        "created_at",
    ]
    list_filter = ["status", "visibility", "kind", "agent__tenant", "agent"]
    list_select_related = ["agent", "owner", "source_run"]
    search_fields = ["title", "filename", "owner__username", "error"]
    date_hierarchy = "created_at"
    actions = [delete_kb_documents]
    inlines = [KBChunkInline]
    exclude = ["enqueued_at"]


@admin.register(KBChunk)
class KBChunkAdmin(ReadOnlyAdmin):
    list_display = ["document", "position", "heading_path", "tokens", "text"]
    list_filter = ["document__status", "agent__tenant", "agent"]
    list_select_related = ["document"]
    search_fields = ["text", "heading_path", "document__title"]
    exclude = ["terms"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# -- tenants and agents, with their cost ----------------------------------------------------
admin.site.unregister(Tenant)
admin.site.unregister(Agent)


@admin.register(Tenant)
class TenantCostAdmin(TenantAdmin, CostAdmin):
    list_display = ["name", "run_cost_total", "memory_cost_total", "cost_total", "created_at"]
    cost_key = "tenant_id"
    run_cost_total = cost_column(key="tenant_id", part="run")
    memory_cost_total = cost_column(key="tenant_id", part="memory")
    cost_total = cost_column(key="tenant_id", part="total")


@admin.register(Agent)
class AgentCostAdmin(AgentAdmin, CostAdmin):
    list_display = [*AgentAdmin.list_display, "run_cost_total", "memory_cost_total", "cost_total"]
    cost_key = "agent_id"
    run_cost_total = cost_column(key="agent_id", part="run")
    memory_cost_total = cost_column(key="agent_id", part="memory")
    cost_total = cost_column(key="agent_id", part="total")
