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

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import ChangeList
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from agents.admin import AgentAdmin, RunAdmin, TenantAdmin, truncated
from agents.models import Agent, Membership, Run, Tenant
from agents.selectors import is_tenant_admin
from memory.costchart import cost_chart
from memory.models import (
    CoreCandidate,
    CoreFact,
    KBChunk,
    KBDocument,
    MemoryAuditEvent,
    MemoryJob,
    MemoryOp,
    RecallEntry,
    RedlineAudit,
    RunContext,
    Thread,
)
from memory.selectors import (
    CostKey,
    CostTotals,
    audit_events_administered,
    cost_by_day,
    cost_ordering,
    cost_totals,
    cost_totals_by,
)
from memory.services import facts, forget
from memory.services.kb_documents import kb_document_delete
from memory.services.legacy_import import ImportRejected, legacy_import, report_lines


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
        "title_short",
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
    title_short = truncated("title", description=_("标题"))
    run_cost_total = cost_column(key="thread_id", part="run")
    memory_cost_total = cost_column(key="thread_id", part="memory")
    cost_total = cost_column(key="thread_id", part="total")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Thread]:
        return (
            super()
            .get_queryset(request)
            .filter(deleted_at__isnull=True)
            .annotate(_runs=Count("runs"))
        )

    # Deleting goes through the governance cascade (texts erased, costs kept), never
    # Django's own delete, which would leave the runs' texts behind.
    def delete_model(self, request: HttpRequest, obj: Thread) -> None:
        forget.thread_delete(thread=obj, actor_id=_actor_id(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Thread]) -> None:
        for thread in queryset:
            forget.thread_delete(thread=thread, actor_id=_actor_id(request))

    @admin.display(description=_("运行数"), ordering="_runs")
    def runs_total(self, obj: Any) -> int:
        return int(obj._runs)


@admin.register(MemoryOp)
class MemoryOpAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "kind",
        "agent",
        "thread_title",
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
    thread_title = truncated("thread", description=_("会话"), ordering="thread__title")

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
        "fact_short",
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
    fact_short = truncated("fact", description=_("候选事实"))


@admin.register(CoreFact)
class CoreFactAdmin(ServiceOnlyAdmin):
    list_display = ["text_short", "owner", "agent", "confirmed_by", "confirmed_at", "last_used_at"]
    list_filter = ["agent__tenant", "agent"]
    list_select_related = ["owner", "agent", "confirmed_by"]
    search_fields = ["text", "owner__username"]
    actions = [delete_facts]
    text_short = truncated("text", description=_("事实"))


@admin.register(RedlineAudit)
class RedlineAuditAdmin(ReadOnlyAdmin):
    list_display = ["day", "category", "source", "count", "agent", "owner"]
    list_filter = ["category", "source", "agent__tenant"]
    list_select_related = ["agent", "owner"]
    date_hierarchy = "day"


@admin.register(RecallEntry)
class RecallEntryAdmin(ReadOnlyAdmin):
    list_display = ["run", "owner", "agent", "created_at", "text_short"]
    list_filter = ["agent__tenant", "agent"]
    list_select_related = ["run", "owner", "agent"]
    search_fields = ["text", "owner__username"]
    exclude = ["terms"]
    text_short = truncated("text", description=_("摘录"), wide=True)


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


# -- governance: the audit trail, jobs, tenant-wide forget, legacy import -----------------
def _administers_any(request: HttpRequest) -> bool:
    return bool(
        request.user.is_active
        and Membership.objects.filter(user_id=request.user.pk, role=Membership.Role.ADMIN).exists()
    )


@admin.register(MemoryAuditEvent)
class MemoryAuditEventAdmin(ServiceOnlyAdmin):
    """The append-only trail. A tenant administrator sees their tenants' events only."""

    list_display = ["created_at", "action", "object_type", "object_id", "actor", "owner", "agent"]
    list_filter = ["action", "object_type", "tenant"]
    list_select_related = ["actor", "owner", "agent"]
    search_fields = ["object_id", "owner__username", "actor__username"]
    date_hierarchy = "created_at"
    readonly_fields = [field.name for field in MemoryAuditEvent._meta.fields]

    def get_queryset(self, request: HttpRequest) -> QuerySet[MemoryAuditEvent]:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset & audit_events_administered(actor=request.user)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return super().has_module_permission(request) or _administers_any(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_view_permission(request, obj) or _administers_any(request)


@admin.register(MemoryJob)
class MemoryJobAdmin(ServiceOnlyAdmin):
    list_display = ["id", "kind", "status", "tenant", "agent", "owner", "actor", "created_at"]
    list_filter = ["kind", "status", "tenant"]
    list_select_related = ["tenant", "agent", "owner", "actor"]
    exclude = ["params"]
    readonly_fields = [f.name for f in MemoryJob._meta.fields if f.name != "params"]


class TenantForgetForm(forms.Form):
    text = forms.CharField(
        label=_("要遗忘的内容"),
        max_length=800,
        help_text=_("例如一位学生的姓名。本校所有教师的记忆中提到它的内容都会被删除或遮盖。"),
    )


class LegacyImportForm(forms.Form):
    owner = forms.ModelChoiceField(
        label=_("教师"), queryset=get_user_model().objects.none(), to_field_name="username"
    )
    core = forms.FileField(label=_("core_memory.json"), required=False)
    recall = forms.FileField(label=_("recall_log.jsonl"), required=False)
    dry_run = forms.BooleanField(label=_("仅试运行（不写入）"), required=False)

    # Read whole into memory: an old platform's memory files are small; more is a mistake.
    MAX_BYTES = 20 * 1024 * 1024

    def __init__(self, *args: Any, tenant: Tenant, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = cast(forms.ModelChoiceField, self.fields["owner"])
        field.queryset = get_user_model().objects.filter(memberships__tenant=tenant)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("core") and not data.get("recall"):
            raise forms.ValidationError(_("请至少上传一个文件。"))
        for name in ("core", "recall"):
            upload = data.get(name)
            if upload is not None and upload.size > self.MAX_BYTES:
                self.add_error(name, _("文件过大（最多 20 MB）。"))
        return data


def _require_tenant_admin(request: HttpRequest, tenant_id: int) -> None:
    if not is_tenant_admin(actor=request.user, tenant_id=tenant_id):
        raise Http404


# -- tenants and agents, with their cost; runs deleted through the cascade ----------------
admin.site.unregister(Tenant)
admin.site.unregister(Agent)
admin.site.unregister(Run)


@admin.register(Run)
class GovernedRunAdmin(RunAdmin):
    """Runs; a deleted run is a cost row only (its texts erased by the worker)."""

    list_filter = [*RunAdmin.list_filter, ("deleted_at", admin.EmptyFieldListFilter)]

    def delete_model(self, request: HttpRequest, obj: Run) -> None:
        forget.run_delete(run=obj, actor_id=_actor_id(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Run]) -> None:
        for run in queryset.filter(deleted_at__isnull=True):
            forget.run_delete(run=run, actor_id=_actor_id(request))


@admin.register(Tenant)
class TenantCostAdmin(TenantAdmin, CostAdmin):
    list_display = [
        "name",
        "run_cost_total",
        "memory_cost_total",
        "cost_total",
        "cost_chart_link",
        "created_at",
        "forget_link",
    ]
    cost_key = "tenant_id"
    run_cost_total = cost_column(key="tenant_id", part="run")
    memory_cost_total = cost_column(key="tenant_id", part="memory")
    cost_total = cost_column(key="tenant_id", part="total")

    @admin.display(description=_("记忆治理"))
    def forget_link(self, obj: Tenant) -> str:
        url = reverse("admin:memory_tenant_forget", args=[obj.pk])
        return format_html('<a href="{}">{}</a>', url, _("遗忘文本…"))

    def get_urls(self) -> list[URLPattern]:
        forget_view = self.admin_site.admin_view(self.forget_view)
        return [
            path("<int:tenant_id>/forget/", forget_view, name="memory_tenant_forget"),
            *super().get_urls(),
        ]

    def forget_view(self, request: HttpRequest, tenant_id: int) -> HttpResponse:
        """Forget a text in every teacher's memory of the tenant (its administrators)."""
        tenant = Tenant.objects.filter(pk=tenant_id).first()
        if tenant is None:
            raise Http404
        _require_tenant_admin(request, tenant.pk)
        form = TenantForgetForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                job = forget.tenant_forget(
                    tenant_id=tenant.pk, text=form.cleaned_data["text"], actor=request.user
                )
            except forget.ForgetRejected as exc:
                form.add_error("text", str(exc))
            else:
                self.message_user(
                    request,
                    _("已提交遗忘任务 #%(id)d，后台处理中。") % {"id": job.pk},
                    level=messages.SUCCESS,
                )
                return HttpResponseRedirect(reverse("admin:memory_memoryjob_change", args=[job.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": _("遗忘：%(tenant)s") % {"tenant": tenant.name},
            "tenant": tenant,
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/memory/tenant_forget.html", context)


@admin.register(Agent)
class AgentCostAdmin(AgentAdmin, CostAdmin):
    list_display = [
        *AgentAdmin.list_display,
        "run_cost_total",
        "memory_cost_total",
        "cost_total",
        "import_link",
        "cost_chart_link",
    ]
    cost_key = "agent_id"
    run_cost_total = cost_column(key="agent_id", part="run")
    memory_cost_total = cost_column(key="agent_id", part="memory")
    cost_total = cost_column(key="agent_id", part="total")

    @admin.display(description=_("记忆治理"))
    def import_link(self, obj: Agent) -> str:
        url = reverse("admin:memory_agent_import", args=[obj.pk])
        return format_html('<a href="{}">{}</a>', url, _("导入旧版记忆…"))

    def get_urls(self) -> list[URLPattern]:
        import_view = self.admin_site.admin_view(self.import_view)
        return [
            path("<int:agent_id>/import-legacy/", import_view, name="memory_agent_import"),
            *super().get_urls(),
        ]

    def import_view(self, request: HttpRequest, agent_id: int) -> HttpResponse:
        """Upload a teacher's core_memory.json and recall_log.jsonl (tenant administrators)."""
        agent = Agent.objects.select_related("tenant").filter(pk=agent_id).first()
        if agent is None:
            raise Http404
        _require_tenant_admin(request, agent.tenant_id)
        form = LegacyImportForm(request.POST or None, request.FILES or None, tenant=agent.tenant)
        report = None
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                report = legacy_import(
                    agent=agent,
                    owner=data["owner"],
                    core=data["core"].read() if data.get("core") else None,
                    recall=data["recall"].read() if data.get("recall") else None,
                    dry_run=data["dry_run"],
                    actor_id=int(request.user.pk or 0),
                    core_name=data["core"].name if data.get("core") else "",
                    recall_name=data["recall"].name if data.get("recall") else "",
                )
            except ImportRejected as exc:
                form.add_error("owner", str(exc))
        context = {
            **self.admin_site.each_context(request),
            "title": _("导入旧版记忆：%(agent)s") % {"agent": agent.name},
            "agent": agent,
            "form": form,
            "report": list(report_lines(report)) if report else None,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/memory/agent_import.html", context)
