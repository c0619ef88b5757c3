"""Every response under /api/ is JSON, whatever produced it; pages keep their HTML.

DRF answers its own errors in JSON. Everything else that can answer an API request
does not: the URL resolver's 404, Django's 400 for a bad Host or an oversized form,
a view outside DRF, an exception DRF does not know (500). This middleware, first in
MIDDLEWARE, gives each API request a request id (``X-Request-ID``, also on every log
line it writes) and:

- refuses a path with non-ASCII characters with 404 before URL resolution: every API
  path is ASCII by design, and a pattern with ``\\d`` or ``\\w`` would otherwise match
  ``１`` or ``٣`` (so routes added later are covered without anyone remembering it);
- answers an exception no one handled with a JSON 500 that says only that something
  failed, with the request id, and logs the traceback with the same id;
- turns any other non-JSON error response into ``{"detail", "code"}`` JSON with the same
  status (413 for Django's RequestDataTooBig, which reaches it as a 400).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from django.core.exceptions import (
    BadRequest,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
)
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _

logger = logging.getLogger("agents.api")

API_PREFIX = "/api/"
# Responses that are an API's own and not to be rewritten: JSON and the SSE renderer's
# error event (text/event-stream) for a streaming client.
_KEPT_TYPES = ("application/json", "text/event-stream", "application/problem+json")


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def request_id(request: HttpRequest) -> str:
    """This request's id (assigned by the middleware; a fresh one outside it)."""
    rid = getattr(request, "request_id", None)
    if rid is None:
        rid = uuid.uuid4().hex[:16]
        request.request_id = rid  # type: ignore[attr-defined]
    return rid


def _messages() -> dict[int, tuple[str, str]]:
    return {
        400: (_("请求无效。"), "bad_request"),
        401: (_("需要登录。"), "not_authenticated"),
        403: (_("没有权限执行此操作。"), "permission_denied"),
        404: (_("未找到。"), "not_found"),
        405: (_("不支持该请求方法。"), "method_not_allowed"),
        406: (_("无法按请求的格式返回。"), "not_acceptable"),
        413: (_("请求体过大。"), "payload_too_large"),
        415: (_("不支持的请求体类型。"), "unsupported_media_type"),
        429: (_("请求太频繁，请稍后再试。"), "throttled"),
    }


def error_response(status: int, *, rid: str) -> JsonResponse:
    detail, code = _messages().get(
        status,
        (_("服务器出错了，请稍后重试。"), "server_error")
        if status >= 500
        else (_("请求无效。"), "error"),
    )
    body: dict[str, object] = {"detail": detail, "code": code}
    if status >= 500:
        body["request_id"] = rid
    return JsonResponse(body, status=status, json_dumps_params={"ensure_ascii": False})


def server_error_response(request: HttpRequest) -> JsonResponse:
    """A 500 that says only that something failed, with the id the log has."""
    return error_response(500, rid=request_id(request))


class ApiErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_api(request):
            return self.get_response(request)
        rid = request_id(request)
        if not request.path_info.isascii():
            response: HttpResponse = error_response(404, rid=rid)
        else:
            response = self.get_response(request)
            response = self._as_json(request, response, rid=rid)
        response["X-Request-ID"] = rid
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """Exceptions raised by a view (DRF re-raises those it does not know)."""
        if not is_api(request):
            return None
        if isinstance(exception, RequestDataTooBig):
            return error_response(413, rid=request_id(request))
        if _handled_by_django(exception):
            return None
        logger.error(
            "request %s failed: %s %s",
            request_id(request),
            request.method,
            request.path_info,
            exc_info=exception,
        )
        return server_error_response(request)

    def _as_json(self, request: HttpRequest, response: HttpResponse, *, rid: str) -> HttpResponse:
        if response.status_code < 400:
            return response
        content_type = response.get("Content-Type", "")
        if content_type.startswith(_KEPT_TYPES):
            return response
        status = response.status_code
        if status >= 500:
            # Django has logged the traceback (django.request); this line ties it to the id.
            logger.error(
                "request %s failed: %s %s answered %s",
                rid,
                request.method,
                request.path_info,
                status,
            )
        replaced = error_response(status, rid=rid)
        for header in ("Allow", "Retry-After", "WWW-Authenticate"):
            if header in response:
                replaced[header] = response[header]
        return replaced


def _handled_by_django(exception: Exception) -> bool:
    """Exceptions Django itself turns into a 4xx (rewritten to JSON on the way out)."""
    return isinstance(exception, Http404 | PermissionDenied | SuspiciousOperation | BadRequest)
