"""The project's URLs plus API views that fail on purpose, for tests/test_api_errors.py.

Faults a correct view never has (an exception nobody handles, an HTML error page, a
stream that breaks), so that the middleware's answers to them can be tested.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.urls import path
from rest_framework.parsers import FormParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.urls import urlpatterns as project_urlpatterns
from runs.api.sse import frame, stream_response


class Broken(RuntimeError):
    """The fault the views below raise (never a user's mistake)."""


class BrokenApiView(APIView):
    def get(self, request: Request) -> Response:
        raise Broken("secret detail that must not reach the client")


class FormApiView(APIView):
    parser_classes = [FormParser]

    def post(self, request: Request) -> Response:
        return Response({"fields": sorted(request.data)})


def broken_plain_view(request: HttpRequest) -> HttpResponse:
    raise Broken("secret detail that must not reach the client")


def html_error_view(request: HttpRequest) -> HttpResponse:
    return HttpResponseBadRequest("<h1>Bad</h1>")


def _breaking_events() -> Iterator[str]:
    yield frame("started", {"run_id": 1})
    raise Broken("secret detail that must not reach the client")


def broken_stream_view(request: HttpRequest) -> HttpResponse:
    return stream_response(_breaking_events(), request_id=request.request_id)  # type: ignore[attr-defined]


urlpatterns = [
    path("api/test-faults/drf", BrokenApiView.as_view()),
    path("api/test-faults/form", FormApiView.as_view()),
    path("api/test-faults/plain", broken_plain_view),
    path("api/test-faults/html", html_error_view),
    path("api/test-faults/stream", broken_stream_view),
    path("test-faults/plain", broken_plain_view),
    *project_urlpatterns,
]
