from __future__ import annotations

from datetime import date
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from agents.api.fields import StrictCharField
from agents.api.inputs import StrictInput
from memory.models import MAX_FACT_CHARS, CoreCandidate, CoreFact

TERM = "term"


@extend_schema_field(
    {
        "oneOf": [{"type": "string", "format": "date"}, {"type": "string", "enum": [TERM]}],
        "nullable": True,
        "description": "The last day the fact holds: a date (a past one expires it), "
        '"term" for the end of the current term (本学期), or null for long-term (长期).',
    }
)
class ValidUntilField(serializers.DateField):
    """A date, ``"term"`` (the current term's end, from the term calendar) or null."""

    def to_internal_value(self, value: Any) -> date:
        if value == TERM:
            return settings.MEMORY_TERM_CALENDAR.current_term_end(timezone.localdate())
        if not isinstance(value, str):
            self.fail("invalid", format="YYYY-MM-DD")
        return super().to_internal_value(value)


class FactOutput(serializers.ModelSerializer):
    agent_id = serializers.IntegerField()
    source_run_id = serializers.IntegerField(allow_null=True)
    confirmed_by = serializers.CharField(source="confirmed_by.username", default=None)
    expired = serializers.SerializerMethodField(
        help_text=_("True once valid_until has passed: never injected, not counted in the cap.")
    )

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_expired(self, fact: CoreFact) -> bool:
        return fact.valid_until is not None and fact.valid_until < timezone.localdate()

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
            "valid_until",
            "expired",
        ]


class FactListOutput(serializers.Serializer):
    capacity = serializers.IntegerField()
    count = serializers.IntegerField(help_text=_("Live facts: the ones counted in the cap."))
    expired_count = serializers.IntegerField()
    term_end = serializers.DateField(help_text=_('What "term" (本学期) means today.'))
    would_evict = FactOutput(allow_null=True)
    results = FactOutput(many=True, help_text=_("Every fact, live and expired, newest first."))


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
            "valid_until",
        ]


class ConfirmInput(StrictInput):
    text = StrictCharField(required=False, allow_blank=False, max_length=MAX_FACT_CHARS)
    valid_until = ValidUntilField(
        required=False, allow_null=True, help_text=_("Default: the candidate's own proposal.")
    )


class ConfirmOutput(serializers.Serializer):
    fact = FactOutput()
    evicted_fact_id = serializers.IntegerField(allow_null=True)
    merged = serializers.BooleanField(
        help_text=_("True when an equal fact already existed and the candidate was folded into it.")
    )


class FactPatchInput(StrictInput):
    text = StrictCharField(required=False, allow_blank=False, max_length=MAX_FACT_CHARS)
    valid_until = ValidUntilField(required=False, allow_null=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError(
                {"non_field_errors": [_("请提供 text 或 valid_until。")]}
            )
        return attrs
