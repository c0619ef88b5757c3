"""Recall search for debugging and the frontend: hits, scores, and the gate's verdict."""

from __future__ import annotations

from django.conf import settings
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.selectors import agent_get
from memory.scope import Scope
from memory.services.recall import recall_search


class RecallQuery(serializers.Serializer):
    q = serializers.CharField(max_length=2000, trim_whitespace=True)
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=50)

    def validate_q(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError(_("查询不能为空。"))
        return value


class RecallHitOutput(serializers.Serializer):
    entry_id = serializers.IntegerField()
    run_id = serializers.IntegerField()
    thread_id = serializers.CharField(allow_null=True)
    score = serializers.FloatField(help_text="Calibrated relevance in [0, 1]")
    passes_gate = serializers.BooleanField()
    text = serializers.CharField()
    created_at = serializers.CharField()


class RecallOutput(serializers.Serializer):
    query = serializers.CharField()
    threshold = serializers.FloatField()
    top_k = serializers.IntegerField()
    results = RecallHitOutput(many=True)


class RecallSearchView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("q", str, required=True), OpenApiParameter("limit", int)],
        responses={200: RecallOutput},
    )
    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_get(actor=request.user, agent_id=agent_id)
        query = RecallQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        hits = recall_search(
            scope=Scope.for_agent(agent, owner_id=request.user.pk),
            query=query.validated_data["q"],
            k=query.validated_data["limit"],
        )
        return Response(
            RecallOutput(
                {
                    "query": query.validated_data["q"],
                    "threshold": settings.RECALL_GATE,
                    "top_k": settings.RECALL_TOP_K,
                    "results": hits,
                }
            ).data
        )
