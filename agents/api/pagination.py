"""The API's one pagination: ``?page=`` and ``?page_size=``, both validated.

DRF's PageNumberPagination quietly falls back to the default for a page size it cannot
read (``0``, ``-5``, ``abc``) and accepts any digits int() accepts (``１``); here a bad
page size is a 400 and a page that is not a plain positive number a 404, as the schema
says (minimum 1, page_size at most 100).
"""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.utils.translation import gettext as _
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request


def _plain_int(raw: str) -> int | None:
    if raw.isascii() and raw.isdigit() and len(raw) <= 9 and not raw.startswith("0"):
        return int(raw)
    return None


class Pages(PageNumberPagination):
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        size = _plain_int(raw)
        if size is None or size > self.max_page_size:
            raise ValidationError(
                {
                    self.page_size_query_param: [
                        _("必须是 1 到 %(max)d 之间的整数。") % {"max": self.max_page_size}
                    ]
                }
            )
        return size

    def get_page_number(self, request: Request, paginator: Paginator) -> Any:
        raw = request.query_params.get(self.page_query_param)
        if raw is None:
            return 1
        if _plain_int(raw) is None:
            raise NotFound(_("无效页面。"))
        return raw

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"]["minimum"] = 1
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"]["maximum"] = self.max_page_size
            else:
                parameter["schema"]["maximum"] = 999_999_999
        return parameters
