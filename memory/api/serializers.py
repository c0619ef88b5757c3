from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from agents.api.fields import StrictCharField
from agents.models import Run
from agents.services import error_message
from memory.models import Thread


class ThreadOutput(serializers.ModelSerializer):
    agent_id = serializers.IntegerField()
    run_count = serializers.IntegerField()

    class Meta:
        model = Thread
        fields = ["id", "agent_id", "title", "status", "run_count", "created_at", "updated_at"]


class ThreadDetailOutput(ThreadOutput):
    memory_notice = serializers.BooleanField(source="agent.memory_notice")
    totals = serializers.SerializerMethodField()

    class Meta(ThreadOutput.Meta):
        fields = [
            *ThreadOutput.Meta.fields,
            "rolling_summary",
            "summary_upto_at",
            "summary_upto_run_id",
            "memory_notice",
            "totals",
        ]

    @extend_schema_field(serializers.DictField())
    def get_totals(self, thread: Thread) -> dict[str, Any]:
        totals = self.context.get("totals")
        return totals if totals is not None else {}


class ThreadPatchInput(serializers.Serializer):
    title = StrictCharField(max_length=200, allow_blank=False)

    def validate_title(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError(_("标题不能为空。"))
        return value


class ThreadStatusQuery(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=Thread.Status.choices, required=False, default=Thread.Status.ACTIVE
    )


class ThreadRunOutput(serializers.ModelSerializer):
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
