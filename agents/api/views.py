"""Tokens and agents. Each view validates, calls one service or selector, serializes."""

from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.authentication import BaseAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents import selectors
from agents.api.serializers import AgentOutput, TokenInput, TokenOutput


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
            raise serializers.ValidationError({"non_field_errors": ["用户名或密码不正确。"]})
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class AgentListView(APIView):
    @extend_schema(responses={200: AgentOutput(many=True)})
    def get(self, request: Request) -> Response:
        agents = selectors.agent_list(actor=request.user)
        return Response(AgentOutput(agents, many=True).data)
