from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from agents.api.fields import StrictCharField
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
