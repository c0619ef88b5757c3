"""Agents and runs. Each view validates, calls one service, serializes."""

from __future__ import annotations

from django.contrib.auth import authenticate
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.authentication import BaseAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents import selectors, services
from agents.api.serializers import (
    AgentOutput,
    RunInput,
    RunOutput,
    TokenInput,
    TokenOutput,
)
from agents.api.sse import EventStreamRenderer, run_event_stream, stream_response
from agents.models import Agent, Run


def agent_or_404(request: Request, agent_id: int) -> Agent:
    agent = selectors.agent_get(user=request.user, agent_id=agent_id)
    if agent is None:
        raise Http404
    return agent


def _start(request: Request, agent: Agent) -> Run:
    data = RunInput(data=request.data)
    data.is_valid(raise_exception=True)
    try:
        return services.run_start(
            agent=agent,
            owner_id=request.user.pk,
            user_input=data.validated_data["input"],
            context=data.validated_data.get("context") or {},
            thread_id=data.validated_data.get("thread_id"),
        )
    except services.RunRejected as exc:
        raise serializers.ValidationError({exc.field: [exc.message]}) from exc


class TokenView(APIView):
    """Exchange a username and password for an API token."""

    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes = [AllowAny]

    @extend_schema(request=TokenInput, responses={200: TokenOutput})
    def post(self, request: Request) -> Response:
        data = TokenInput(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(
            request=request._request,
            username=data.validated_data["username"],
            password=data.validated_data["password"],
        )
        if user is None or not user.is_active:
            raise serializers.ValidationError({"non_field_errors": ["用户名或密码不正确。"]})
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class AgentListView(APIView):
    @extend_schema(responses={200: AgentOutput(many=True)})
    def get(self, request: Request) -> Response:
        agents = selectors.agent_list(user=request.user)
        return Response(AgentOutput(agents, many=True).data)


class AgentRunView(APIView):
    """Run the agent synchronously and return the finished run."""

    @extend_schema(request=RunInput, responses={200: RunOutput})
    def post(self, request: Request, agent_id: int) -> Response:
        agent = agent_or_404(request, agent_id)
        run = _start(request, agent)
        run = services.run_execute(run=run)
        return Response(RunOutput(run).data)


class AgentRunStreamView(APIView):
    """Run the agent and stream it as server-sent events.

    Events: ``started`` (run_id, thread_id), ``delta`` (text), ``done`` (run) or
    ``error`` (code, message, run_id).
    """

    renderer_classes = [JSONRenderer, EventStreamRenderer]

    @extend_schema(
        request=RunInput,
        responses={200: OpenApiResponse(description="text/event-stream of run events")},
    )
    def post(self, request: Request, agent_id: int) -> object:
        agent = agent_or_404(request, agent_id)
        run = _start(request, agent)
        events = services.run_stream(run=run)
        return stream_response(
            run_event_stream(events, serialize_run=lambda r: dict(RunOutput(r).data))
        )


class RunDetailView(APIView):
    @extend_schema(responses={200: RunOutput})
    def get(self, request: Request, run_id: int) -> Response:
        run = selectors.run_get(user=request.user, run_id=run_id)
        if run is None:
            raise Http404
        return Response(RunOutput(run).data)
