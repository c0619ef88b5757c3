"""Import of the old platform's memory: ``core_memory.json`` and ``recall_log.jsonl``.

One workflow, :func:`legacy_import`, called by ``manage.py import_legacy`` and by the
admin's upload on an agent (an operator's actions: never the worker, never a model —
tests/memory/test_promotion_path.py). Reading the files is :mod:`memory.legacy`.

- **Core facts** are imported as confirmed facts (people wrote them), but each passes
  the red line first: a blocked one is refused and reported by line, never stored (its
  categories are counted in the red-line audit, as for any fact). Facts equal to one the
  teacher already has (or to an earlier line) are duplicates. Only live facts count
  towards the cap; lines past it are reported as over capacity.
- **Recall lines** become completed runs, dated by their timestamps, in one archived
  thread per scope titled 导入的历史, each with its recall entry (red-line redacted like
  every entry). The thread's summary cursor is set past them: imported history is
  recalled, never sent to a model to be summarised.
- **Idempotent**: a second import of the same files adds nothing (facts by their key,
  runs by their timestamp and texts).
- **No half import**: each file is one transaction; an unreadable file imports nothing,
  unreadable lines are reported and skipped. A dry run does all of it and rolls back,
  so its report is exactly what the import would do.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.models import Agent, Membership, Run
from memory import legacy
from memory.factkey import near_equal
from memory.models import MAX_FACT_CHARS, CoreFact, MemoryAuditEvent, RedlineAudit, Thread
from memory.redline import PLACEHOLDERS, Category, scan
from memory.scope import Scope
from memory.services.audit import Action, ObjectType, audit_record_scoped, redline_audit_record
from memory.services.facts import facts_scope_lock
from memory.services.recall import recall_entries_create

IMPORT_THREAD_TITLE = "导入的历史"
IMPORT_PROVIDER_NAME = "legacy-import"


class ImportRejected(ValueError):
    """The import cannot start (the user is not a member of the agent's tenant, …)."""


def unreadable_reason(code: str) -> str:
    """A person's words for :mod:`memory.legacy`'s reason codes."""
    reasons = {
        legacy.NOT_TEXT: _("不是事实文本"),
        legacy.EMPTY: _("内容为空"),
        legacy.NOT_JSON: _("不是有效的 JSON"),
        legacy.NOT_OBJECT: _("不是 JSON 对象"),
        legacy.NO_TIMESTAMP: _("缺少可读的时间（ts、time 或 created_at）"),
        legacy.NO_INPUT: _("缺少输入（input、query 或 prompt）"),
        legacy.OUTPUT_NOT_TEXT: _("输出不是文本"),
        legacy.TOO_LONG: _("内容过长"),
    }
    return str(reasons.get(code, code))


@dataclass
class FileReport:
    """What happened to each line of one file (line numbers, 1-based)."""

    name: str
    imported: list[int] = field(default_factory=list)
    duplicates: list[int] = field(default_factory=list)
    # (line, red-line categories): refused, never stored.
    refused: list[tuple[int, list[str]]] = field(default_factory=list)
    unreadable: list[tuple[int, str]] = field(default_factory=list)
    over_capacity: list[int] = field(default_factory=list)
    # The whole file could not be read: nothing of it was imported.
    error: str = ""

    def counts(self) -> dict[str, int]:
        return {
            "imported": len(self.imported),
            "duplicates": len(self.duplicates),
            "refused": len(self.refused),
            "unreadable": len(self.unreadable),
            "over_capacity": len(self.over_capacity),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.name,
            "error": self.error,
            **self.counts(),
            "lines": {
                "imported": self.imported,
                "duplicates": self.duplicates,
                "refused": [{"line": n, "categories": c} for n, c in self.refused],
                "unreadable": [{"line": n, "reason": r} for n, r in self.unreadable],
                "over_capacity": self.over_capacity,
            },
        }


@dataclass
class ImportReport:
    dry_run: bool
    files: list[FileReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.error for f in self.files)

    def as_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "files": [f.as_dict() for f in self.files]}


class _DryRun(Exception):
    """Raised inside a file's transaction to roll a dry run back."""


def legacy_import(
    *,
    agent: Agent,
    owner: AbstractBaseUser,
    core: bytes | None = None,
    recall: bytes | None = None,
    dry_run: bool = False,
    actor_id: int | None = None,
    core_name: str = "core_memory.json",
    recall_name: str = "recall_log.jsonl",
) -> ImportReport:
    """Import the files into ``owner``'s memory with ``agent`` (see the module docstring).

    ``actor_id``: the administrator who uploaded the files (None for the command line);
    recorded as the confirming person of imported facts and in the audit events.
    Raises :class:`ImportRejected` if ``owner`` is not a member of the agent's tenant.
    """
    if not Membership.objects.filter(user_id=owner.pk, tenant_id=agent.tenant_id).exists():
        raise ImportRejected(_("该用户不是这个智能体所在学校的成员。"))
    scope = Scope.for_agent(agent, owner_id=int(owner.pk))
    report = ImportReport(dry_run=dry_run)
    if core is not None:
        report.files.append(
            _in_transaction(core_name, dry_run, lambda r: _core(scope, core, r, actor_id))
        )
    if recall is not None:
        report.files.append(
            _in_transaction(recall_name, dry_run, lambda r: _recall(scope, recall, r, actor_id))
        )
    return report


def _in_transaction(name: str, dry_run: bool, body: Any) -> FileReport:
    report = FileReport(name=name)
    try:
        with transaction.atomic():
            body(report)
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    except legacy.LegacyFileError as exc:
        where = _("（第 %(n)d 行）") % {"n": exc.line} if exc.line else ""
        report = FileReport(name=name, error=f"{exc}{where}")
    return report


def _core(scope: Scope, data: bytes, report: FileReport, actor_id: int | None) -> None:
    parsed = legacy.parse_core(legacy.decode(data))
    report.unreadable.extend((u.line, unreadable_reason(u.reason)) for u in parsed.unreadable)
    facts_scope_lock(scope=scope)
    facts = CoreFact.objects.for_scope(**scope.filter_kwargs())
    known = list(facts.values_list("text", flat=True))
    live = facts.live(today=timezone.localdate()).count()
    blocked: Counter[str] = Counter()
    now = timezone.now()
    for item in parsed.items:
        if len(item.text) > MAX_FACT_CHARS:
            report.unreadable.append((item.line, unreadable_reason(legacy.TOO_LONG)))
            continue
        hits = scan(item.text)
        if hits:
            categories = sorted({hit.category.value for hit in hits})
            blocked.update(hit.category.value for hit in hits)
            report.refused.append((item.line, categories))
            continue
        if any(near_equal(text, item.text) for text in known):
            report.duplicates.append(item.line)
            continue
        if live >= settings.CORE_FACTS_MAX:
            report.over_capacity.append(item.line)
            continue
        fact = CoreFact.objects.create(
            **scope.filter_kwargs(), text=item.text, confirmed_by_id=actor_id, confirmed_at=now
        )
        audit_record_scoped(
            scope=scope,
            action=Action.IMPORT,
            object_type=ObjectType.FACT,
            object_id=fact.pk,
            actor_id=actor_id,
            after=item.text,
            detail={"line": item.line},
        )
        known.append(item.text)
        live += 1
        report.imported.append(item.line)
    if blocked:
        redline_audit_record(scope=scope, source=RedlineAudit.Source.FACT, counts=blocked)
    report.unreadable.sort()
    _audit_file(scope, report, actor_id, kind="core")


def _import_thread_id(scope: Scope) -> str:
    """One import thread per scope, with a stable id (found again by the next import)."""
    key = f"legacy-import:{scope.tenant_id}:{scope.agent_id}:{scope.owner_id}"
    return "th_" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _import_thread(scope: Scope, first_at: datetime) -> Thread:
    thread_id = _import_thread_id(scope)
    thread = Thread.objects.filter(pk=thread_id).first()
    if thread is not None and thread.deleted_at is not None:
        raise ImportRejected(_("上次导入的历史正在删除，请稍后再试。"))
    if thread is None:
        thread = Thread.objects.create(
            pk=thread_id,
            **scope.filter_kwargs(),
            title=IMPORT_THREAD_TITLE,
            status=Thread.Status.ARCHIVED,
            created_at=first_at,
            updated_at=timezone.now(),
        )
    return thread


def _recall(scope: Scope, data: bytes, report: FileReport, actor_id: int | None) -> None:
    parsed = legacy.parse_recall(
        legacy.decode(data),
        tz=timezone.get_current_timezone(),
        max_chars=settings.RUN_INPUT_MAX_CHARS,
    )
    report.unreadable.extend((u.line, unreadable_reason(u.reason)) for u in parsed.unreadable)
    if parsed.items:
        thread = _import_thread(scope, min(item.at for item in parsed.items))
        seen = set(
            Run.objects.filter(thread_id=thread.pk).values_list("created_at", "input", "output")
        )
        created: list[Run] = []
        for item in parsed.items:
            key = (item.at, item.input, item.output)
            if key in seen:
                report.duplicates.append(item.line)
                continue
            seen.add(key)
            created.append(
                Run(
                    **scope.filter_kwargs(),
                    thread=thread,
                    input=item.input,
                    output=item.output,
                    status=Run.Status.COMPLETED,
                    provider_name=IMPORT_PROVIDER_NAME,
                    created_at=item.at,
                    started_at=item.at,
                    finished_at=item.at,
                    memory_state=Run.MemoryState.DONE,
                    memory_done_at=timezone.now(),
                )
            )
            report.imported.append(item.line)
        # Bulk: a log of thousands of lines is one insert of runs and one of entries.
        created = Run.objects.bulk_create(created, batch_size=500)
        recall_entries_create(scope=scope, runs=created)
        _cursor_past_imported(thread)
    report.unreadable.sort()
    _audit_file(scope, report, actor_id, kind="recall")


def _cursor_past_imported(thread: Thread) -> None:
    """The summary cursor on the thread's last run: nothing imported is ever folded."""
    last = (
        Run.objects.filter(thread_id=thread.pk)
        .order_by("-created_at", "-pk")
        .values_list("created_at", "pk")
        .first()
    )
    if last is None:
        return
    if (
        thread.summary_upto_at is None
        or (
            thread.summary_upto_at,
            thread.summary_upto_run_id or 0,
        )
        < last
    ):
        Thread.objects.filter(pk=thread.pk).update(
            summary_upto_at=last[0], summary_upto_run_id=last[1]
        )


def _audit_file(
    scope: Scope, report: FileReport, actor_id: int | None, *, kind: str
) -> MemoryAuditEvent:
    return audit_record_scoped(
        scope=scope,
        action=Action.IMPORT,
        object_type=ObjectType.MEMORY,
        actor_id=actor_id,
        detail={"file": kind, **report.counts()},
    )


def report_lines(report: ImportReport) -> Iterable[str]:
    """The report as lines of text, for the command and the admin."""
    if report.dry_run:
        yield _("试运行：以下为将会导入的结果，未写入任何数据。")
    for file in report.files:
        if file.error:
            yield _("%(file)s：无法读取，未导入任何内容：%(error)s") % {
                "file": file.name,
                "error": file.error,
            }
            continue
        yield _(
            "%(file)s：导入 %(imported)d 条，重复跳过 %(duplicates)d 条，红线拒绝 %(refused)d 条，"
            "无法读取 %(unreadable)d 行，超出容量 %(over_capacity)d 条。"
        ) % {"file": file.name, **file.counts()}
        for line, categories in file.refused:
            yield _("  第 %(n)d 行：%(what)s，未导入") % {
                "n": line,
                "what": "、".join(PLACEHOLDERS[Category(c)] for c in categories),
            }
        for line, reason in file.unreadable:
            yield _("  第 %(n)d 行：无法读取（%(why)s）") % {"n": line, "why": reason}
        if file.duplicates:
            yield _("  重复：第 %(lines)s 行") % {"lines": _joined(file.duplicates)}
        if file.over_capacity:
            yield _("  超出容量：第 %(lines)s 行") % {"lines": _joined(file.over_capacity)}


def _joined(lines: list[int]) -> str:
    return "、".join(str(n) for n in lines)
