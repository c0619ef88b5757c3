from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from agents.api.fields import StrictCharField
from agents.api.inputs import QueryInput, StrictInput
from memory.models import Thread


class ThreadOutput(serializers.ModelSerializer):
    agent_id = serializers.IntegerField()
    run_count = serializers.IntegerField()

    class Meta:
        model = Thread
        fields = ["id", "agent_id", "title", "status", "run_count", "created_at", "updated_at"]


class CostTotalsOutput(serializers.Serializer):
    """A thread's cost: runs and memory operations apart, then their sum."""

    run_count = serializers.IntegerField()
    run_cost = serializers.FloatField()
    run_input_tokens = serializers.IntegerField()
    run_output_tokens = serializers.IntegerField()
    memory_op_count = serializers.IntegerField()
    memory_cost = serializers.FloatField()
    memory_input_tokens = serializers.IntegerField()
    memory_output_tokens = serializers.IntegerField()
    total_cost = serializers.FloatField()


class ThreadDetailOutput(ThreadOutput):
    """Pass the thread's :class:`~memory.selectors.CostTotals` as ``context["totals"]``."""

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

    @extend_schema_field(CostTotalsOutput)
    def get_totals(self, thread: Thread) -> dict[str, Any]:
        return dict(CostTotalsOutput(self.context["totals"]).data)


class ThreadPatchInput(StrictInput):
    title = StrictCharField(max_length=200, allow_blank=False)

    def validate_title(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError(_("标题不能为空。"))
        return value


class ThreadStatusQuery(QueryInput):
    status = serializers.ChoiceField(
        choices=Thread.Status.choices, required=False, default=Thread.Status.ACTIVE
    )
