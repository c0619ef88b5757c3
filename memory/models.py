"""The memory layers: threads (L1), memory-op ledger, context manifests, governance."""

from __future__ import annotations

import secrets
from datetime import date
from decimal import Decimal
from typing import Any, NoReturn, Self

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
        return self.filter(
            tenant_id=tenant_id, agent_id=agent_id, owner_id=owner_id, deleted_at__isnull=True
        )

    def visible(self) -> ThreadQuerySet:
        """Threads not deleted (a deleted thread waits for the worker to erase it)."""
        return self.filter(deleted_at__isnull=True)


class Thread(models.Model):
    """A conversation (design v2 §2.1): its runs share a rolling summary and recent turns."""

    class Status(models.TextChoices):
        ACTIVE = "active", _("进行中")
        ARCHIVED = "archived", _("已归档")

    id = models.CharField(
        _("编号"), primary_key=True, max_length=32, default=new_thread_id, editable=False
    )
    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="threads", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        "agents.Agent", on_delete=models.CASCADE, related_name="threads", verbose_name=_("智能体")
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="threads",
        verbose_name=_("教师"),
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
    compress_enqueued_at = models.DateTimeField(
        _("补做压缩入队时间"), null=True, blank=True, editable=False
    )
    # Bumped whenever a run's text leaves the thread (a run deleted, a text forgotten):
    # compression saves its summary only if the cursor *and* this version are what it
    # read, so a fold that read a text which is gone since can never be saved.
    summary_version = models.PositiveBigIntegerField(_("摘要版本"), default=0, editable=False)
    # Set when the teacher deletes the thread: hidden at once, erased by the worker.
    deleted_at = models.DateTimeField(_("删除时间"), null=True, blank=True, editable=False)

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
        "agents.Run",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="context_record",
        verbose_name=_("运行"),
    )
    messages = models.JSONField(_("发送的消息"), default=list)
    injected_text = models.TextField(_("注入的记忆"), blank=True)
    manifest = models.JSONField(_("来源清单"), default=dict)
    created_at = models.DateTimeField(_("创建时间"), default=timezone.now)

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

    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        "agents.Agent",
        on_delete=models.CASCADE,
        related_name="memory_ops",
        verbose_name=_("智能体"),
    )
    # SET_NULL: an operation's cost outlives a deleted thread (cost history adds up).
    thread = models.ForeignKey(
        Thread,
        on_delete=models.SET_NULL,
        related_name="memory_ops",
        null=True,
        blank=True,
        verbose_name=_("会话"),
    )
    run = models.ForeignKey(
        "agents.Run",
        on_delete=models.SET_NULL,
        related_name="memory_ops",
        null=True,
        blank=True,
        verbose_name=_("运行"),
    )
    kind = models.CharField(_("类型"), max_length=16, choices=Kind.choices)
    provider = models.ForeignKey(
        "agents.Provider",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("模型供应方"),
    )
    provider_name = models.CharField(_("模型"), max_length=100, blank=True)
    input_tokens = models.PositiveIntegerField(_("输入 token"), default=0)
    output_tokens = models.PositiveIntegerField(_("输出 token"), default=0)
    cost = models.DecimalField(_("成本"), max_digits=14, decimal_places=6, default=Decimal("0"))
    success = models.BooleanField(_("成功"), default=True)
    error_code = models.CharField(_("错误代码"), max_length=64, blank=True)
    created_at = models.DateTimeField(_("时间"), default=timezone.now)

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
    def for_scope(self, *, tenant_id: int, agent_id: int, owner_id: int) -> Self:
        return self.filter(tenant_id=tenant_id, agent_id=agent_id, owner_id=owner_id)


class FactQuerySet(ScopedQuerySet):
    """Facts; ``valid_until`` is the last day a fact is valid (inclusive)."""

    def live(self, *, today: date) -> Self:
        return self.filter(models.Q(valid_until__isnull=True) | models.Q(valid_until__gte=today))

    def expired(self, *, today: date) -> Self:
        return self.filter(valid_until__lt=today)


class CoreFact(models.Model):
    """A long-term fact the teacher confirmed (L2). Only a person creates one."""

    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        "agents.Agent",
        on_delete=models.CASCADE,
        related_name="core_facts",
        verbose_name=_("智能体"),
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="core_facts",
        verbose_name=_("教师"),
    )
    text = models.CharField(_("事实"), max_length=MAX_FACT_CHARS)
    source_run = models.ForeignKey(
        "agents.Run",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("来源运行"),
    )
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="+",
        verbose_name=_("确认人"),
    )
    confirmed_at = models.DateTimeField(_("确认时间"), default=timezone.now)
    # Touched whenever the fact is injected; the least recently used is evicted first.
    last_used_at = models.DateTimeField(_("最近使用"), null=True, blank=True)
    updated_at = models.DateTimeField(_("更新时间"), auto_now=True)
    # The last day the fact holds (a term's end); empty: long-term. An expired fact is
    # never injected and does not count towards the cap.
    valid_until = models.DateField(_("有效期至"), null=True, blank=True)
    # When the sweeper recorded the expiry (one audit event per expiry; a renewal clears it).
    expired_at = models.DateTimeField(_("过期记录时间"), null=True, blank=True, editable=False)

    objects = FactQuerySet.as_manager()

    class Meta:
        verbose_name = _("核心记忆")
        verbose_name_plural = _("核心记忆")
        indexes = [models.Index(fields=["tenant", "agent", "owner"], name="fact_scope")]

    def __str__(self) -> str:
        return self.text


class CoreCandidate(models.Model):
    """A fact the system proposes; pending until a person confirms or deletes it."""

    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        "agents.Agent",
        on_delete=models.CASCADE,
        related_name="core_candidates",
        verbose_name=_("智能体"),
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="core_candidates",
        verbose_name=_("教师"),
    )
    fact = models.CharField(_("候选事实"), max_length=MAX_FACT_CHARS)
    # Normalised text: equal keys in one scope are the same candidate (merged).
    fact_key = models.CharField(_("归一化文本"), max_length=300, editable=False)
    confidence = models.FloatField(_("置信度"), default=0.5)
    evidence = models.CharField(_("原话依据"), max_length=500)
    source_run = models.ForeignKey(
        "agents.Run",
        on_delete=models.CASCADE,
        related_name="core_candidates",
        verbose_name=_("来源运行"),
    )
    seen_count = models.PositiveIntegerField(_("提及次数"), default=1)
    created_at = models.DateTimeField(_("提出时间"), default=timezone.now)
    # Proposed validity, taken by the fact on confirmation unless the person chooses.
    valid_until = models.DateField(_("有效期至"), null=True, blank=True)

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

    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        "agents.Agent", on_delete=models.CASCADE, related_name="+", verbose_name=_("智能体")
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        related_name="+",
        verbose_name=_("教师"),
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

    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        "agents.Agent", on_delete=models.CASCADE, related_name="+", verbose_name=_("智能体")
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", verbose_name=_("教师")
    )
    run = models.OneToOneField(
        "agents.Run", on_delete=models.CASCADE, related_name="recall_entry", verbose_name=_("运行")
    )
    thread = models.ForeignKey(
        Thread,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("会话"),
    )
    text = models.TextField(_("摘录"))
    terms = models.TextField(_("检索词"), editable=False)
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

    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        "agents.Agent", on_delete=models.CASCADE, related_name="+", verbose_name=_("智能体")
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", verbose_name=_("教师")
    )
    version = models.PositiveBigIntegerField(_("版本"), default=0)
    entry_count = models.PositiveIntegerField(_("条目数"), default=0)
    max_entry_id = models.BigIntegerField(_("最大条目编号"), default=0)
    # Bumped (with ``version``) whenever an entry is removed, by any path: a process whose
    # index is of another epoch drops the entries that are gone, so no process keeps
    # serving a deleted entry (memory.signals, memory.services.recall).
    epoch = models.PositiveBigIntegerField(_("删除纪元"), default=0)

    class Meta:
        verbose_name = _("情景记忆范围")
        verbose_name_plural = _("情景记忆范围")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "agent", "owner"], name="recall_scope_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"recall scope v{self.version} ({self.entry_count} entries)"


class AuditQuerySet(models.QuerySet["MemoryAuditEvent"]):
    """Append-only: rows are added, never changed or removed through the ORM."""

    def update(self, **kwargs: Any) -> NoReturn:
        raise TypeError("memory audit events are append-only")

    def delete(self) -> NoReturn:
        raise TypeError("memory audit events are append-only")


class MemoryAuditEvent(models.Model):
    """Who did what to which memory item, and when (issue #14). Never the text.

    Edits carry keyed hashes (HMAC with the installation's secret) of the text before and
    after, so that two events can be compared without the text being guessable from them.
    The references to people, agents and items are kept as plain ids (no database
    constraint, ``DO_NOTHING``): deleting a teacher or an item leaves its trail intact.
    """

    class Action(models.TextChoices):
        CONFIRM = "confirm", _("确认")
        REJECT = "reject", _("拒绝")
        EDIT = "edit", _("编辑")
        DELETE = "delete", _("删除")
        EXPIRE = "expire", _("过期")
        FORGET = "forget", _("遗忘")
        EXPORT = "export", _("导出")
        IMPORT = "import", _("导入")

    class ObjectType(models.TextChoices):
        FACT = "fact", _("核心记忆")
        CANDIDATE = "candidate", _("待确认记忆")
        THREAD = "thread", _("会话")
        RUN = "run", _("运行")
        MEMORY = "memory", _("全部记忆")
        JOB = "job", _("后台任务")

    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        "agents.Agent",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("智能体"),
    )
    # Whose memory it is (empty for a tenant-wide action).
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("记忆所属"),
    )
    # Who did it (empty: the system, e.g. an expiry found by the sweeper, or an operator's
    # command line).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("操作者"),
    )
    action = models.CharField(_("操作"), max_length=16, choices=Action.choices)
    object_type = models.CharField(_("对象类型"), max_length=16, choices=ObjectType.choices)
    object_id = models.CharField(_("对象编号"), max_length=64, blank=True)
    before_hash = models.CharField(_("修改前摘要"), max_length=64, blank=True)
    after_hash = models.CharField(_("修改后摘要"), max_length=64, blank=True)
    # Numbers only (counts per layer, the validity date chosen): never a text.
    detail = models.JSONField(_("详情"), default=dict, blank=True)
    created_at = models.DateTimeField(_("时间"), default=timezone.now)

    objects = AuditQuerySet.as_manager()

    class Meta:
        verbose_name = _("记忆审计事件")
        verbose_name_plural = _("记忆审计事件")
        indexes = [
            models.Index(fields=["tenant", "agent", "owner", "-created_at"], name="audit_scope"),
            models.Index(fields=["tenant", "-created_at"], name="audit_tenant"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action} {self.object_type} {self.object_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise TypeError("memory audit events are append-only")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("memory audit events are append-only")


class MemoryJob(models.Model):
    """A governance job in the background worker: delete a thread or a run, forget a text.

    The caller polls it (``GET /api/memory/jobs/{id}``). ``params`` holds what the worker
    needs; a text to forget is kept only until the job is done, then cleared.
    ``counts`` says what was removed or redacted, per layer.
    """

    class Kind(models.TextChoices):
        THREAD_DELETE = "thread_delete", _("删除会话")
        RUN_DELETE = "run_delete", _("删除运行")
        FORGET = "forget", _("遗忘文本")

    class Status(models.TextChoices):
        QUEUED = "queued", _("排队中")
        RUNNING = "running", _("进行中")
        DONE = "done", _("已完成")
        FAILED = "failed", _("失败")

    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("租户")
    )
    # Empty agent and owner: a tenant-wide forget (a tenant admin, from the admin).
    agent = models.ForeignKey(
        "agents.Agent",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("智能体"),
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("记忆所属"),
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("发起人"),
    )
    kind = models.CharField(_("类型"), max_length=16, choices=Kind.choices)
    status = models.CharField(
        _("状态"), max_length=16, choices=Status.choices, default=Status.QUEUED
    )
    params = models.JSONField(_("参数"), default=dict, blank=True, editable=False)
    counts = models.JSONField(_("处理数量"), default=dict, blank=True)
    error = models.CharField(_("错误"), max_length=64, blank=True)
    attempts = models.PositiveIntegerField(_("尝试次数"), default=0)
    created_at = models.DateTimeField(_("创建时间"), default=timezone.now)
    enqueued_at = models.DateTimeField(_("入队时间"), null=True, blank=True, editable=False)
    finished_at = models.DateTimeField(_("完成时间"), null=True, blank=True)

    class Meta:
        verbose_name = _("记忆治理任务")
        verbose_name_plural = _("记忆治理任务")
        indexes = [models.Index(fields=["status", "enqueued_at"], name="memjob_status")]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"


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
        MD = "md", _("Markdown 文本")
        DOCX = "docx", _("Word 文档")
        PDF = "pdf", _("PDF 文件")
        TEXT = "text", _("粘贴的文本")
        ARTIFACT = "artifact", _("归档的运行产物")

    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        "agents.Agent",
        on_delete=models.CASCADE,
        related_name="kb_documents",
        verbose_name=_("智能体"),
    )
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
    enqueued_at = models.DateTimeField(_("入队时间"), null=True, blank=True, editable=False)
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
        KBDocument,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="source",
        verbose_name=_("文档"),
    )
    content = models.BinaryField(_("内容"))

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

    document = models.ForeignKey(
        KBDocument, on_delete=models.CASCADE, related_name="chunks", verbose_name=_("文档")
    )
    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        "agents.Agent", on_delete=models.CASCADE, related_name="+", verbose_name=_("智能体")
    )
    index_owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("私有索引所属"),
    )
    position = models.PositiveIntegerField(_("序号"))
    heading_path = models.CharField(_("标题路径"), max_length=500, blank=True)
    text = models.TextField(_("内容"))
    terms = models.TextField(_("检索词"), editable=False)
    tokens = models.PositiveIntegerField(_("token 数"), default=0)
    # The chunk's injected line prepared when written (memory.services.kb.kb_line_prepare),
    # used only while ``line_stamp`` matches this process's rules and the chunk's texts.
    line = models.TextField(_("注入行"), blank=True, editable=False)
    line_tokens = models.PositiveIntegerField(_("注入行 token 数"), default=0, editable=False)
    line_cut = models.BooleanField(_("注入行已截断"), default=False, editable=False)
    line_stamp = models.CharField(_("注入行印记"), max_length=32, blank=True, editable=False)

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

    tenant = models.ForeignKey(
        "agents.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        "agents.Agent", on_delete=models.CASCADE, related_name="+", verbose_name=_("智能体")
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("教师"),
    )
    version = models.PositiveBigIntegerField(_("版本"), default=0)
    chunk_count = models.IntegerField(_("片段数"), default=0)
    max_chunk_id = models.BigIntegerField(_("最大片段编号"), default=0)

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
