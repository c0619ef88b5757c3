"""Threads. Each view validates, calls one service or selector, serializes."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.api.pagination import Pages
from agents.selectors import agent_get
from memory.api.governance_views import NOT_FOUND, job_link
from memory.api.serializers import (
    ThreadDetailOutput,
    ThreadOutput,
    ThreadPatchInput,
    ThreadStatusQuery,
)
from memory.models import Thread
from memory.scope import Scope
from memory.selectors import cost_totals_by, thread_get
from memory.services import forget, threads


class AgentThreadListView(APIView):
    pagination_class = Pages

    @extend_schema(parameters=[ThreadStatusQuery], responses={200: ThreadOutput(many=True)})
    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_get(actor=request.user, agent_id=agent_id)
        query = ThreadStatusQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        queryset = threads.thread_list(
            scope=Scope.for_agent(agent, owner_id=request.user.pk),
            status=query.validated_data["status"],
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response(ThreadOutput(page, many=True).data)


class ThreadDetailView(APIView):
    def _detail(self, thread: Thread) -> Response:
        totals = cost_totals_by(key="thread_id", ids=[thread.pk])[thread.pk]
        return Response(ThreadDetailOutput(thread, context={"totals": totals}).data)

    @extend_schema(responses={200: ThreadDetailOutput})
    def get(self, request: Request, thread_id: str) -> Response:
        return self._detail(thread_get(actor=request.user, thread_id=thread_id))

    @extend_schema(request=ThreadPatchInput, responses={200: ThreadDetailOutput})
    def patch(self, request: Request, thread_id: str) -> Response:
        thread = thread_get(actor=request.user, thread_id=thread_id)
        data = ThreadPatchInput(data=request.data)
        data.is_valid(raise_exception=True)
        thread = threads.thread_rename(thread=thread, title=data.validated_data["title"])
        return self._detail(thread)

    @extend_schema(
        responses={
            204: OpenApiResponse(
                description="Deleted: gone from every list and getter now; its runs' texts, "
                "recall entries, candidates and manifests are erased by the worker (the job "
                'is in the Link header, rel="monitor"). Costs stay, as numbers.'
            ),
            404: NOT_FOUND,
        }
    )
    def delete(self, request: Request, thread_id: str) -> Response:
        thread = thread_get(actor=request.user, thread_id=thread_id)
        job = forget.thread_delete(thread=thread, actor_id=request.user.pk)
        return Response(status=status.HTTP_204_NO_CONTENT, headers={"Link": job_link(job)})


class ThreadArchiveView(APIView):
    @extend_schema(request=None, responses={200: ThreadOutput})
    def post(self, request: Request, thread_id: str) -> Response:
        thread = threads.thread_archive(thread=thread_get(actor=request.user, thread_id=thread_id))
        return Response(ThreadOutput(thread).data)
