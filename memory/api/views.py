"""Threads. Each view validates, calls one service or selector, serializes."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents import selectors
from agents.api.pagination import Pages
from agents.api.views import agent_or_404
from memory.api.serializers import (
    ThreadDetailOutput,
    ThreadOutput,
    ThreadPatchInput,
    ThreadStatusQuery,
)
from memory.models import Thread
from memory.scope import Scope
from memory.services import threads
from memory.services.costs import thread_totals


def _thread_or_404(request: Request, thread_id: str) -> Thread:
    thread = threads.thread_get(
        owner_id=request.user.pk,
        thread_id=thread_id,
        tenant_ids=selectors.tenant_ids_for(request.user),
    )
    if thread is None:
        raise Http404
    return thread


class AgentThreadListView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("status", str, enum=["active", "archived"])],
        responses={200: ThreadOutput(many=True)},
    )
    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_or_404(request, agent_id)
        query = ThreadStatusQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        scope = Scope(tenant_id=agent.tenant_id, agent_id=agent.pk, owner_id=request.user.pk)
        queryset = threads.thread_list(scope=scope, status=query.validated_data["status"])
        paginator = Pages()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response(ThreadOutput(page, many=True).data)


class ThreadDetailView(APIView):
    def _detail(self, thread: Thread) -> Response:
        totals = thread_totals(thread=thread)
        return Response(ThreadDetailOutput(thread, context={"totals": totals}).data)

    @extend_schema(responses={200: ThreadDetailOutput})
    def get(self, request: Request, thread_id: str) -> Response:
        return self._detail(_thread_or_404(request, thread_id))

    @extend_schema(request=ThreadPatchInput, responses={200: ThreadDetailOutput})
    def patch(self, request: Request, thread_id: str) -> Response:
        thread = _thread_or_404(request, thread_id)
        data = ThreadPatchInput(data=request.data)
        data.is_valid(raise_exception=True)
        thread = threads.thread_rename(thread=thread, title=data.validated_data["title"])
        return self._detail(thread)


class ThreadArchiveView(APIView):
    @extend_schema(request=None, responses={200: ThreadOutput})
    def post(self, request: Request, thread_id: str) -> Response:
        thread = threads.thread_archive(thread=_thread_or_404(request, thread_id))
        return Response(ThreadOutput(thread).data)
