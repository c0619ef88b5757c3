"""Forgetting that reaches every layer: delete a thread, delete a run, forget a text.

Each workflow is one service in two halves.

- **The request** (:func:`thread_delete`, :func:`run_delete`, :func:`memory_forget`,
  :func:`tenant_forget`; the API, the panel and the admin call them): one short
  transaction hides what is deleted at once (every getter, the read path and recall
  search skip it from the commit on), records the audit event, and creates the
  :class:`~memory.models.MemoryJob` and its queue task together (ORM broker: they commit
  or roll back as one).
- **The cascade** (:func:`memory_job_process`, in the worker): the workflow's layer
  steps, in order, each idempotent (a redelivered or repeated job removes nothing twice
  and counts only what it removed), then the job's counts per layer. No step calls an
  LLM inside a transaction; only a run deletion calls one, to rebuild a summary.

What each workflow removes, layer by layer (the issue's note; README "Governance"):

==================  ==================================================================
delete a thread     L0/L1 runs: input, output, options and tool calls erased (the rows
                    stay, as tokens and cost only, out of any thread); run context manifests of
                    the thread's runs, and any other manifest of the scope that showed
                    one of them (recall, continue); L3 their recall entries; L2 the
                    candidates proposed from them (confirmed facts stay: a person chose
                    them); L1 the thread, its title and summary. Memory operations stay
                    (numbers, no text), out of the thread.
delete a run        the run's texts (the row stays as cost; a thread title made from
                    them is remade from the next run), its manifest and every
                    manifest that showed it (thread turns, recall, continue, a summary
                    that covered it); its recall entry; its candidates; and if the
                    thread's summary covered it, the summary is cleared and rebuilt from
                    the remaining runs (compare-and-set: ``summary_version``).
forget a text       in the teacher's memory with one agent (or a whole tenant, for its
                    administrator): facts and candidates that mention it are deleted;
                    run inputs, outputs and tool-call arguments, thread titles and
                    summaries, and what runs were given (messages, the calls in their
                    manifests) are redacted in place (runs marked ``redacted_at``); the
                    recall entries that mention it or come from a redacted run are
                    removed and rebuilt from the redacted run; L4 the teacher's private
                    knowledge-base documents (uploads and archived artifacts; for a
                    tenant, every private document of it) whose title or any chunk
                    mentions it are deleted whole.
==================  ==================================================================

L4 in the two deletions: the archived knowledge-base artifacts of the runs (documents
whose ``source_run`` is one of them) are deleted with their chunks. Every KB deletion goes
through :func:`~memory.services.kb_documents.kb_document_delete`, which bumps the
index's version: every process's next search drops the chunks, and a search never
returns a chunk of a deleted document even from an index that has not caught up.

Forgetting a text *deletes* a private document that mentions it rather than redacting
its chunks: a chunk edited in place keeps its id, and an index that loads by id would
keep its old terms (the text could still be found by searching for it); a deletion is
seen the same way by every process. Shared (``agent``) documents are not touched: they
are the school's material, not one teacher's memory.

Nothing here creates or edits a fact (tests/memory/test_promotion_path.py): it only
deletes them.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from agents.models import Run
from agents.selectors import User, actor_id, is_tenant_admin
from memory.models import (
    CoreCandidate,
    CoreFact,
    KBChunk,
    KBDocument,
    MemoryJob,
    RecallEntry,
    RunContext,
    Thread,
)
from memory.scope import Scope
from memory.services.audit import Action, ObjectType, audit_record
from memory.services.compression import thread_compress
from memory.services.jobs import governance_job_enqueue
from memory.services.kb_documents import kb_document_delete
from memory.services.llm import MemoryDeferred
from memory.services.recall import recall_entries_delete, recall_upsert
from memory.services.threads import thread_title_from
from memory.textmatch import MAX_NEEDLE_CHARS, MIN_NEEDLE_CHARS, TextMatcher, needle_length

logger = logging.getLogger(__name__)

ERROR_RUN_DELETED = "run_deleted"
Counts = Counter[str]


class ForgetRejected(ValueError):
    """The text cannot be forgotten as given (too short to be a mention, too long)."""


# -- requests -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Whose:
    """Whose memory a request is about (no agent and owner: a whole tenant)."""

    tenant_id: int
    agent_id: int | None
    owner_id: int | None

    @classmethod
    def of(cls, obj: Thread | Run) -> _Whose:
        return cls(tenant_id=obj.tenant_id, agent_id=obj.agent_id, owner_id=obj.owner_id)


def _job_request(
    *,
    kind: str,
    whose: _Whose,
    actor_id: int,
    params: dict[str, Any],
    action: str,
    object_type: str,
    object_id: object = None,
) -> MemoryJob:
    """The job row, its queue task and the request's audit event (call inside the
    request's transaction; the event names the job, or the object if there is one)."""
    job = MemoryJob.objects.create(
        kind=kind,
        tenant_id=whose.tenant_id,
        agent_id=whose.agent_id,
        owner_id=whose.owner_id,
        actor_id=actor_id,
        params=params,
        enqueued_at=timezone.now(),
    )
    governance_job_enqueue(job_id=job.pk)
    detail: dict[str, Any] = {"job_id": job.pk}
    if kind == MemoryJob.Kind.FORGET:
        detail["tenant_wide"] = whose.owner_id is None
    audit_record(
        tenant_id=whose.tenant_id,
        agent_id=whose.agent_id,
        owner_id=whose.owner_id,
        actor_id=actor_id,
        action=action,
        object_type=object_type,
        object_id=job.pk if object_id is None else object_id,
        detail=detail,
    )
    return job


def thread_delete(*, thread: Thread, actor_id: int) -> MemoryJob:
    """Delete a thread: hidden now with its runs, erased layer by layer by the worker."""
    now = timezone.now()
    with transaction.atomic():
        Thread.objects.filter(pk=thread.pk, deleted_at__isnull=True).update(deleted_at=now)
        Run.objects.filter(thread_id=thread.pk, deleted_at__isnull=True).update(deleted_at=now)
        return _job_request(
            kind=MemoryJob.Kind.THREAD_DELETE,
            whose=_Whose.of(thread),
            actor_id=actor_id,
            params={"thread_id": thread.pk},
            action=Action.DELETE,
            object_type=ObjectType.THREAD,
            object_id=thread.pk,
        )


def run_delete(*, run: Run, actor_id: int) -> MemoryJob:
    """Delete one run: out of its thread now, erased (and the summary rebuilt) by the worker.

    In the same transaction the thread's ``summary_version`` is bumped, so a compression
    that read this run's text before can no longer save it; whether the summary already
    covered the run is decided here, under the thread's row lock, and passed to the job.
    """
    now = timezone.now()
    with transaction.atomic():
        covered = False
        thread_id = run.thread_id
        if thread_id is not None:
            thread = Thread.objects.select_for_update().filter(pk=thread_id).first()
            if thread is not None:
                covered = _cursor_covers(thread.summary_upto_at, thread.summary_upto_run_id, run)
                Thread.objects.filter(pk=thread_id).update(
                    summary_version=F("summary_version") + 1,
                    title=_title_without(thread, run),
                )
        Run.objects.filter(pk=run.pk).update(deleted_at=now, thread=None)
        return _job_request(
            kind=MemoryJob.Kind.RUN_DELETE,
            whose=_Whose.of(run),
            actor_id=actor_id,
            params={"run_id": run.pk, "thread_id": thread_id, "summary_covered": covered},
            action=Action.DELETE,
            object_type=ObjectType.RUN,
            object_id=run.pk,
        )


def _title_without(thread: Thread, run: Run) -> str:
    """The thread's title once ``run`` is gone: a title made from its words is remade from
    the next remaining run (or left empty); a title the teacher chose stays."""
    if thread.title != thread_title_from(run.input):
        return thread.title
    following = (
        Run.objects.filter(thread_id=thread.pk)
        .visible()
        .exclude(pk=run.pk)
        .order_by("created_at", "pk")
        .values_list("input", flat=True)
        .first()
    )
    return thread_title_from(following) if following else ""


def _checked_needle(text: str) -> str:
    text = text.strip()
    length = needle_length(text)
    if length < MIN_NEEDLE_CHARS:
        raise ForgetRejected(_("要遗忘的内容至少需要 %(n)d 个字。") % {"n": MIN_NEEDLE_CHARS})
    if length > MAX_NEEDLE_CHARS:
        raise ForgetRejected(_("要遗忘的内容最多 %(n)d 个字。") % {"n": MAX_NEEDLE_CHARS})
    return text


def memory_forget(*, scope: Scope, text: str, actor_id: int) -> MemoryJob:
    """Forget every mention of ``text`` in one teacher's memory with one agent.

    Raises :class:`ForgetRejected`. The text is kept on the job only until it is done.
    """
    needle = _checked_needle(text)
    with transaction.atomic():
        return _job_request(
            kind=MemoryJob.Kind.FORGET,
            whose=_Whose(scope.tenant_id, scope.agent_id, scope.owner_id),
            actor_id=actor_id,
            params={"text": needle},
            action=Action.FORGET,
            object_type=ObjectType.MEMORY,
        )


def tenant_forget(*, tenant_id: int, text: str, actor: User) -> MemoryJob:
    """Forget ``text`` in every teacher's memory of a tenant: its administrators only.

    Raises :class:`PermissionError` for anyone else, :class:`ForgetRejected` for a text
    that cannot be forgotten.
    """
    if not is_tenant_admin(actor=actor, tenant_id=tenant_id):
        raise PermissionError("only an administrator of the tenant")
    needle = _checked_needle(text)
    with transaction.atomic():
        return _job_request(
            kind=MemoryJob.Kind.FORGET,
            whose=_Whose(tenant_id, None, None),
            actor_id=actor_id(actor),
            params={"text": needle, "tenant_wide": True},
            action=Action.FORGET,
            object_type=ObjectType.MEMORY,
        )


# -- the worker -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class JobOutcome:
    job_id: int
    status: str
    counts: dict[str, int]
    error: str = ""

    def as_dict(self) -> dict[str, object]:
        return {"job_id": self.job_id, "status": self.status, "counts": self.counts}


def memory_job_process(*, job_id: int) -> JobOutcome:
    """Run one governance job (a django-q2 task). Idempotent; safe to run twice at once."""
    claimed = (
        MemoryJob.objects.filter(pk=job_id)
        .exclude(status=MemoryJob.Status.DONE)
        .update(status=MemoryJob.Status.RUNNING, attempts=F("attempts") + 1)
    )
    if not claimed:
        return JobOutcome(job_id=job_id, status="skipped", counts={})
    job = MemoryJob.objects.get(pk=job_id)
    try:
        counts = _WORKFLOWS[job.kind](job)
    except MemoryDeferred as exc:
        return _job_failed(job, exc.code)
    except Exception:
        logger.exception("governance job %s crashed", job_id)
        return _job_failed(job, "internal_error")
    # The text to forget leaves the database with the job's completion.
    params = {key: value for key, value in job.params.items() if key != "text"}
    MemoryJob.objects.filter(pk=job_id).update(
        status=MemoryJob.Status.DONE,
        counts=dict(counts),
        params=params,
        error="",
        finished_at=timezone.now(),
    )
    return JobOutcome(job_id=job_id, status=MemoryJob.Status.DONE, counts=dict(counts))


def _job_failed(job: MemoryJob, code: str) -> JobOutcome:
    MemoryJob.objects.filter(pk=job.pk).update(
        status=MemoryJob.Status.FAILED, error=code, enqueued_at=timezone.now()
    )
    return JobOutcome(job_id=job.pk, status=MemoryJob.Status.FAILED, counts={}, error=code)


def thread_erase(job: MemoryJob) -> Counts:
    """The cascade of :func:`thread_delete`, layer by layer."""
    thread_id: str = job.params["thread_id"]
    counts: Counts = Counter()
    thread = Thread.objects.filter(pk=thread_id).first()
    if thread is None:
        return counts  # erased by an earlier attempt
    scope = Scope.of(thread)
    run_ids = list(Run.objects.filter(thread_id=thread_id).values_list("pk", flat=True))
    # L0/L1: the runs' texts (the rows stay as cost).
    counts["runs"] += _runs_erase(run_ids)
    # What each run was given, and every manifest that showed one of these runs.
    counts["run_contexts"] += _contexts_delete(
        scope=scope, run_ids=run_ids, own_run_ids=run_ids, covered=None
    )
    # L3: recall entries (every process drops them: memory.signals).
    counts["recall_entries"] += recall_entries_delete(run_ids=run_ids)
    # L2: candidates proposed from these runs (confirmed facts stay).
    counts["candidates"] += _candidates_delete(run_ids)
    # L4: the archived knowledge-base artifacts of these runs.
    counts.update(_kb_artifacts_delete(run_ids))
    # L1: the thread itself; runs and memory operations stay, out of it (SET_NULL).
    with transaction.atomic():
        Run.objects.filter(pk__in=run_ids).update(thread=None)
        counts["threads"] += (
            Thread.objects.filter(pk=thread_id).delete()[1].get(Thread._meta.label, 0)
        )
    return counts


def run_erase(job: MemoryJob) -> Counts:
    """The cascade of :func:`run_delete`, layer by layer."""
    run_id: int = job.params["run_id"]
    thread_id: str | None = job.params.get("thread_id")
    counts: Counts = Counter()
    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        return counts
    scope = Scope.of(run)
    counts["runs"] += _runs_erase([run_id])

    def covered_by(manifest_cursor: tuple[datetime, int] | None) -> bool:
        return manifest_cursor is not None and _cursor_covers(*manifest_cursor, run)

    counts["run_contexts"] += _contexts_delete(
        scope=scope,
        run_ids=[run_id],
        own_run_ids=[run_id],
        covered=covered_by,
        thread_id=thread_id,
    )
    counts["recall_entries"] += recall_entries_delete(run_ids=[run_id])
    counts["candidates"] += _candidates_delete([run_id])
    # L4: the run's archived knowledge-base artifact.
    counts.update(_kb_artifacts_delete([run_id]))
    # L1: a summary that covered the run is cleared, then rebuilt from the remaining runs.
    if thread_id and job.params.get("summary_covered"):
        if not job.params.get("summary_reset"):
            with transaction.atomic():
                Thread.objects.filter(pk=thread_id).update(
                    rolling_summary="",
                    summary_upto_at=None,
                    summary_upto_run_id=None,
                    summary_version=F("summary_version") + 1,
                )
                params = {**job.params, "summary_reset": True}
                MemoryJob.objects.filter(pk=job.pk).update(params=params)
                job.params = params
        result = thread_compress(thread_id=thread_id)  # LLM calls, outside any transaction
        counts["summaries_rebuilt"] += 1
        counts["summary_runs_refolded"] += len(result.folded_run_ids)
    return counts


def text_forget(job: MemoryJob) -> Counts:
    """The cascade of :func:`memory_forget` / :func:`tenant_forget`, layer by layer."""
    matcher = TextMatcher(job.params["text"])
    if job.params.get("tenant_wide"):
        where: dict[str, Any] = {"tenant_id": job.tenant_id}
    else:
        where = {"tenant_id": job.tenant_id, "agent_id": job.agent_id, "owner_id": job.owner_id}
    counts: Counts = Counter()
    # L2: facts and candidates that mention it are deleted.
    counts["facts"] += _facts_forget(matcher, where)
    counts["candidates"] += _candidates_forget(matcher, where)
    # L0: run inputs and outputs, redacted in place (first: what is derived from them
    # below is then rebuilt from redacted text).
    redacted_runs = _runs_redact(matcher, where)
    counts["runs"] += len(redacted_runs)
    # L1: thread titles and summaries (and every summary built on a redacted run is
    # version-bumped, so a fold in flight is redone from the redacted runs).
    counts["threads"] += _threads_redact(matcher, where)
    # What runs were given.
    counts["run_contexts"] += _contexts_redact(matcher, where)
    # L3: recall entries that mention it or come from a redacted run: removed, rebuilt.
    removed, rebuilt = _recall_forget(matcher, where, redacted_runs)
    counts["recall_entries"] += removed
    counts["recall_entries_rebuilt"] += rebuilt
    # L4: private knowledge-base documents that mention it (archived artifacts of the
    # runs redacted above among them: they hold the run's text as it was).
    counts.update(_kb_private_forget(matcher, where))
    return counts


_WORKFLOWS: dict[str, Callable[[MemoryJob], Counts]] = {
    MemoryJob.Kind.THREAD_DELETE: thread_erase,
    MemoryJob.Kind.RUN_DELETE: run_erase,
    MemoryJob.Kind.FORGET: text_forget,
}


# -- layer steps: deletion ---------------------------------------------------------------------
def _cursor_covers(upto_at: datetime | None, upto_run_id: int | None, run: Run) -> bool:
    """Whether a summary cursor (created_at, id) has folded ``run``."""
    if upto_at is None:
        return False
    return (upto_at, upto_run_id or 0) >= (run.created_at, run.pk)


def _runs_erase(run_ids: Collection[int]) -> int:
    """Erase the runs' texts; unfinished ones end as failed. Returns how many changed."""
    if not run_ids:
        return 0
    now = timezone.now()
    with transaction.atomic():
        Run.objects.filter(
            pk__in=run_ids, status__in=(Run.Status.QUEUED, Run.Status.RUNNING)
        ).update(status=Run.Status.FAILED, error_code=ERROR_RUN_DELETED, finished_at=now)
        erased = (
            Run.objects.filter(pk__in=run_ids)
            .exclude(input="", output="")
            .update(input="", output="", context={}, tool_calls=[], deleted_at=now)
        )
        # Nothing left to remember: the sweeper must not re-enqueue their memory jobs.
        Run.objects.filter(pk__in=run_ids).exclude(memory_state=Run.MemoryState.DONE).update(
            memory_state=Run.MemoryState.DONE, memory_done_at=now
        )
        Run.objects.filter(pk__in=run_ids, deleted_at__isnull=True).update(deleted_at=now)
    return erased


def _candidates_delete(run_ids: Collection[int]) -> int:
    if not run_ids:
        return 0
    deleted, _per_model = CoreCandidate.objects.filter(source_run_id__in=list(run_ids)).delete()
    return deleted


def _manifest_cursor(manifest: dict[str, Any]) -> tuple[datetime, int] | None:
    cursor = manifest.get("sections", {}).get("thread", {}).get("cursor") or {}
    at = parse_datetime(cursor.get("summary_upto_at") or "")
    if at is None:
        return None
    return at, int(cursor.get("summary_upto_run_id") or 0)


def _manifest_shows(manifest: dict[str, Any], run_ids: set[int]) -> bool:
    """Whether a run's manifest says one of ``run_ids`` was shown to it."""
    sections = manifest.get("sections", {})
    shown = set(sections.get("thread", {}).get("run_ids") or [])
    shown.update(e.get("run_id") for e in sections.get("recall", {}).get("entries") or [])
    shown.add((manifest.get("continue_prompt") or {}).get("run_id"))
    return not shown.isdisjoint(run_ids)


def _contexts_delete(
    *,
    scope: Scope,
    run_ids: Collection[int],
    own_run_ids: Collection[int],
    covered: Callable[[tuple[datetime, int] | None], bool] | None,
    thread_id: str | None = None,
) -> int:
    """Delete the manifests of ``own_run_ids`` and every manifest of the scope that showed
    one of ``run_ids`` (or, with ``covered``, a manifest of a run of ``thread_id`` whose
    summary had folded it in)."""
    wanted = set(run_ids)
    doomed = set(own_run_ids)
    if wanted:
        scoped = RunContext.objects.filter(
            run__tenant_id=scope.tenant_id,
            run__agent_id=scope.agent_id,
            run__owner_id=scope.owner_id,
        ).exclude(run_id__in=doomed)
        rows = scoped.values_list("run_id", "run__thread_id", "manifest")
        for run_id, run_thread_id, manifest in rows.iterator(chunk_size=500):
            if _manifest_shows(manifest, wanted) or (
                covered is not None
                and thread_id is not None
                and run_thread_id == thread_id
                and covered(_manifest_cursor(manifest))
            ):
                doomed.add(run_id)
    if not doomed:
        return 0
    deleted, _per_model = RunContext.objects.filter(run_id__in=doomed).delete()
    return deleted


def _kb_documents_delete(documents: Collection[KBDocument]) -> Counts:
    """Delete knowledge-base documents (and their chunks) through the KB's own service."""
    counts: Counts = Counter()
    for document in documents:
        chunks = KBChunk.objects.filter(document_id=document.pk).count()
        if kb_document_delete(document=document):
            counts["kb_documents"] += 1
            counts["kb_chunks"] += chunks
    return counts


def _kb_artifacts_delete(run_ids: Collection[int]) -> Counts:
    if not run_ids:
        return Counter()
    return _kb_documents_delete(list(KBDocument.objects.filter(source_run_id__in=list(run_ids))))


# -- layer steps: forgetting a text -----------------------------------------------------------
def _matching(rows: Iterator[tuple[Any, ...]], matcher: TextMatcher) -> list[Any]:
    """The first column of the rows any of whose other columns mention the text."""
    return [row[0] for row in rows if any(matcher.matches(value or "") for value in row[1:])]


def _facts_forget(matcher: TextMatcher, where: dict[str, Any]) -> int:
    rows = CoreFact.objects.filter(**where).values_list("pk", "text").iterator(chunk_size=500)
    ids = _matching(rows, matcher)
    return CoreFact.objects.filter(pk__in=ids).delete()[0] if ids else 0


def _candidates_forget(matcher: TextMatcher, where: dict[str, Any]) -> int:
    rows = (
        CoreCandidate.objects.filter(**where)
        .values_list("pk", "fact", "evidence")
        .iterator(chunk_size=500)
    )
    ids = _matching(rows, matcher)
    return CoreCandidate.objects.filter(pk__in=ids).delete()[0] if ids else 0


def _runs_redact(matcher: TextMatcher, where: dict[str, Any]) -> list[int]:
    """Redact run inputs, outputs and tool-call arguments in place; bump their threads'
    summary versions."""
    rows = (
        Run.objects.filter(**where, deleted_at__isnull=True)
        .values_list("pk", "input", "output", "tool_calls")
        .iterator(chunk_size=500)
    )
    candidates = [
        pk
        for pk, text, answer, calls in rows
        if matcher.matches(text) or matcher.matches(answer) or _redact_calls(matcher, calls)[1]
    ]
    changed: list[int] = []
    now = timezone.now()
    for run_id in candidates:
        with transaction.atomic():
            # Locked and re-read: the run may be finishing (its output written) meanwhile.
            run = (
                Run.objects.select_for_update()
                .filter(pk=run_id)
                .only("pk", "input", "output", "tool_calls", "thread_id")
                .first()
            )
            if run is None:
                continue
            new_input, hits_in = matcher.redact(run.input)
            new_output, hits_out = matcher.redact(run.output)
            new_calls, hits_calls = _redact_calls(matcher, run.tool_calls)
            if not hits_in + hits_out + hits_calls:
                continue
            Run.objects.filter(pk=run_id).update(
                input=new_input, output=new_output, tool_calls=new_calls, redacted_at=now
            )
            if run.thread_id:
                # A fold in flight that read the old text must not be saved.
                Thread.objects.filter(pk=run.thread_id).update(
                    summary_version=F("summary_version") + 1
                )
        changed.append(run_id)
    return changed


TITLE_LENGTH: int = Thread._meta.get_field("title").max_length or 200


def _threads_redact(matcher: TextMatcher, where: dict[str, Any]) -> int:
    rows = Thread.objects.filter(**where).values_list("pk", "title", "rolling_summary")
    changed = 0
    for thread_id in _matching(rows.iterator(chunk_size=500), matcher):
        # Compare-and-set on the summary version: compression may be saving meanwhile.
        for _attempt in range(5):
            current = (
                Thread.objects.filter(pk=thread_id)
                .values_list("title", "rolling_summary", "summary_version")
                .first()
            )
            if current is None:
                break
            title, summary, version = current
            # A placeholder may be longer than what it replaces: the title stays within
            # its column (PostgreSQL would refuse the update; the API promises the length).
            new_title = matcher.redact(title)[0][:TITLE_LENGTH]
            new_summary = matcher.redact(summary)[0]
            if Thread.objects.filter(pk=thread_id, summary_version=version).update(
                title=new_title,
                rolling_summary=new_summary,
                summary_version=F("summary_version") + 1,
            ):
                changed += 1
                break
    return changed


def _redact_json(matcher: TextMatcher, value: Any) -> tuple[Any, int]:
    """Decoded JSON with the text redacted in every string it holds (keys kept), and a
    string that is JSON itself redacted inside (a model's tool arguments may spell
    Chinese as ``\\u`` escapes, which the text as written would never match)."""
    if isinstance(value, str):
        if value.lstrip()[:1] in ("{", "["):
            try:
                decoded = json.loads(value)
            except ValueError:
                decoded = None
            if isinstance(decoded, dict | list):
                redacted, hits = _redact_json(matcher, decoded)
                if hits:
                    return json.dumps(redacted, ensure_ascii=False), hits
        return matcher.redact(value)
    if isinstance(value, list):
        pairs = [_redact_json(matcher, item) for item in value]
        return [item for item, _ in pairs], sum(hits for _, hits in pairs)
    if isinstance(value, dict):
        out, total = {}, 0
        for key, item in value.items():
            out[key], hits = _redact_json(matcher, item)
            total += hits
        return out, total
    return value, 0


Redactor = Callable[[TextMatcher, Any], tuple[Any, int]]


def _redact_items(matcher: TextMatcher, items: Any, fields: dict[str, Redactor]) -> tuple[Any, int]:
    """A list of objects with the text redacted in the given fields of each, each field by
    its redactor; every other field is kept as it is."""
    if not isinstance(items, list):
        return items, 0
    total = 0
    out = []
    for item in items:
        if isinstance(item, dict):
            item = dict(item)
            for key, redact in fields.items():
                if key in item:
                    item[key], hits = redact(matcher, item[key])
                    total += hits
        out.append(item)
    return out, total


def _redact_calls(matcher: TextMatcher, calls: Any) -> tuple[Any, int]:
    """Tool calls (a run's records, or an assistant message's calls) with the text
    redacted in their arguments; names, ids, counts and chunk ids are not text."""
    return _redact_items(matcher, calls, {"arguments": _redact_json, "arguments_raw": _redact_json})


def _redact_messages(matcher: TextMatcher, messages: Any) -> tuple[Any, int]:
    """Chat messages with the text redacted in their contents and their tool calls."""
    return _redact_items(matcher, messages, {"content": _redact_json, "tool_calls": _redact_calls})


def _redact_manifest(matcher: TextMatcher, manifest: Any) -> tuple[Any, int]:
    """A manifest with the text redacted in the tool calls it lists (the rest is ids)."""
    tools = manifest.get("tools") if isinstance(manifest, dict) else None
    if not isinstance(tools, dict) or "calls" not in tools:
        return manifest, 0
    calls, hits = _redact_calls(matcher, tools["calls"])
    return ({**manifest, "tools": {**tools, "calls": calls}} if hits else manifest), hits


def _contexts_redact(matcher: TextMatcher, where: dict[str, Any]) -> int:
    scoped = RunContext.objects.filter(**{f"run__{key}": value for key, value in where.items()})
    changed = 0
    for run_id, messages, injected, manifest in scoped.values_list(
        "run_id", "messages", "injected_text", "manifest"
    ).iterator(chunk_size=200):
        new_messages, hits_messages = _redact_messages(matcher, messages)
        new_injected, hits_injected = matcher.redact(injected)
        new_manifest, hits_manifest = _redact_manifest(matcher, manifest)
        if hits_messages + hits_injected + hits_manifest:
            RunContext.objects.filter(run_id=run_id).update(
                messages=new_messages, injected_text=new_injected, manifest=new_manifest
            )
            changed += 1
    return changed


def _kb_private_forget(matcher: TextMatcher, where: dict[str, Any]) -> Counts:
    """Delete the private documents in ``where`` whose title or a chunk mentions the text."""
    private = KBDocument.objects.filter(**where, visibility=KBDocument.Visibility.PRIVATE)
    titled = private.values_list("pk", "title").iterator(chunk_size=500)
    doomed = set(_matching(titled, matcher))
    chunks = (
        KBChunk.objects.filter(document__in=private)
        .values_list("document_id", "heading_path", "text")
        .iterator(chunk_size=500)
    )
    doomed.update(_matching(chunks, matcher))
    if not doomed:
        return Counter()
    return _kb_documents_delete(list(KBDocument.objects.filter(pk__in=doomed)))


def _recall_forget(
    matcher: TextMatcher, where: dict[str, Any], redacted_runs: list[int]
) -> tuple[int, int]:
    """Remove entries that mention the text or come from a redacted run; rebuild the latter."""
    rows = RecallEntry.objects.filter(**where).values_list("run_id", "text")
    run_ids = set(_matching(rows.iterator(chunk_size=500), matcher)) | set(redacted_runs)
    removed = recall_entries_delete(run_ids=run_ids)
    rebuilt = 0
    for run in Run.objects.filter(
        Q(pk__in=run_ids), deleted_at__isnull=True, status=Run.Status.COMPLETED
    ):
        entry = recall_upsert(run=run)
        if entry is not None and matcher.matches(entry.text):
            # The run's text no longer mentions it, but the stored entry was written
            # before the redaction committed: remove it (the next job rebuilds it).
            recall_entries_delete(run_ids=[run.pk])
        elif entry is not None:
            rebuilt += 1
    return removed, rebuilt
