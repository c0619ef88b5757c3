"""API error shape and the DRF exception handler (settings.REST_FRAMEWORK["EXCEPTION_HANDLER"]).

Two shapes, as DRF makes them and the chat page reads them:

- ``{"detail": "...", "code": "..."}`` for an error about the request as a whole (401,
  404, 405, 413, 415, 429 with ``retry_after``, a body that cannot be parsed);
- ``{"field": ["message", ...]}`` for invalid fields (400).

Exceptions DRF does not know are not handled here: they reach
:class:`agents.api.middleware.ApiErrorMiddleware`, which logs them with the request id
and answers a JSON 500 (so views outside DRF get the same).
"""

from __future__ import annotations

import math
from typing import Any

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import status
from rest_framework.exceptions import APIException, Throttled
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = gettext_lazy("请求体过大。")
    default_code = "payload_too_large"

    def __init__(self, *, limit: int | None = None) -> None:
        if limit is None:
            super().__init__()
        else:
            super().__init__(_("请求体过大：最多 %(size)s 字节。") % {"size": f"{limit:,}"})


def throttled_detail(wait: int | None) -> str:
    if wait is None:
        return _("请求太频繁，请稍后再试。")
    return _("请求太频繁，请稍后再试（约 %(n)d 秒后）。") % {"n": wait}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, RequestDataTooBig | TooManyFieldsSent | TooManyFilesSent):
        # Django's own limits (DATA_UPLOAD_MAX_MEMORY_SIZE and friends), met when a
        # parser reads request.body or request.POST.
        exc = PayloadTooLarge()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, Throttled):
        wait = None if exc.wait is None else max(1, math.ceil(exc.wait))
        response.data = {"detail": throttled_detail(wait), "code": "throttled", "retry_after": wait}
        if wait is not None:
            response["Retry-After"] = str(wait)
        return response
    if isinstance(response.data, dict) and "detail" in response.data:
        detail = response.data["detail"]
        response.data = {"detail": str(detail), "code": getattr(detail, "code", "error")}
    return response
