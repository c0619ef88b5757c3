"""Tokens and agents. Each view validates, calls one service or selector, serializes."""

from __future__ import annotations

from django.contrib.auth import authenticate
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.authentication import BaseAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents import selectors
from agents.api.serializers import AgentOutput, AgentPatchInput, TokenInput, TokenOutput
from agents.services import AgentSettingsForbidden, agent_settings_update


class TokenView(APIView):
    """Exchange a username and password for an API token."""

    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes = [AllowAny]
    # Wrong passwords are counted by django-axes (agents/logins.py): 429 when locked out.
    login_lockout = True

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
            raise serializers.ValidationError({"non_field_errors": [_("用户名或密码不正确。")]})
        token, _created = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class AgentListView(APIView):
    @extend_schema(responses={200: AgentOutput(many=True)})
    def get(self, request: Request) -> Response:
        agents = selectors.agent_list(actor=request.user)
        return Response(AgentOutput(agents, many=True).data)


class AgentDetailView(APIView):
    @extend_schema(responses={200: AgentOutput, 404: OpenApiResponse(description="Not found")})
    def get(self, request: Request, agent_id: int) -> Response:
        agent = selectors.agent_get(actor=request.user, agent_id=agent_id)
        return Response(AgentOutput(agent).data)

    @extend_schema(
        request=AgentPatchInput,
        responses={
            200: AgentOutput,
            400: OpenApiResponse(description="Bad field"),
            403: OpenApiResponse(description="Not an administrator of the agent's school"),
            404: OpenApiResponse(description="Not found"),
        },
    )
    def patch(self, request: Request, agent_id: int) -> Response:
        agent = selectors.agent_get(actor=request.user, agent_id=agent_id)
        data = AgentPatchInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            agent = agent_settings_update(
                agent=agent,
                actor=request.user,
                archive_artifacts=data.validated_data.get("archive_artifacts"),
            )
        except AgentSettingsForbidden as exc:
            raise PermissionDenied(_("只有学校管理员可以修改智能体的设置。")) from exc
        return Response(AgentOutput(agent).data)
