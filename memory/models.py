"""The memory layers: threads (L1), memory-op ledger, context manifests."""

from __future__ import annotations

import secrets
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

# The longest fact: what a model may propose, a person may confirm or write, and the
# columns hold. One constant for the models, the API, the panel and the parser.
MAX_FACT_CHARS = 300


def new_thread_id() -> str:
    return f"th_{secrets.token_hex(8)}"


class ThreadQuerySet(models.QuerySet["Thread"]):
    def for_scope(self, *, tenant_id: int, agent_id: int, owner_id: int) -> ThreadQuerySet:
        return self.filter(tenant_id=tenant_id, agent_id=agent_id, owner_id=owner_id)


class Thread(models.Model):
    """A conversation (design v2 §2.1): its runs share a rolling summary and recent turns."""

    class Status(models.TextChoices):
        ACTIVE = "active", _("进行中")
        ARCHIVED = "archived", _("已归档")

    id = models.CharField(primary_key=True, max_length=32, default=new_thread_id, editable=False)
    tenant = models.ForeignKey("agents.Tenant", on_delete=models.CASCADE, related_name="threads")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="threads")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="threads"
    )
    title = models.CharField(_("标题"), max_length=200, blank=True)
    rolling_summary = models.TextField(_("滚动摘要"), blank=True)
    # The cursor: the last run folded into the summary, as (created_at, id). created_at
    # alone is the original design's cursor; the id breaks ties between runs created in
    # the same microsecond, so the order is total and no run is skipped or folded twice.
    summary_upto_at = models.DateTimeField(_("摘要覆盖至"), null=True, blank=True)
    summary_upto_run_id = models.BigIntegerField(_("摘要覆盖至运行"), null=True, blank=True)
    status = models.CharField(
        _("状态"), max_length=16, choices=Status.choices, default=Status.ACTIVE
    )
    created_at = models.DateTimeField(_("创建时间"), default=timezone.now)
    updated_at = models.DateTimeField(_("更新时间"), default=timezone.now)
    # When the sweeper last enqueued a catch-up compression (its compare-and-set claim).
    compress_enqueued_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = ThreadQuerySet.as_manager()

    class Meta:
        verbose_name = _("会话")
        verbose_name_plural = _("会话")
        indexes = [
            models.Index(
                fields=["tenant", "agent", "-updated_at"], name="thread_tenant_agent_updated"
            ),
            models.Index(fields=["owner", "agent", "status", "-updated_at"], name="thread_owner"),
        ]

    def __str__(self) -> str:
        return self.title or self.id


class RunContext(models.Model):
    """What one run was given: the exact messages and the manifest ("why was this shown")."""

    run = models.OneToOneField(
        "agents.Run", on_delete=models.CASCADE, primary_key=True, related_name="context_record"
    )
    messages = models.JSONField(default=list)
    injected_text = models.TextField(blank=True)
    manifest = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("运行上下文")
        verbose_name_plural = _("运行上下文")

    def __str__(self) -> str:
        return f"context of run {self.run_id}"


class MemoryOp(models.Model):
    """One LLM call made by the memory itself (design v2 §5). Never mixed into run cost."""

    class Kind(models.TextChoices):
        COMPRESS = "compress", _("滚动压缩")
        EXTRACT = "extract", _("事实提炼")
        ARCHIVE = "archive", _("产物归档")
        REDLINE_JUDGE = "redline_judge", _("红线复核")

    tenant = models.ForeignKey("agents.Tenant", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="memory_ops")
    thread = models.ForeignKey(
        Thread, on_delete=models.CASCADE, related_name="memory_ops", null=True, blank=True
    )
    run = models.ForeignKey(
        "agents.Run", on_delete=models.SET_NULL, related_name="memory_ops", null=True, blank=True
    )
    kind = models.CharField(_("类型"), max_length=16, choices=Kind.choices)
    provider = models.ForeignKey(
        "agents.Provider", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    provider_name = models.CharField(_("模型"), max_length=100, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal("0"))
    success = models.BooleanField(default=True)
    error_code = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("记忆操作")
        verbose_name_plural = _("记忆操作")
        indexes = [
            models.Index(fields=["thread", "created_at"], name="memop_thread"),
            models.Index(fields=["agent", "created_at"], name="memop_agent"),
            models.Index(fields=["tenant", "created_at"], name="memop_tenant"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} via {self.provider_name}"


class ScopedQuerySet(models.QuerySet):  # type: ignore[type-arg]
    def for_scope(self, *, tenant_id: int, agent_id: int, owner_id: int) -> ScopedQuerySet:
        return self.filter(tenant_id=tenant_id, agent_id=agent_id, owner_id=owner_id)


class CoreFact(models.Model):
    """A long-term fact the teacher confirmed (L2). Only a person creates one."""

    tenant = models.ForeignKey("agents.Tenant", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="core_facts")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="core_facts"
    )
    text = models.CharField(_("事实"), max_length=MAX_FACT_CHARS)
    source_run = models.ForeignKey(
        "agents.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    confirmed_at = models.DateTimeField(_("确认时间"), default=timezone.now)
    # Touched whenever the fact is injected; the least recently used is evicted first.
    last_used_at = models.DateTimeField(_("最近使用"), null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        verbose_name = _("核心记忆")
        verbose_name_plural = _("核心记忆")
        indexes = [models.Index(fields=["tenant", "agent", "owner"], name="fact_scope")]

    def __str__(self) -> str:
        return self.text


class CoreCandidate(models.Model):
    """A fact the system proposes; pending until a person confirms or deletes it."""

    tenant = models.ForeignKey("agents.Tenant", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey(
        "agents.Agent", on_delete=models.CASCADE, related_name="core_candidates"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="core_candidates"
    )
    fact = models.CharField(_("候选事实"), max_length=MAX_FACT_CHARS)
    # Normalised text: equal keys in one scope are the same candidate (merged).
    fact_key = models.CharField(max_length=300, editable=False)
    confidence = models.FloatField(_("置信度"), default=0.5)
    evidence = models.CharField(_("原话依据"), max_length=500)
    source_run = models.ForeignKey(
        "agents.Run", on_delete=models.CASCADE, related_name="core_candidates"
    )
    seen_count = models.PositiveIntegerField(_("提及次数"), default=1)
    created_at = models.DateTimeField(_("提出时间"), default=timezone.now)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        verbose_name = _("待确认记忆")
        verbose_name_plural = _("待确认记忆")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "agent", "owner", "fact_key"], name="candidate_unique_fact"
            ),
        ]
        indexes = [
            models.Index(fields=["tenant", "agent", "owner", "-confidence"], name="cand_scope"),
        ]

    def __str__(self) -> str:
        return self.fact


class RedlineAudit(models.Model):
    """How many spans the red line blocked, by category and scope. Never the text."""

    class Source(models.TextChoices):
        CANDIDATE = "candidate", _("候选事实")
        FACT = "fact", _("确认/编辑事实")
        SUMMARY = "summary", _("滚动摘要")
        RECALL = "recall", _("情景记忆条目")
        INJECTION = "injection", _("注入时复查")
        KB = "kb", _("知识库片段")

    tenant = models.ForeignKey("agents.Tenant", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, related_name="+"
    )
    category = models.CharField(_("类别"), max_length=16)
    source = models.CharField(_("环节"), max_length=16, choices=Source.choices)
    day = models.DateField(_("日期"))
    count = models.PositiveIntegerField(_("拦截次数"), default=0)

    class Meta:
        verbose_name = _("红线拦截统计")
        verbose_name_plural = _("红线拦截统计")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "agent", "owner", "category", "source", "day"],
                name="redline_audit_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.category}/{self.source}: {self.count}"


class RecallEntry(models.Model):
    """One finished run, as episodic memory (L3): a compact, red-line-filtered text.

    ``terms`` is the entry's pre-tokenised text (space-separated; no term contains a
    space), so that a process can build its in-memory BM25 index without re-tokenising.
    """

    tenant = models.ForeignKey("agents.Tenant", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    run = models.OneToOneField("agents.Run", on_delete=models.CASCADE, related_name="recall_entry")
    thread = models.ForeignKey(
        Thread, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    text = models.TextField(_("摘录"))
    terms = models.TextField(editable=False)
    created_at = models.DateTimeField(_("运行时间"))

    class Meta:
        verbose_name = _("情景记忆条目")
        verbose_name_plural = _("情景记忆条目")
        indexes = [models.Index(fields=["tenant", "agent", "owner", "id"], name="recall_scope")]

    def __str__(self) -> str:
        return self.text[:40]


class RecallScope(models.Model):
    """Per-scope version of the recall entries, bumped in the transaction of every write.

    Each process keeps an in-memory index per scope; one indexed read of this row tells
    it whether the index is current, which entries to load incrementally (``max_entry_id``)
    and whether anything was removed (``entry_count``).
    """

    tenant = models.ForeignKey("agents.Tenant", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    version = models.PositiveBigIntegerField(default=0)
    entry_count = models.PositiveIntegerField(default=0)
    max_entry_id = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "agent", "owner"], name="recall_scope_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"recall scope v{self.version} ({self.entry_count} entries)"


# -- L4: the knowledge base -----------------------------------------------------------------
class KBDocumentQuerySet(models.QuerySet["KBDocument"]):
    def visible_to(self, *, tenant_id: int, agent_id: int, owner_id: int) -> KBDocumentQuerySet:
        """The agent's shared documents and the owner's own private ones."""
        return self.filter(tenant_id=tenant_id, agent_id=agent_id).filter(
            models.Q(visibility=KBDocument.Visibility.AGENT) | models.Q(owner_id=owner_id)
        )


class KBDocument(models.Model):
    """A knowledge-base document (L4): an upload, a pasted text or an archived artifact.

    Created in ``processing`` with its raw content in :class:`KBSource`; the worker parses,
    chunks and indexes it, then it is ``ready`` (its chunks searchable) or ``failed``
    (``error`` says why, in Chinese, for the teacher).
    """

    class Visibility(models.TextChoices):
        AGENT = "agent", _("本智能体的所有成员")
        PRIVATE = "private", _("仅自己")

    class Status(models.TextChoices):
        PROCESSING = "processing", _("处理中")
        READY = "ready", _("可用")
        FAILED = "failed", _("失败")

    class Kind(models.TextChoices):
        TXT = "txt", _("纯文本")
        MD = "md", _("Markdown")
        DOCX = "docx", _("Word 文档")
        PDF = "pdf", _("PDF")
        TEXT = "text", _("粘贴的文本")
        ARTIFACT = "artifact", _("归档的运行产物")

    tenant = models.ForeignKey("agents.Tenant", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="kb_documents")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="kb_documents",
        verbose_name=_("上传者"),
    )
    title = models.CharField(_("标题"), max_length=200)
    visibility = models.CharField(
        _("可见范围"), max_length=16, choices=Visibility.choices, default=Visibility.AGENT
    )
    status = models.CharField(
        _("状态"), max_length=16, choices=Status.choices, default=Status.PROCESSING
    )
    error = models.CharField(_("失败原因"), max_length=300, blank=True)
    kind = models.CharField(_("类型"), max_length=16, choices=Kind.choices)
    filename = models.CharField(_("文件名"), max_length=255, blank=True)
    encoding = models.CharField(_("文本编码"), max_length=32, blank=True)
    # The archived run (artifact archiving): one document per run at most.
    source_run = models.OneToOneField(
        "agents.Run",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="kb_document",
        verbose_name=_("来源运行"),
    )
    size_bytes = models.PositiveBigIntegerField(_("大小（字节）"), default=0)
    char_count = models.PositiveIntegerField(_("字数"), default=0)
    chunk_count = models.PositiveIntegerField(_("片段数"), default=0)
    attempts = models.PositiveIntegerField(_("处理次数"), default=0)
    # When the document's processing job was last enqueued (the sweeper's claim).
    enqueued_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(_("上传时间"), default=timezone.now)
    updated_at = models.DateTimeField(_("更新时间"), default=timezone.now)
    processed_at = models.DateTimeField(_("处理完成时间"), null=True, blank=True)

    objects = KBDocumentQuerySet.as_manager()

    class Meta:
        verbose_name = _("知识库文档")
        verbose_name_plural = _("知识库文档")
        indexes = [
            models.Index(fields=["tenant", "agent", "-created_at"], name="kbdoc_agent"),
            models.Index(fields=["owner", "agent", "-created_at"], name="kbdoc_owner"),
            models.Index(fields=["status", "enqueued_at"], name="kbdoc_status"),
        ]

    def __str__(self) -> str:
        return self.title


class KBSource(models.Model):
    """The raw content of a document until the worker has parsed it (then deleted)."""

    document = models.OneToOneField(
        KBDocument, on_delete=models.CASCADE, primary_key=True, related_name="source"
    )
    content = models.BinaryField()

    class Meta:
        verbose_name = _("待处理的原文件")
        verbose_name_plural = _("待处理的原文件")

    def __str__(self) -> str:
        return f"source of document {self.document_id}"


class KBChunk(models.Model):
    """One searchable passage of a ready document: red-line redacted, with its terms.

    ``index_owner`` says which in-memory index holds it: empty for a document shared with
    the agent's members (one index per agent), the owner for a private one (one per
    teacher and agent). ``terms`` is stored as recall stores an entry's.
    """

    document = models.ForeignKey(KBDocument, on_delete=models.CASCADE, related_name="chunks")
    tenant = models.ForeignKey("agents.Tenant", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="+")
    index_owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    position = models.PositiveIntegerField(_("序号"))
    heading_path = models.CharField(_("标题路径"), max_length=500, blank=True)
    text = models.TextField(_("内容"))
    terms = models.TextField(editable=False)
    tokens = models.PositiveIntegerField(_("token 数"), default=0)

    class Meta:
        verbose_name = _("知识库片段")
        verbose_name_plural = _("知识库片段")
        constraints = [
            models.UniqueConstraint(fields=["document", "position"], name="kbchunk_position"),
        ]
        indexes = [
            models.Index(fields=["tenant", "agent", "index_owner", "id"], name="kbchunk_index"),
        ]

    def __str__(self) -> str:
        return self.text[:40]


class KBIndexState(models.Model):
    """Version of one knowledge-base index, bumped in the transaction of every change.

    As :class:`RecallScope` for recall: one indexed read tells a process whether its
    in-memory index is current, which chunks to load (``max_chunk_id``) and whether any
    were removed (``chunk_count``). ``owner`` is empty for the agent's shared index.
    """

    tenant = models.ForeignKey("agents.Tenant", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    version = models.PositiveBigIntegerField(default=0)
    chunk_count = models.IntegerField(default=0)
    max_chunk_id = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = _("知识库索引版本")
        verbose_name_plural = _("知识库索引版本")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "agent"],
                condition=models.Q(owner__isnull=True),
                name="kbindex_shared_unique",
            ),
            models.UniqueConstraint(
                fields=["tenant", "agent", "owner"],
                condition=models.Q(owner__isnull=False),
                name="kbindex_private_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"kb index v{self.version} ({self.chunk_count} chunks)"
