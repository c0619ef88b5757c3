from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from agents.api.fields import StrictCharField
from agents.api.inputs import StrictInput
from memory.models import MAX_FACT_CHARS, CoreCandidate, CoreFact


class FactOutput(serializers.ModelSerializer):
    agent_id = serializers.IntegerField()
    source_run_id = serializers.IntegerField(allow_null=True)
    confirmed_by = serializers.CharField(source="confirmed_by.username", default=None)

    class Meta:
        model = CoreFact
        fields = [
            "id",
            "agent_id",
            "text",
            "source_run_id",
            "confirmed_by",
            "confirmed_at",
            "last_used_at",
        ]


class FactListOutput(serializers.Serializer):
    capacity = serializers.IntegerField()
    count = serializers.IntegerField()
    would_evict = FactOutput(allow_null=True)
    results = FactOutput(many=True)


class CandidateOutput(serializers.ModelSerializer):
    agent_id = serializers.IntegerField()
    source_run_id = serializers.IntegerField()
    thread_id = serializers.CharField(source="source_run.thread_id", allow_null=True)

    class Meta:
        model = CoreCandidate
        fields = [
            "id",
            "agent_id",
            "fact",
            "confidence",
            "evidence",
            "seen_count",
            "source_run_id",
            "thread_id",
            "created_at",
        ]


class ConfirmInput(StrictInput):
    text = StrictCharField(required=False, allow_blank=False, max_length=MAX_FACT_CHARS)


class ConfirmOutput(serializers.Serializer):
    fact = FactOutput()
    evicted_fact_id = serializers.IntegerField(allow_null=True)
    merged = serializers.BooleanField(
        help_text=_("True when an equal fact already existed and the candidate was folded into it.")
    )


class FactPatchInput(StrictInput):
    text = StrictCharField(allow_blank=False, max_length=MAX_FACT_CHARS)
