from __future__ import annotations

import copy
from typing import Any

from rest_framework import serializers

from agents.api.fields import StrictCharField
from agents.api.inputs import StrictInput
from agents.models import Agent, Provider


class TokenInput(StrictInput):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=256, trim_whitespace=False)


class TokenOutput(serializers.Serializer):
    token = serializers.CharField()


class OutputModelSerializer(serializers.ModelSerializer):
    """A ModelSerializer whose fields are built from the model once per class.

    DRF rebuilds a ModelSerializer's fields from the model's on every instance (about
    2 ms for a run's sixteen, more than serializing it); they depend only on the class
    (``Meta`` and the declared fields), so each instance gets a copy of the first build.
    For output serializers: nothing here depends on the instance or the context.
    """

    def get_fields(self) -> dict[str, Any]:
        cls = type(self)
        built: dict[str, Any] | None = cls.__dict__.get("_fields_built")
        if built is None:
            built = super().get_fields()
            cls._fields_built = built  # type: ignore[attr-defined]
        return copy.deepcopy(built)

    @classmethod
    def represent(cls, instance: Any) -> dict[str, Any]:
        """What ``cls(instance).data`` is, without a new serializer per instance: one
        prototype per class, its fields bound once, renders them all (the deep copy of
        the fields per instance cost about 0.7 ms a run response). Safe because an output
        serializer's representation depends on the instance alone (no context, nothing
        stored on the serializer)."""
        prototype: OutputModelSerializer | None = cls.__dict__.get("_prototype")
        if prototype is None:
            prototype = cls()
            _ = prototype.fields  # bound now, before it is shared
            cls._prototype = prototype  # type: ignore[attr-defined]
        return dict(prototype.to_representation(instance))


class ProviderOutput(OutputModelSerializer):
    label = serializers.CharField(read_only=True)
    is_offline = serializers.BooleanField(read_only=True)

    class Meta:
        model = Provider
        fields = ["name", "kind", "model", "locality", "label", "is_offline"]


class AgentOutput(OutputModelSerializer):
    tenant_id = serializers.IntegerField()
    tenant_name = serializers.CharField(source="tenant.name")
    provider = ProviderOutput()
    memory_provider = ProviderOutput(source="effective_memory_provider")
    memory_notice = serializers.BooleanField(
        help_text="True when memory jobs use a cloud provider other than the agent's own."
    )

    class Meta:
        model = Agent
        fields = [
            "id",
            "name",
            "tenant_id",
            "tenant_name",
            "provider",
            "memory_provider",
            "memory_notice",
            "archive_artifacts",
        ]


class AgentPatchInput(StrictInput):
    archive_artifacts = serializers.BooleanField(
        required=False,
        help_text="Archive each completed run's output as the teacher's private "
        "knowledge-base document (tenant administrators only).",
    )
