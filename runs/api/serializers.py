"""Run endpoints' input and output shapes."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from agents.api.fields import JSONObjectField, StrictCharField
from agents.api.inputs import StrictInput
from agents.api.serializers import OutputModelSerializer
from agents.models import Run
from runs.services import error_message

# Request options are stored with the run; they are small by nature.
CONTEXT_MAX_CHARS = 10_000
CONTEXT_MAX_DEPTH = 8


class RunInput(StrictInput):
    input = StrictCharField(trim_whitespace=False)
    context = JSONObjectField(
        required=False,
        allow_null=True,
        default=dict,
        max_depth=CONTEXT_MAX_DEPTH,
        max_chars=CONTEXT_MAX_CHARS,
        help_text="Request options: mode, run_id (continue from that run).",
    )
    thread_id = StrictCharField(required=False, allow_null=True, max_length=32)

    def validate_input(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError(_("输入不能为空。"))
        limit = settings.RUN_INPUT_MAX_CHARS
        if len(value) > limit:
            raise serializers.ValidationError(
                _("输入过长：最多 %(limit)d 个字符，当前 %(size)d 个。")
                % {"limit": limit, "size": len(value)}
            )
        return value


class UsageOutput(serializers.Serializer):
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost = serializers.FloatField()


class ToolCallOutput(serializers.Serializer):
    """One function-tool call of the run (``Run.tool_calls``; also the SSE ``tool`` event)."""

    id = serializers.CharField(help_text=_("模型给这次调用的编号"))
    name = serializers.CharField(help_text=_("工具名，如 kb_search"))
    arguments = serializers.DictField(
        allow_null=True, help_text=_("模型给出的参数；不是 JSON 对象时为 null")
    )
    arguments_raw = serializers.CharField(
        required=False, help_text=_("参数不是 JSON 对象时，模型原文（截断）")
    )
    status = serializers.ChoiceField(choices=["ok", "error"])
    error = serializers.CharField(
        allow_blank=True,
        help_text=_(
            "失败原因代码：unknown_tool、bad_arguments、rejected、tool_failed、no_room；成功时为空"
        ),
    )
    chunk_ids = serializers.ListField(
        child=serializers.IntegerField(), help_text=_("结果展示的知识库片段 id")
    )
    tokens = serializers.IntegerField(help_text=_("结果的 token 数（计入下一次模型调用）"))
    duration_ms = serializers.FloatField()


class RunOutput(OutputModelSerializer):
    agent_id = serializers.IntegerField()
    thread_id = serializers.CharField(allow_null=True)
    error_message = serializers.SerializerMethodField()
    usage = serializers.SerializerMethodField()
    tool_calls = ToolCallOutput(many=True, read_only=True)

    class Meta:
        model = Run
        fields = [
            "id",
            "agent_id",
            "thread_id",
            "status",
            "input",
            "output",
            "error_code",
            "error_message",
            "usage",
            "tool_calls",
            "context",
            "provider_name",
            "memory_state",
            "created_at",
            "started_at",
            "finished_at",
        ]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_error_message(self, run: Run) -> str | None:
        return error_message(run.error_code) if run.error_code else None

    @extend_schema_field(UsageOutput)
    def get_usage(self, run: Run) -> dict[str, Any]:
        return {
            "input_tokens": run.input_tokens,
            "output_tokens": run.output_tokens,
            "cost": float(run.cost),
        }


class ThreadRunOutput(OutputModelSerializer):
    error_message = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = [
            "id",
            "thread_id",
            "status",
            "input",
            "output",
            "error_code",
            "error_message",
            "context",
            "created_at",
            "finished_at",
        ]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_error_message(self, run: Run) -> str | None:
        return error_message(run.error_code) if run.error_code else None


class RunContextOutput(serializers.Serializer):
    run_id = serializers.IntegerField()
    thread_id = serializers.CharField(allow_null=True)
    messages = serializers.ListField(child=serializers.DictField())
    injected_text = serializers.CharField(allow_blank=True)
    manifest = serializers.DictField()
