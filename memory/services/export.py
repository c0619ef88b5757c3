"""Export: everything the memory holds about one teacher with one agent (right of access).

One JSON document, ``GET /api/agents/{id}/memory/export`` and the memory panel's 导出.
The format (``format`` = :data:`EXPORT_FORMAT`, ``version`` = :data:`EXPORT_VERSION`;
a later version only adds keys):

- ``exported_at``; ``tenant`` {id, name}; ``agent`` {id, name}; ``owner`` {id, username}
- ``facts``: id, text, valid_until (date or null: long-term), expired, confirmed_at,
  confirmed_by (username or null), last_used_at, source_run_id
- ``candidates``: id, fact, evidence, confidence, seen_count, valid_until, source_run_id,
  created_at
- ``threads``: id, title, status, created_at, updated_at, rolling_summary,
  summary_upto_at, summary_upto_run_id, and ``runs`` (oldest first): id, status, input,
  output, redacted (a text was forgotten in it), created_at, finished_at, input_tokens,
  output_tokens, cost (a decimal string)
- ``recall_entries``: id, run_id, thread_id, text, created_at
- ``kb_documents`` (metadata only, oldest first): the knowledge-base documents the teacher
  uploaded with the agent, private and shared (archived artifacts among them): id,
  title, visibility (``agent`` | ``private``), status (``processing`` | ``ready`` |
  ``failed``), kind, size_bytes, chunk_count, source_run_id (an archived artifact's run,
  else null), created_at, updated_at, processed_at. Not their text: the documents
  themselves are the teacher's files (the /kb/ page shows them)
- ``audit_events`` (newest first): id, action, object_type, object_id, actor (username
  or null for the system), created_at, before_hash, after_hash, detail

Times are ISO 8601 in the server's time zone. Deleted threads and runs are not included
(nothing of them is held but their cost).

The export itself is recorded as an audit event (and is the first of ``audit_events``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Prefetch
from django.utils import timezone

from agents.models import Agent, Run
from memory.models import CoreFact, KBDocument, RecallEntry, Thread
from memory.scope import Scope
from memory.selectors import audit_events_for
from memory.services.audit import Action, ObjectType, audit_record_scoped
from memory.services.core import candidates_for_scope

EXPORT_FORMAT = "agent-memory.export"
EXPORT_VERSION = 1

Section = Callable[[Scope], list[dict[str, Any]]]


def _time(value: datetime | None) -> str | None:
    return timezone.localtime(value).isoformat() if value is not None else None


def _day(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _facts(scope: Scope) -> list[dict[str, Any]]:
    today = timezone.localdate()
    facts = (
        CoreFact.objects.for_scope(**scope.filter_kwargs())
        .select_related("confirmed_by")
        .order_by("confirmed_at", "pk")
    )
    return [
        {
            "id": fact.pk,
            "text": fact.text,
            "valid_until": _day(fact.valid_until),
            "expired": fact.valid_until is not None and fact.valid_until < today,
            "confirmed_at": _time(fact.confirmed_at),
            "confirmed_by": fact.confirmed_by.get_username() if fact.confirmed_by else None,
            "last_used_at": _time(fact.last_used_at),
            "source_run_id": fact.source_run_id,
        }
        for fact in facts
    ]


def _candidates(scope: Scope) -> list[dict[str, Any]]:
    candidates = candidates_for_scope(scope=scope).order_by("created_at", "pk")
    return [
        {
            "id": c.pk,
            "fact": c.fact,
            "evidence": c.evidence,
            "confidence": c.confidence,
            "seen_count": c.seen_count,
            "valid_until": _day(c.valid_until),
            "source_run_id": c.source_run_id,
            "created_at": _time(c.created_at),
        }
        for c in candidates
    ]


def _run(run: Run) -> dict[str, Any]:
    return {
        "id": run.pk,
        "status": run.status,
        "input": run.input,
        "output": run.output,
        "redacted": run.redacted_at is not None,
        "created_at": _time(run.created_at),
        "finished_at": _time(run.finished_at),
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "cost": str(run.cost),
    }


def _threads(scope: Scope) -> list[dict[str, Any]]:
    runs = Run.objects.visible().order_by("created_at", "pk")
    threads = (
        Thread.objects.for_scope(**scope.filter_kwargs())
        .order_by("created_at", "pk")
        .prefetch_related(Prefetch("runs", queryset=runs))
    )
    return [
        {
            "id": thread.pk,
            "title": thread.title,
            "status": thread.status,
            "created_at": _time(thread.created_at),
            "updated_at": _time(thread.updated_at),
            "rolling_summary": thread.rolling_summary,
            "summary_upto_at": _time(thread.summary_upto_at),
            "summary_upto_run_id": thread.summary_upto_run_id,
            "runs": [_run(run) for run in thread.runs.all()],
        }
        for thread in threads
    ]


def _recall_entries(scope: Scope) -> list[dict[str, Any]]:
    entries = RecallEntry.objects.filter(
        **scope.filter_kwargs(), run__deleted_at__isnull=True
    ).order_by("created_at", "pk")
    return [
        {
            "id": e.pk,
            "run_id": e.run_id,
            "thread_id": e.thread_id,
            "text": e.text,
            "created_at": _time(e.created_at),
        }
        for e in entries
    ]


def _kb_documents(scope: Scope) -> list[dict[str, Any]]:
    documents = KBDocument.objects.filter(**scope.filter_kwargs()).order_by("created_at", "pk")
    return [
        {
            "id": d.pk,
            "title": d.title,
            "visibility": d.visibility,
            "status": d.status,
            "kind": d.kind,
            "size_bytes": d.size_bytes,
            "chunk_count": d.chunk_count,
            "source_run_id": d.source_run_id,
            "created_at": _time(d.created_at),
            "updated_at": _time(d.updated_at),
            "processed_at": _time(d.processed_at),
        }
        for d in documents
    ]


def _audit_events(scope: Scope) -> list[dict[str, Any]]:
    events = list(audit_events_for(scope=scope))
    actor_ids = {e.actor_id for e in events if e.actor_id is not None}
    names = dict(get_user_model().objects.filter(pk__in=actor_ids).values_list("pk", "username"))
    return [
        {
            "id": e.pk,
            "action": e.action,
            "object_type": e.object_type,
            "object_id": e.object_id,
            "actor": names.get(e.actor_id) if e.actor_id is not None else None,
            "created_at": _time(e.created_at),
            "before_hash": e.before_hash,
            "after_hash": e.after_hash,
            "detail": e.detail,
        }
        for e in events
    ]


# Section key -> builder, in document order.
_SECTIONS: dict[str, Section] = {
    "facts": _facts,
    "candidates": _candidates,
    "threads": _threads,
    "recall_entries": _recall_entries,
    "kb_documents": _kb_documents,
    "audit_events": _audit_events,
}


def memory_export(*, agent: Agent, owner_id: int, actor_id: int) -> dict[str, Any]:
    """The export document of ``owner_id``'s memory with ``agent`` (see the module doc)."""
    scope = Scope.for_agent(agent, owner_id=owner_id)
    audit_record_scoped(
        scope=scope, action=Action.EXPORT, object_type=ObjectType.MEMORY, actor_id=actor_id
    )
    owner = get_user_model().objects.get(pk=owner_id)
    document: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": _time(timezone.now()),
        "tenant": {"id": agent.tenant_id, "name": agent.tenant.name},
        "agent": {"id": agent.pk, "name": agent.name},
        "owner": {"id": owner.pk, "username": owner.get_username()},
    }
    for key, build in _SECTIONS.items():
        document[key] = build(scope)
    return document
