"""A run's output as a download: Word (.docx) or its Markdown source. Owner only."""

from __future__ import annotations

from django.http import HttpResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.views import APIView

from agents.api.inputs import QueryInput
from agents.models import Run
from runs import exports, selectors


class ExportQuery(QueryInput):
    format = serializers.ChoiceField(choices=list(exports.FORMATS), default="docx")


class RunNotExportable(APIException):
    status_code = 409
    default_detail = _("这一轮没有成功完成，没有可导出的内容。")
    default_code = "run_not_completed"


ERROR = inline_serializer(
    "ExportError", fields={"detail": serializers.CharField(), "code": serializers.CharField()}
)
FORMAT_ERROR = inline_serializer(
    "ExportFormatError", fields={"format": serializers.ListField(child=serializers.CharField())}
)


class RunExportView(APIView):
    """Download the run's output, named after its conversation and day.

    ``?format=`` names the file format here; DRF's own use of it (choosing a renderer)
    is off project-wide (``URL_FORMAT_OVERRIDE`` in the settings).
    """

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "format",
                str,
                enum=list(exports.FORMATS),
                default="docx",
                description="docx: a Word document; md: the Markdown source.",
            )
        ],
        responses={
            (200, exports.DOCX_TYPE): OpenApiResponse(OpenApiTypes.BINARY),
            (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR),
            400: OpenApiResponse(FORMAT_ERROR, description="Unknown format."),
            404: OpenApiResponse(ERROR, description="No such run among the caller's own runs."),
            409: OpenApiResponse(ERROR, description="The run did not complete."),
        },
    )
    def get(self, request: Request, run_id: int) -> HttpResponse:
        # Owner only, as the context manifest: an admin of the school does not download
        # a teacher's papers. Another tenant's run and a missing one are both 404.
        run = selectors.run_get(actor=request.user, run_id=run_id, owner_only=True)
        query = ExportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        if run.status != Run.Status.COMPLETED:
            raise RunNotExportable
        day = timezone.localdate(run.created_at)
        export = exports.run_export(
            output=run.output,
            title=run.thread.title if run.thread else "",
            day=day,
            fmt=query.validated_data["format"],
        )
        response = HttpResponse(export.content, content_type=export.content_type)
        extension = export.filename.rsplit(".", 1)[-1]
        response["Content-Disposition"] = exports.content_disposition(
            export.filename, fallback=f"run-{run.pk}-{day.isoformat()}.{extension}"
        )
        response["Cache-Control"] = "private, no-store"
        response["X-Content-Type-Options"] = "nosniff"
        return response
