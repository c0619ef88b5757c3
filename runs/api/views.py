"""Run endpoints: run, run/stream, a run, what it was given, a thread's runs.

Each view validates, calls one service or selector, serializes.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.api.lookups import request_agent
from agents.api.middleware import request_id
from agents.api.pagination import Pages
from agents.api.throttles import RUN_THROTTLES
from agents.models import Agent
from memory.api.governance_views import NOT_FOUND, job_link
from memory.models import RunContext
from memory.selectors import thread_get
from memory.services import forget, threads
from runs import services
from runs.api.serializers import RunContextOutput, RunInput, RunOutput, ThreadRunOutput
from runs.api.sse import RUN_EVENT, EventStreamRenderer, run_event_stream, stream_response
from runs.selectors import run_get


def _start(request: Request, agent: Agent) -> services.StartedRun:
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


class AgentRunView(APIView):
    """Run the agent synchronously and return the finished run."""

    throttle_classes = RUN_THROTTLES

    @extend_schema(request=RunInput, responses={200: RunOutput})
    def post(self, request: Request, agent_id: int) -> Response:
        agent = request_agent(request, agent_id)
        run = services.run_execute(started=_start(request, agent))
        return Response(RunOutput.represent(run))


class AgentRunStreamView(APIView):
    """Run the agent and stream it as server-sent events.

    Events: ``started`` (run_id, thread_id), ``delta`` (text), ``tool`` (one executed
    tool call, as in the run's ``tool_calls``: the model searched the knowledge base; the
    answer follows as more deltas), ``done`` (run) or ``error`` (code, message, run_id).
    """

    renderer_classes = [JSONRenderer, EventStreamRenderer]
    throttle_classes = RUN_THROTTLES

    @extend_schema(
        request=RunInput,
        responses={
            (200, "text/event-stream"): OpenApiResponse(
                RUN_EVENT,
                description=(
                    "Server-sent events of the run: started {run_id, thread_id}; "
                    "delta {text}; tool {id, name, arguments, status, error, chunk_ids, "
                    "tokens, duration_ms} after each tool call the run executed (at most "
                    "3); done {run} or error {code, message, run_id, thread_id, run}."
                ),
            )
        },
    )
    def post(self, request: Request, agent_id: int) -> object:
        agent = request_agent(request, agent_id)
        events = services.run_stream(started=_start(request, agent))
        return stream_response(
            run_event_stream(events, serialize_run=RunOutput.represent),
            request_id=request_id(request),
        )


class RunDetailView(APIView):
    @extend_schema(responses={200: RunOutput})
    def get(self, request: Request, run_id: int) -> Response:
        return Response(RunOutput.represent(run_get(actor=request.user, run_id=run_id)))

    @extend_schema(
        responses={
            204: OpenApiResponse(
                description="Deleted: out of its thread now; its texts, recall entry, "
                "candidates and manifests are erased by the worker, and a summary that "
                'covered it is rebuilt (the job is in the Link header, rel="monitor"). '
                "Its cost stays, as numbers."
            ),
            404: NOT_FOUND,
        }
    )
    def delete(self, request: Request, run_id: int) -> Response:
        # The teacher's own run only: an administrator does not delete a teacher's work.
        run = run_get(actor=request.user, run_id=run_id, owner_only=True)
        job = forget.run_delete(run=run, actor_id=request.user.pk)
        return Response(status=status.HTTP_204_NO_CONTENT, headers={"Link": job_link(job)})


class ThreadRunsView(APIView):
    pagination_class = Pages

    @extend_schema(responses={200: ThreadRunOutput(many=True)})
    def get(self, request: Request, thread_id: str) -> Response:
        thread = thread_get(actor=request.user, thread_id=thread_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(threads.thread_runs(thread=thread), request, view=self)
        return paginator.get_paginated_response(ThreadRunOutput(page, many=True).data)


class RunContextView(APIView):
    """What the run was given, exactly, and why (the manifest). Owner only."""

    @extend_schema(responses={200: RunContextOutput})
    def get(self, request: Request, run_id: int) -> Response:
        run = run_get(actor=request.user, run_id=run_id, owner_only=True)
        record = RunContext.objects.filter(run_id=run.pk).first()
        return Response(
            RunContextOutput(
                {
                    "run_id": run.pk,
                    "thread_id": run.thread_id,
                    "messages": record.messages if record else [],
                    "injected_text": record.injected_text if record else "",
                    "manifest": record.manifest if record else {},
                }
            ).data
        )
