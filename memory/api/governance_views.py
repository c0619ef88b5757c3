"""Governance API: forget a text, a job's status, the audit trail, the export.

Each view validates, calls one service or selector, serializes. Deleting a thread is
``DELETE /api/threads/{id}`` (``memory.api.views``), a run ``DELETE /api/runs/{id}``
(``runs.api.views``); both answer 204 with a ``Link: <job>; rel="monitor"`` header.
"""

from __future__ import annotations

from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.api.fields import StrictCharField
from agents.api.inputs import StrictInput
from agents.api.pagination import Pages
from agents.selectors import agent_get
from memory.models import MemoryAuditEvent, MemoryJob
from memory.scope import Scope
from memory.selectors import audit_events_for, memory_job_get
from memory.services import forget
from memory.services.export import EXPORT_FORMAT, EXPORT_VERSION, memory_export
from memory.textmatch import MAX_NEEDLE_CHARS

ERROR = inline_serializer(
    "GovernanceError", fields={"detail": serializers.CharField(), "code": serializers.CharField()}
)
NOT_FOUND = OpenApiResponse(ERROR, description="No such item among the caller's own.")


class MemoryJobOutput(serializers.ModelSerializer):
    counts = serializers.DictField(
        child=serializers.IntegerField(),
        help_text=_("What the job removed or redacted, per layer (when done)."),
    )

    class Meta:
        model = MemoryJob
        fields = ["id", "kind", "status", "counts", "error", "created_at", "finished_at"]


def job_link(job: MemoryJob) -> str:
    """A ``Link`` header value pointing at the job (RFC 5989's "monitor" relation)."""
    return f'</api/memory/jobs/{job.pk}>; rel="monitor"'


class ForgetInput(StrictInput):
    # Longer than the matcher allows so that its own check (and message) decides.
    text = StrictCharField(max_length=MAX_NEEDLE_CHARS * 4, trim_whitespace=True)


class ForgetView(APIView):
    """Forget every mention of a text in the caller's memory with this agent.

    Facts and candidates that mention it are deleted; runs, thread titles and summaries,
    run manifests are redacted in place; recall entries removed and rebuilt. In the
    background: poll the job.
    """

    @extend_schema(
        request=ForgetInput,
        responses={
            202: MemoryJobOutput,
            400: OpenApiResponse(description="No text, or one too short or too long."),
            404: NOT_FOUND,
        },
    )
    def post(self, request: Request, agent_id: int) -> Response:
        agent = agent_get(actor=request.user, agent_id=agent_id)
        data = ForgetInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            job = forget.memory_forget(
                scope=Scope.for_agent(agent, owner_id=request.user.pk),
                text=data.validated_data["text"],
                actor_id=request.user.pk,
            )
        except forget.ForgetRejected as exc:
            raise serializers.ValidationError({"text": [str(exc)]}) from exc
        return Response(
            MemoryJobOutput(job).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Link": job_link(job)},
        )


class MemoryJobView(APIView):
    """A governance job the caller started: its status and, once done, its counts."""

    @extend_schema(responses={200: MemoryJobOutput, 404: NOT_FOUND})
    def get(self, request: Request, job_id: int) -> Response:
        return Response(MemoryJobOutput(memory_job_get(actor=request.user, job_id=job_id)).data)


class AuditEventOutput(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", default=None, allow_null=True)

    class Meta:
        model = MemoryAuditEvent
        fields = [
            "id",
            "action",
            "object_type",
            "object_id",
            "actor",
            "created_at",
            "before_hash",
            "after_hash",
            "detail",
        ]


class AuditListView(APIView):
    """The audit trail of the caller's memory with this agent, newest first."""

    pagination_class = Pages  # (the schema then documents the page, not a bare array)

    @extend_schema(responses={200: AuditEventOutput(many=True), 404: NOT_FOUND})
    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_get(actor=request.user, agent_id=agent_id)
        events = audit_events_for(scope=Scope.for_agent(agent, owner_id=request.user.pk))
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(events.select_related("actor"), request, view=self)
        return paginator.get_paginated_response(AuditEventOutput(page, many=True).data)


class ExportView(APIView):
    """Everything the memory holds about the caller with this agent, as one JSON file."""

    @extend_schema(
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT,
                description=f"format {EXPORT_FORMAT!r}, version {EXPORT_VERSION}: see "
                "memory/services/export.py (facts, candidates, threads with runs, recall "
                "entries, audit events).",
            ),
            404: NOT_FOUND,
        }
    )
    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_get(actor=request.user, agent_id=agent_id)
        document = memory_export(agent=agent, owner_id=request.user.pk, actor_id=request.user.pk)
        day = timezone.localdate().isoformat()
        response = Response(document)
        response["Content-Disposition"] = (
            f'attachment; filename="memory-export-agent{agent.pk}-{day}.json"'
        )
        response["Cache-Control"] = "private, no-store"
        return response
