"""Knowledge-base API: upload, list, read, delete documents; search as the agent would.

Each view validates, calls one service or selector, serializes. Uploads are
multipart (``file``, ``title``, ``visibility``) or JSON (``title``, ``text``); the
document comes back ``processing`` and is parsed by the worker.
"""

from __future__ import annotations

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.api.pagination import Pages
from agents.api.parsers import JSONBodyParser
from agents.selectors import agent_get
from memory.api.kb_serializers import (
    ERROR,
    KBDocumentOutput,
    KBDocumentPageOutput,
    KBFileUploadInput,
    KBSearchInput,
    KBSearchOutput,
    KBTextUploadInput,
)
from memory.models import KBDocument
from memory.scope import Scope
from memory.selectors import kb_document_get, kb_document_may_delete, kb_documents_deletable
from memory.services.kb import kb_search
from memory.services.kb_documents import (
    KBRejected,
    kb_document_create,
    kb_document_delete,
    kb_documents_visible,
    kb_size_check,
)

# Multipart framing around the file: boundaries, the other fields.
_FRAMING_BYTES = 64 * 1024


class PayloadTooLarge(APIException):
    status_code = 413
    default_detail = _("上传内容太大。")
    default_code = "too_large"


class UnsupportedFileType(APIException):
    status_code = 415
    default_detail = _("不支持这种文件类型。")
    default_code = "unsupported_type"


def _raise(exc: KBRejected) -> None:
    if exc.status == 413:
        raise PayloadTooLarge(str(exc)) from exc
    if exc.status == 415:
        raise UnsupportedFileType(str(exc)) from exc
    raise serializers.ValidationError({exc.field: [str(exc)]}) from exc


def _output(request: Request, documents: list[KBDocument], *, many: bool = True) -> object:
    context = {"deletable": kb_documents_deletable(actor=request.user, documents=documents)}
    if many:
        return KBDocumentOutput(documents, many=True, context=context).data
    return KBDocumentOutput(documents[0], context=context).data


class AgentKBDocumentsView(APIView):
    parser_classes = [JSONBodyParser, MultiPartParser, FormParser]

    @extend_schema(
        parameters=[OpenApiParameter("page", int), OpenApiParameter("page_size", int)],
        responses={200: KBDocumentPageOutput, 404: OpenApiResponse(ERROR)},
        description="The agent's documents the caller sees: shared ones and their own "
        "private ones, newest first (paginated).",
    )
    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_get(actor=request.user, agent_id=agent_id)
        queryset = kb_documents_visible(scope=Scope.for_agent(agent, owner_id=request.user.pk))
        paginator = Pages()
        page = list(paginator.paginate_queryset(queryset, request, view=self) or [])
        return paginator.get_paginated_response(_output(request, page))

    @extend_schema(
        request={
            "multipart/form-data": KBFileUploadInput,
            "application/json": KBTextUploadInput,
        },
        responses={
            201: KBDocumentOutput,
            400: OpenApiResponse(description="Empty or unreadable file, bad field"),
            404: OpenApiResponse(ERROR, description="No such agent among the caller's"),
            413: OpenApiResponse(ERROR, description="Larger than KB_UPLOAD_MAX_BYTES"),
            415: OpenApiResponse(ERROR, description="Not .txt, .md, .docx or .pdf"),
        },
        description="Upload a document; it is parsed, chunked and indexed in the "
        "background (status processing, then ready or failed).",
    )
    def post(self, request: Request, agent_id: int) -> Response:
        agent = agent_get(actor=request.user, agent_id=agent_id)
        # Refused before the body is read: a 200 MB upload is not spooled to disk first.
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
        try:
            if declared > settings.KB_UPLOAD_MAX_BYTES + _FRAMING_BYTES:
                kb_size_check(size=declared)
            if request.content_type.startswith("application/json"):
                text_input = KBTextUploadInput(data=request.data)
                text_input.is_valid(raise_exception=True)
                values = text_input.validated_data
                document = kb_document_create(
                    agent=agent,
                    owner_id=request.user.pk,
                    visibility=values["visibility"],
                    title=values["title"],
                    text=values["text"],
                )
            else:
                file_input = KBFileUploadInput(data=request.data)
                file_input.is_valid(raise_exception=True)
                values = file_input.validated_data
                upload: UploadedFile = values["file"]
                kb_size_check(size=upload.size or 0)
                document = kb_document_create(
                    agent=agent,
                    owner_id=request.user.pk,
                    visibility=values["visibility"],
                    title=values.get("title", ""),
                    filename=upload.name or "",
                    data=upload.read(),
                )
        except KBRejected as exc:
            _raise(exc)
        return Response(_output(request, [document], many=False), status=status.HTTP_201_CREATED)


class KBDocumentDetailView(APIView):
    @extend_schema(
        responses={200: KBDocumentOutput, 404: OpenApiResponse(ERROR)},
        description="A document the caller may read.",
    )
    def get(self, request: Request, document_id: int) -> Response:
        document = kb_document_get(actor=request.user, document_id=document_id)
        return Response(_output(request, [document], many=False))

    @extend_schema(
        responses={
            204: None,
            403: OpenApiResponse(ERROR, description="A colleague's shared document"),
            404: OpenApiResponse(ERROR),
        },
        description="Delete a document and its chunks: the uploader, or for a shared "
        "document an administrator of the school.",
    )
    def delete(self, request: Request, document_id: int) -> Response:
        document = kb_document_get(actor=request.user, document_id=document_id)
        if not kb_document_may_delete(actor=request.user, document=document):
            raise PermissionDenied(_("只有上传者或学校管理员可以删除这份共享文档。"))
        kb_document_delete(document=document)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AgentKBSearchView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("q", str, required=True, description="The message"),
            OpenApiParameter("limit", int),
        ],
        responses={
            200: KBSearchOutput,
            400: OpenApiResponse(description="Empty or too long query, bad limit"),
            404: OpenApiResponse(ERROR, description="No such agent among the caller's"),
        },
        description="Search the knowledge base as the agent would for the caller: "
        "passes_gate marks what passive injection would use.",
    )
    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_get(actor=request.user, agent_id=agent_id)
        data = KBSearchInput(data=request.query_params)
        data.is_valid(raise_exception=True)
        hits = kb_search(
            scope=Scope.for_agent(agent, owner_id=request.user.pk),
            query=data.validated_data["q"],
            limit=data.validated_data["limit"],
        )
        return Response(
            KBSearchOutput(
                {
                    "query": data.validated_data["q"],
                    "threshold": settings.KB_GATE,
                    "top_k": settings.KB_TOP_K,
                    "results": hits,
                }
            ).data
        )
