"""Server-sent events: framing, the renderer DRF needs, and the run event stream.

A sync generator, because the app is served under WSGI (runserver, gunicorn gthread).
No transaction is held open while the stream is consumed (each write inside the run
engine is its own short transaction).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

from django.http import StreamingHttpResponse
from django.utils.translation import gettext as _
from rest_framework.renderers import BaseRenderer

from agents.models import Run
from runs.services import Finished, RunEvent, Started, TextDelta, ToolUsed, error_message

logger = logging.getLogger(__name__)


# One event of the stream, as an SSE client reads it (the OpenAPI schema of the stream).
RUN_EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"type": "string", "enum": ["started", "delta", "tool", "done", "error"]},
        "data": {
            "type": "string",
            "description": "JSON. started: {run_id, thread_id}; delta: {text}; tool: {id, name, "
            "arguments, status, error, chunk_ids, tokens, duration_ms}; done: {run}; "
            "error: {code, message, run_id, thread_id, run} (or {code, message, request_id} "
            "if the server failed).",
        },
    },
}


def frame(event: str, data: dict[str, Any]) -> str:
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event}\ndata: {payload}\n\n"


class EventStreamRenderer(BaseRenderer):
    """Lets DRF accept ``Accept: text/event-stream`` (else it answers 406).

    Responses that are not streams (a 400 or 404 before the run starts) are rendered as
    a single ``error`` event so that an SSE client can read them.
    """

    media_type = "text/event-stream"
    format = "sse"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: dict[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        body = data if isinstance(data, dict) else {"detail": data}
        return frame("error", body).encode("utf-8")


def run_event_stream(
    events: Iterator[RunEvent], *, serialize_run: Callable[[Run], dict[str, Any]]
) -> Iterator[str]:
    for event in events:
        if isinstance(event, Started):
            yield frame(
                "started",
                {"run_id": event.run.pk, "thread_id": event.run.thread_id},
            )
        elif isinstance(event, TextDelta):
            yield frame("delta", {"text": event.text})
        elif isinstance(event, ToolUsed):
            # After the call ran: a client may show "searched the knowledge base"; the
            # answer's text keeps coming as deltas, the whole record is in done's run.
            yield frame("tool", event.record.as_json())
        elif isinstance(event, Finished):
            run = event.run
            if run.status == Run.Status.COMPLETED:
                yield frame("done", {"run": serialize_run(run)})
            else:
                yield frame(
                    "error",
                    {
                        "code": run.error_code,
                        "message": error_message(run.error_code),
                        "run_id": run.pk,
                        "thread_id": run.thread_id,
                        "run": serialize_run(run),
                    },
                )


def guarded(body: Iterator[str], *, request_id: str) -> Iterator[str]:
    """The stream, ending with an ``error`` event if it fails after it has started.

    The response's status is long sent by then; without this the client would see the
    stream stop with neither ``done`` nor ``error``.
    """
    try:
        yield from body
    except Exception:
        logger.exception("request %s failed while streaming", request_id)
        yield frame(
            "error",
            {
                "code": "server_error",
                "message": _("服务器出错了，请稍后重试。"),
                "request_id": request_id,
            },
        )


def stream_response(body: Iterator[str], *, request_id: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        guarded(body, request_id=request_id), content_type="text/event-stream; charset=utf-8"
    )
    response["Cache-Control"] = "no-cache"
    # Tell nginx-style proxies not to buffer the stream.
    response["X-Accel-Buffering"] = "no"
    return response
