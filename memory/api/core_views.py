"""Core memory API: facts and candidates. Promotion happens only here, the panel and admin."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.api.pagination import Pages
from agents.selectors import agent_get
from memory.api.core_serializers import (
    CandidateOutput,
    ConfirmInput,
    ConfirmOutput,
    FactListOutput,
    FactOutput,
    FactPatchInput,
)
from memory.models import CoreCandidate
from memory.scope import Scope
from memory.selectors import candidate_get, fact_get
from memory.services import facts
from memory.services.core import candidates_for_scope, facts_for_scope
from memory.services.facts import UNSET


def _scope(request: Request, agent_id: int) -> Scope:
    """The requesting teacher's memory with one of their agents (or Http404)."""
    agent = agent_get(actor=request.user, agent_id=agent_id)
    return Scope.for_agent(agent, owner_id=request.user.pk)


class FactListView(APIView):
    @extend_schema(responses={200: FactListOutput})
    def get(self, request: Request, agent_id: int) -> Response:
        scope = _scope(request, agent_id)
        items = list(facts_for_scope(scope=scope).select_related("confirmed_by"))
        today = timezone.localdate()
        expired = sum(1 for f in items if f.valid_until is not None and f.valid_until < today)
        return Response(
            FactListOutput(
                {
                    "capacity": settings.CORE_FACTS_MAX,
                    "count": len(items) - expired,
                    "expired_count": expired,
                    "term_end": settings.MEMORY_TERM_CALENDAR.current_term_end(today),
                    "would_evict": facts.eviction_preview(scope=scope),
                    "results": items,
                }
            ).data
        )


class CandidateListView(APIView):
    pagination_class = Pages

    @extend_schema(responses={200: CandidateOutput(many=True)})
    def get(self, request: Request, agent_id: int) -> Response:
        scope = _scope(request, agent_id)
        queryset = candidates_for_scope(scope=scope).select_related("source_run")
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response(CandidateOutput(page, many=True).data)


class CandidateConfirmView(APIView):
    @extend_schema(
        request=ConfirmInput,
        responses={
            200: ConfirmOutput,
            400: OpenApiResponse(description="Bad text or validity, or on the red line."),
            404: OpenApiResponse(description="No such candidate among the caller's."),
        },
    )
    def post(self, request: Request, candidate_id: int) -> Response:
        candidate = candidate_get(actor=request.user, candidate_id=candidate_id)
        # No body is an empty one; a body that is null or not an object is refused.
        data = ConfirmInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            result = facts.candidate_confirm(
                candidate=candidate,
                actor_id=request.user.pk,
                text=data.validated_data.get("text"),
                valid_until=data.validated_data.get("valid_until", UNSET),
            )
        except facts.FactRejected as exc:
            raise serializers.ValidationError({"text": [str(exc)]}) from exc
        except CoreCandidate.DoesNotExist as exc:
            raise Http404 from exc
        return Response(
            ConfirmOutput(
                {"fact": result.fact, "evicted_fact_id": result.evicted_id, "merged": result.merged}
            ).data
        )


class CandidateRejectView(APIView):
    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request, candidate_id: int) -> Response:
        candidate = candidate_get(actor=request.user, candidate_id=candidate_id)
        facts.candidate_reject(candidate=candidate, actor_id=request.user.pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


class FactDetailView(APIView):
    @extend_schema(
        request=FactPatchInput,
        responses={
            200: FactOutput,
            400: OpenApiResponse(description="Bad text or valid_until, or on the red line."),
            404: OpenApiResponse(description="No such fact among the caller's."),
        },
    )
    def patch(self, request: Request, fact_id: int) -> Response:
        fact = fact_get(actor=request.user, fact_id=fact_id)
        data = FactPatchInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            fact = facts.fact_update(
                fact=fact,
                actor_id=request.user.pk,
                text=data.validated_data.get("text"),
                valid_until=data.validated_data.get("valid_until", UNSET),
            )
        except facts.FactRejected as exc:
            raise serializers.ValidationError({"text": [str(exc)]}) from exc
        return Response(FactOutput(fact).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, fact_id: int) -> Response:
        fact = fact_get(actor=request.user, fact_id=fact_id)
        facts.fact_delete(fact=fact, actor_id=request.user.pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
