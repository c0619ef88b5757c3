"""Input and output shapes of the knowledge-base API."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import inline_serializer
from rest_framework import serializers

from agents.api.fields import StrictCharField
from agents.api.inputs import QueryInput, StrictInput
from memory.models import KBDocument
from memory.services.kb_documents import TITLE_MAX_CHARS

ERROR = inline_serializer(
    "KBError", fields={"detail": serializers.CharField(), "code": serializers.CharField()}
)


PASTED_TEXT_MAX_CHARS = 100_000


class KBFileUploadInput(StrictInput):
    """multipart/form-data: a file, and optionally its title and visibility."""

    file = serializers.FileField(
        allow_empty_file=True, help_text=".txt / .md (UTF-8, GBK/GB18030, UTF-16), .docx, .pdf"
    )
    title = StrictCharField(required=False, allow_blank=True, max_length=TITLE_MAX_CHARS)
    visibility = serializers.ChoiceField(
        choices=KBDocument.Visibility.choices, default=KBDocument.Visibility.AGENT
    )


class KBTextUploadInput(StrictInput):
    """application/json: a title and the text itself (read as Markdown)."""

    title = StrictCharField(max_length=TITLE_MAX_CHARS)
    # Pasted text: a chapter, not a book (larger material is uploaded as a file).
    text = StrictCharField(trim_whitespace=False, max_length=PASTED_TEXT_MAX_CHARS)
    visibility = serializers.ChoiceField(
        choices=KBDocument.Visibility.choices, default=KBDocument.Visibility.AGENT
    )


class KBDocumentOutput(serializers.ModelSerializer):
    agent_id = serializers.IntegerField()
    source_run_id = serializers.IntegerField(allow_null=True)
    owner = serializers.CharField(source="owner.username")
    can_delete = serializers.SerializerMethodField(
        help_text=_("当前用户能否删除（上传者；共享文档还有学校管理员）")
    )

    class Meta:
        model = KBDocument
        fields = [
            "id",
            "agent_id",
            "title",
            "visibility",
            "status",
            "error",
            "kind",
            "filename",
            "encoding",
            "size_bytes",
            "char_count",
            "chunk_count",
            "source_run_id",
            "owner",
            "can_delete",
            "created_at",
            "updated_at",
            "processed_at",
        ]

    def get_can_delete(self, document: KBDocument) -> bool:
        deletable: set[int] = self.context.get("deletable", set())
        return document.pk in deletable


class KBDocumentPageOutput(serializers.Serializer):
    """One page of documents (``?page=``, ``?page_size=`` up to 100)."""

    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = KBDocumentOutput(many=True)


class KBSearchInput(QueryInput):
    q = serializers.CharField(max_length=2000, trim_whitespace=True)
    limit = serializers.IntegerField(required=False, default=5, min_value=1, max_value=20)

    def validate_q(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError(_("查询不能为空。"))
        return value


class KBHitOutput(serializers.Serializer):
    chunk_id = serializers.IntegerField()
    document_id = serializers.IntegerField()
    title = serializers.CharField()
    heading_path = serializers.CharField(allow_blank=True)
    text = serializers.CharField(help_text="The chunk, red-line redacted")
    score = serializers.FloatField(help_text="The gate's relevance score in [0, 1]")
    passes_gate = serializers.BooleanField(help_text="Whether passive injection would use it")


class KBSearchOutput(serializers.Serializer):
    query = serializers.CharField()
    threshold = serializers.FloatField()
    top_k = serializers.IntegerField()
    results = KBHitOutput(many=True)
