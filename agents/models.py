"""Tenants, members, LLM providers, agents and runs: the host the memory plugs into."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Tenant(models.Model):
    """A school or a personal workspace. Everything a teacher sees is inside one."""

    name = models.CharField(_("名称"), max_length=100, unique=True)
    created_at = models.DateTimeField(_("创建时间"), auto_now_add=True)

    class Meta:
        verbose_name = _("租户")
        verbose_name_plural = _("租户")

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        TEACHER = "teacher", _("教师")
        ADMIN = "admin", _("管理员")

    tenant = models.ForeignKey(
        Tenant, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("租户")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="memberships",
        verbose_name=_("用户"),
    )
    role = models.CharField(_("角色"), max_length=16, choices=Role.choices, default=Role.TEACHER)
    created_at = models.DateTimeField(_("加入时间"), auto_now_add=True)

    class Meta:
        verbose_name = _("成员")
        verbose_name_plural = _("成员")
        constraints = [
            models.UniqueConstraint(fields=["tenant", "user"], name="membership_unique_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.tenant} ({self.role})"


class Provider(models.Model):
    """A configured LLM endpoint. The key itself never lives in the database."""

    class Kind(models.TextChoices):
        OPENAI_COMPAT = "openai_compat", _("OpenAI 兼容接口")
        OFFLINE = "offline", _("离线演示模型")

    class Locality(models.TextChoices):
        LOCAL = "local", _("本地")
        CLOUD = "cloud", _("云端")

    name = models.CharField(_("名称"), max_length=100, unique=True)
    kind = models.CharField(_("类型"), max_length=20, choices=Kind.choices)
    base_url = models.URLField(
        _("接口地址"), blank=True, help_text=_("例如 http://127.0.0.1:11434/v1")
    )
    model = models.CharField(_("模型"), max_length=200, blank=True)
    api_key_env = models.CharField(
        _("密钥环境变量名"),
        max_length=100,
        blank=True,
        help_text=_("保存 API 密钥的环境变量名称；密钥本身不存数据库。"),
    )
    locality = models.CharField(_("部署位置"), max_length=10, choices=Locality.choices)
    price_input_per_mtok = models.DecimalField(
        _("输入价格（每百万 token）"),
        max_digits=12,
        decimal_places=4,
        default=Decimal("0"),
        validators=[MinValueValidator(Decimal("0"))],
    )
    price_output_per_mtok = models.DecimalField(
        _("输出价格（每百万 token）"),
        max_digits=12,
        decimal_places=4,
        default=Decimal("0"),
        validators=[MinValueValidator(Decimal("0"))],
    )
    timeout_seconds = models.FloatField(
        _("超时（秒）"), default=60.0, validators=[MinValueValidator(0.1)]
    )
    supports_tools = models.BooleanField(
        _("支持工具调用"),
        default=True,
        help_text=_(
            "模型支持 OpenAI 兼容的 tools / tool_calls 时开启：对话中可调用知识库检索工具。"
            "模型不支持时请关闭，否则调用会被接口拒绝。"
        ),
    )
    is_memory_fallback = models.BooleanField(
        _("记忆任务的本地备用模型"),
        default=False,
        help_text=_("智能体自己的模型不可用时，后台记忆任务只可回退到这个本地模型。"),
    )
    created_at = models.DateTimeField(_("创建时间"), auto_now_add=True)

    class Meta:
        verbose_name = _("模型供应方")
        verbose_name_plural = _("模型供应方")
        constraints = [
            models.UniqueConstraint(
                fields=["is_memory_fallback"],
                condition=models.Q(is_memory_fallback=True),
                name="provider_single_memory_fallback",
            ),
            models.CheckConstraint(
                condition=models.Q(is_memory_fallback=False) | models.Q(locality="local"),
                name="provider_fallback_is_local",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_offline(self) -> bool:
        return self.kind == self.Kind.OFFLINE

    @property
    def label(self) -> str:
        """What the UI shows; the offline model is always labelled as a demo."""
        if self.is_offline:
            return str(_("离线演示模型（无需联网，仅供演示）"))
        return f"{self.name}（{self.model}）" if self.model else self.name

    def cost_of(self, *, input_tokens: int, output_tokens: int) -> Decimal:
        million = Decimal(1_000_000)
        cost = (
            Decimal(input_tokens) * self.price_input_per_mtok
            + Decimal(output_tokens) * self.price_output_per_mtok
        ) / million
        return cost.quantize(Decimal("0.000001"))


class Agent(models.Model):
    tenant = models.ForeignKey(
        Tenant, on_delete=models.CASCADE, related_name="agents", verbose_name=_("租户")
    )
    name = models.CharField(_("名称"), max_length=100)
    system_prompt = models.TextField(_("系统提示词"), blank=True)
    provider = models.ForeignKey(
        Provider, on_delete=models.PROTECT, related_name="agents", verbose_name=_("模型")
    )
    memory_provider = models.ForeignKey(
        Provider,
        on_delete=models.PROTECT,
        related_name="memory_agents",
        null=True,
        blank=True,
        verbose_name=_("记忆任务模型"),
        help_text=_("留空则后台记忆任务使用智能体自己的模型。"),
    )
    archive_artifacts = models.BooleanField(
        _("产物归档到知识库"), default=False, help_text=_("开启后，运行产物会归档为知识库文档。")
    )
    created_at = models.DateTimeField(_("创建时间"), auto_now_add=True)

    class Meta:
        verbose_name = _("智能体")
        verbose_name_plural = _("智能体")
        ordering = ["tenant_id", "name"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="agent_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def effective_memory_provider(self) -> Provider:
        return self.memory_provider or self.provider

    @property
    def memory_notice(self) -> bool:
        """True when memory jobs send this agent's conversations to another cloud vendor.

        Design v2 §2.4: the teacher is told once when compression crosses providers.
        """
        memory = self.memory_provider
        return (
            memory is not None
            and memory.pk != self.provider_id
            and memory.locality == Provider.Locality.CLOUD
        )


class RunQuerySet(models.QuerySet["Run"]):
    def finished(self) -> RunQuerySet:
        return self.filter(status__in=(Run.Status.COMPLETED, Run.Status.FAILED))

    def visible(self) -> RunQuerySet:
        """Runs not deleted by their teacher (a deleted run is only a cost row)."""
        return self.filter(deleted_at__isnull=True)


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("排队中")
        RUNNING = "running", _("运行中")
        COMPLETED = "completed", _("已完成")
        FAILED = "failed", _("失败")

    class MemoryState(models.TextChoices):
        NONE = "none", _("无")  # not finished yet
        PENDING = "pending", _("待处理")
        DONE = "done", _("已完成")
        FAILED = "failed", _("失败")

    tenant = models.ForeignKey(
        Tenant, on_delete=models.CASCADE, related_name="runs", verbose_name=_("租户")
    )
    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, related_name="runs", verbose_name=_("智能体")
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="runs",
        verbose_name=_("教师"),
    )
    # SET_NULL, not CASCADE: a deleted thread's runs stay as cost rows without text
    # (memory.services.forget), so that cost history still adds up.
    thread = models.ForeignKey(
        "memory.Thread",
        on_delete=models.SET_NULL,
        related_name="runs",
        null=True,
        blank=True,
        verbose_name=_("会话"),
    )
    input = models.TextField(_("输入"))
    output = models.TextField(_("输出"), blank=True)
    status = models.CharField(
        _("状态"), max_length=16, choices=Status.choices, default=Status.QUEUED
    )
    error_code = models.CharField(_("错误代码"), max_length=64, blank=True)
    context = models.JSONField(_("请求选项"), default=dict, blank=True)
    input_tokens = models.PositiveIntegerField(_("输入 token"), default=0)
    output_tokens = models.PositiveIntegerField(_("输出 token"), default=0)
    cost = models.DecimalField(_("成本"), max_digits=14, decimal_places=6, default=Decimal("0"))
    provider_name = models.CharField(_("使用的模型"), max_length=100, blank=True)
    # The function tools the run called, in order (runs.tools.ToolCallRecord.as_json):
    # name, arguments, status, result chunk ids and tokens. Written when the run settles.
    tool_calls = models.JSONField(_("工具调用"), default=list, blank=True)
    created_at = models.DateTimeField(_("创建时间"), default=timezone.now)
    started_at = models.DateTimeField(_("开始时间"), null=True, blank=True)
    finished_at = models.DateTimeField(_("结束时间"), null=True, blank=True)
    memory_state = models.CharField(
        _("记忆处理状态"), max_length=16, choices=MemoryState.choices, default=MemoryState.NONE
    )
    memory_attempts = models.PositiveIntegerField(_("记忆处理次数"), default=0)
    memory_error = models.CharField(_("记忆处理错误"), max_length=64, blank=True)
    memory_enqueued_at = models.DateTimeField(_("记忆任务入队时间"), null=True, blank=True)
    memory_done_at = models.DateTimeField(_("记忆处理完成时间"), null=True, blank=True)
    # Governance (memory.services.forget). Deleted: the teacher deleted the run or its
    # thread; it is hidden from every getter at once, its texts are erased by the worker,
    # and the row stays only as numbers (tokens, cost). Redacted: "forget this text"
    # replaced the text in its input or output; the run stays visible.
    deleted_at = models.DateTimeField(_("删除时间"), null=True, blank=True, editable=False)
    redacted_at = models.DateTimeField(_("遗忘处理时间"), null=True, blank=True, editable=False)

    objects = RunQuerySet.as_manager()

    class Meta:
        verbose_name = _("运行")
        verbose_name_plural = _("运行")
        indexes = [
            models.Index(fields=["agent", "-created_at"], name="run_agent_created"),
            # (thread, created_at) plus the id tie-breaker: the recent-turns read scans it
            # backwards and compression forwards, both in the cursor's total order.
            models.Index(fields=["thread", "created_at", "id"], name="run_thread_created"),
            models.Index(fields=["tenant", "owner", "-created_at"], name="run_owner_created"),
            models.Index(fields=["status", "started_at"], name="run_status_started"),
            models.Index(fields=["memory_state", "finished_at"], name="run_memory_state"),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.COMPLETED, self.Status.FAILED)


class Preference(models.Model):
    """A user's own settings. ``language`` empty: the browser's (Accept-Language)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="preference",
        verbose_name=_("用户"),
    )
    language = models.CharField(
        _("界面语言"),
        max_length=16,
        choices=settings.LANGUAGES,
        blank=True,
        help_text=_("留空则跟随浏览器的语言设置。"),
    )
    updated_at = models.DateTimeField(_("更新时间"), auto_now=True)

    class Meta:
        verbose_name = _("用户偏好")
        verbose_name_plural = _("用户偏好")

    def __str__(self) -> str:
        return f"{self.user}: {self.language or '-'}"


class RateBucket(models.Model):
    """One rate limit's bucket (agents/ratelimits.py): a teacher's runs, a school's runs.

    ``tat`` (seconds since the epoch) is the bucket's theoretical arrival time; ``step``
    and ``bound`` are the last request's emission interval and admission bound, and
    ``admitted`` its answer: the one statement that takes a request reads them back.
    """

    key = models.CharField(_("键"), max_length=200, primary_key=True)
    tat = models.FloatField(_("理论到达时间"))
    step = models.FloatField(_("间隔"))
    bound = models.FloatField(_("放行界限"))
    admitted = models.BooleanField(_("已放行"))

    class Meta:
        db_table = "agents_rate_bucket"
        verbose_name = _("限流计数")
        verbose_name_plural = _("限流计数")

    def __str__(self) -> str:
        return self.key
