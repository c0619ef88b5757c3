"""Recall search for debugging and the frontend: hits, scores, and the gate's verdict."""

from __future__ import annotations

from django.conf import settings
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.api.fields import StrictCharField
from agents.api.inputs import QueryInput
from agents.selectors import agent_get
from memory.scope import Scope
from memory.services.recall import RecallQuery, recall_query_for_thread, recall_search
from memory.services.threads import ThreadRejected


class RecallQueryInput(QueryInput):
    q = StrictCharField(max_length=2000, trim_whitespace=True, help_text="The message")
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=50)
    thread_id = StrictCharField(
        required=False,
        max_length=32,
        trim_whitespace=True,
        help_text="Search as the read path does for a message in this thread "
        "(its recent turns and summary join the query)",
    )

    def validate_q(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError(_("查询不能为空。"))
        return value


class RecallHitOutput(serializers.Serializer):
    entry_id = serializers.IntegerField()
    run_id = serializers.IntegerField()
    thread_id = serializers.CharField(allow_null=True)
    score = serializers.FloatField(help_text="The gate's relevance score in [0, 1]")
    passes_gate = serializers.BooleanField()
    text = serializers.CharField()
    created_at = serializers.CharField()


class RecallOutput(serializers.Serializer):
    query = serializers.CharField()
    thread_id = serializers.CharField(allow_null=True)
    threshold = serializers.FloatField()
    top_k = serializers.IntegerField()
    results = RecallHitOutput(many=True)


class RecallSearchView(APIView):
    @extend_schema(parameters=[RecallQueryInput], responses={200: RecallOutput})
    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_get(actor=request.user, agent_id=agent_id)
        data = RecallQueryInput(data=request.query_params)
        data.is_valid(raise_exception=True)
        message = data.validated_data["q"]
        thread_id = data.validated_data.get("thread_id") or None
        scope = Scope.for_agent(agent, owner_id=request.user.pk)
        query = RecallQuery(message=message)
        if thread_id is not None:
            try:
                query = recall_query_for_thread(scope=scope, thread_id=thread_id, message=message)
            except ThreadRejected as exc:
                raise serializers.ValidationError({"thread_id": [str(exc)]}) from exc
        hits = recall_search(scope=scope, query=query, k=data.validated_data["limit"])
        return Response(
            RecallOutput(
                {
                    "query": message,
                    "thread_id": thread_id,
                    "threshold": settings.RECALL_GATE,
                    "top_k": settings.RECALL_TOP_K,
                    "results": hits,
                }
            ).data
        )
