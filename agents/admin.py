"""Operators' view of tenants, providers, agents and runs.

``memory.admin`` registers the tenant and agent changelists again with cost columns
(a cost total includes memory operations, which this app does not know about).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from agents.models import Agent, Membership, Provider, Run, Tenant

if TYPE_CHECKING:
    from django.utils.functional import _StrPromise


def truncated(
    field: str,
    *,
    description: str | _StrPromise,
    ordering: str | None = None,
    wide: bool = False,
) -> Callable[[Any, Any], SafeString | str]:
    """A changelist column for a long text: one line, cut with "…" by the admin's CSS
    (``static/web/admin.css``), the full text on hover (``title``) and for screen readers.

    ``field`` may follow relations (``thread__title``); the column sorts by it unless
    ``ordering`` says otherwise.
    """

    def column(modeladmin: Any, obj: Any) -> SafeString | str:
        value = obj
        for part in field.split("__"):
            value = getattr(value, part, None) if value is not None else None
        if value is None or value == "":
            return str(modeladmin.get_empty_value_display())
        text = str(value)
        css = "cell-truncate wide" if wide else "cell-truncate"
        return format_html('<span class="{}" title="{}">{}</span>', css, text, text)

    return admin.display(description=description, ordering=ordering or field)(column)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]
    inlines = [MembershipInline]


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "kind",
        "model",
        "locality",
        "is_memory_fallback",
        "supports_tools",
        "price_input_per_mtok",
        "price_output_per_mtok",
        "timeout_seconds",
    ]
    list_filter = ["kind", "locality"]
    search_fields = ["name", "model"]


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "tenant",
        "provider",
        "memory_provider",
        "archive_artifacts",
    ]
    list_filter = ["tenant", "provider"]
    list_select_related = ["tenant", "provider", "memory_provider"]
    search_fields = ["name"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "agent",
        "owner",
        "thread_title",
        "status",
        "memory_state",
        "input_tokens",
        "output_tokens",
        "cost",
        "created_at",
    ]
    list_filter = ["status", "memory_state", "agent__tenant"]
    list_select_related = ["agent", "owner", "thread"]
    search_fields = ["id", "input", "thread__id"]
    date_hierarchy = "created_at"
    readonly_fields = [field.name for field in Run._meta.fields]
    thread_title = truncated("thread", description=_("会话"), ordering="thread__title")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


admin.site.site_header = _("智能体记忆 · 运维后台")
admin.site.site_title = _("智能体记忆")
