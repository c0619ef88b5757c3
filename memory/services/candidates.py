"""Core-memory candidate extraction (design v2 §4), a step of the after-run job.

Only the teacher's own words in this run are a source: a proposal whose evidence is not
quoted from the run's input is dropped, so the assistant's output and injected history
(which are not part of ``Run.input``) can never become memory, and memory never
re-extracts itself. Proposals that touch the red line are never saved; they are counted.
Everything lands as a *pending* candidate: this module cannot create a fact.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest

from agents.models import Provider, Run
from memory.extraction import parse_proposals
from memory.factkey import evidence_in, fact_key, near_equal
from memory.models import MAX_FACT_CHARS, CoreCandidate, MemoryOp, RedlineAudit
from memory.prompts import extract_messages, judge_verdict, redline_judge_messages
from memory.redline import Category, scan
from memory.scope import Scope
from memory.services.audit import redline_audit_record
from memory.services.core import candidates_for_scope, facts_live_for_scope
from memory.services.llm import MemoryDeferred, memory_complete

logger = logging.getLogger(__name__)

# Inputs shorter than this carry no fact worth an LLM call ("好的", "继续").
MIN_INPUT_CHARS = 4


def candidates_extract(
    *, run: Run, first_attempt: bool = False, providers: Sequence[Provider] | None = None
) -> int:
    """Propose pending candidates from this run. Idempotent: one extraction per run.

    ``first_attempt``: the caller's claim was the run's first memory attempt ever (no
    job before it can have extracted), so the check for an earlier extraction is
    skipped; a concurrent duplicate job counts as a later attempt and checks.
    ``providers``: the job's :func:`memory.services.llm.memory_providers`.
    """
    if len(run.input.strip()) < MIN_INPUT_CHARS:
        return 0
    if (
        not first_attempt
        and MemoryOp.objects.filter(
            run_id=run.pk, kind=MemoryOp.Kind.EXTRACT, success=True
        ).exists()
    ):
        return 0
    completion = memory_complete(
        agent=run.agent,
        messages=extract_messages(teacher_words=run.input, assistant_reply=run.output),
        purpose="extract",
        kind=MemoryOp.Kind.EXTRACT,
        thread_id=run.thread_id,
        run_id=run.pk,
        providers=providers,
    )
    proposals = parse_proposals(completion.text, max_fact_chars=MAX_FACT_CHARS)
    if not proposals:
        return 0  # nothing to write, nothing to check
    scope = Scope.of(run)
    blocked: Counter[str] = Counter()
    created = 0
    if not _source_unchanged(run):
        return 0  # deleted or forgotten while the model was answering
    for proposal in proposals:
        if not evidence_in(proposal.evidence, run.input):
            logger.info("run %s: dropped a proposal not quoted from the teacher", run.pk)
            continue
        hits = scan(proposal.fact) + scan(proposal.evidence)
        if hits:
            blocked.update(hit.category.value for hit in hits)
            continue
        judged = redline_judge(run=run, text=proposal.fact, providers=providers)
        if judged is not None:
            blocked[judged.value] += 1
            continue
        if _merge(
            scope=scope,
            run=run,
            fact=proposal.fact,
            evidence=proposal.evidence,
            confidence=proposal.confidence,
        ):
            continue
        try:
            with transaction.atomic():
                if not _source_unchanged(run, lock=True):
                    break
                CoreCandidate.objects.create(
                    **scope.filter_kwargs(),
                    fact=proposal.fact,
                    fact_key=fact_key(proposal.fact),
                    confidence=proposal.confidence,
                    evidence=proposal.evidence,
                    source_run=run,
                )
            created += 1
        except IntegrityError:
            # The same key was proposed concurrently (or by a redelivered job).
            _merge(
                scope=scope,
                run=run,
                fact=proposal.fact,
                evidence=proposal.evidence,
                confidence=proposal.confidence,
            )
    if blocked:
        redline_audit_record(scope=scope, source=RedlineAudit.Source.CANDIDATE, counts=blocked)
    return created


def _source_unchanged(run: Run, *, lock: bool = False) -> bool:
    """Whether the run is neither deleted nor forgotten since the job loaded it.

    ``lock`` (inside the creating transaction): the run row stays locked until the
    candidate commits, so a deletion or "forget" (which update the run row first)
    either came before and is seen here, or waits and then removes the candidate.
    """
    rows = Run.objects.filter(pk=run.pk)
    if lock:
        rows = rows.select_for_update()
    current = rows.values_list("deleted_at", "redacted_at").first()
    return current is not None and current[0] is None and current[1] == run.redacted_at


def redline_judge(
    *, run: Run, text: str, providers: Sequence[Provider] | None = None
) -> Category | None:
    """The third red line, for candidates only: ask the memory model itself.

    Runs when the rules passed ``text`` and the agent's memory model is a real one (not
    the offline demo model) and ``MEMORY_REDLINE_JUDGE`` is on. A named category blocks;
    "no", a failure, a timeout or an unreadable answer leave the rules' decision, so
    the judge can only ever add a block, never lift one. Each call is a MemoryOp.
    """
    if not settings.MEMORY_REDLINE_JUDGE:
        return None
    if run.agent.effective_memory_provider.kind == Provider.Kind.OFFLINE:
        return None
    try:
        completion = memory_complete(
            agent=run.agent,
            messages=redline_judge_messages(text=text),
            purpose="extract",
            kind=MemoryOp.Kind.REDLINE_JUDGE,
            thread_id=run.thread_id,
            run_id=run.pk,
            providers=providers,
        )
    except MemoryDeferred as exc:
        logger.warning("run %s: red-line judge unavailable (%s); rules decide", run.pk, exc.code)
        return None
    answered, category = judge_verdict(completion.text)
    if not answered:
        logger.warning("run %s: red-line judge gave no verdict; rules decide", run.pk)
    return category


def _merge(*, scope: Scope, run: Run, fact: str, evidence: str, confidence: float) -> bool:
    """Fold a proposal into an equal fact or pending candidate. True if it was one."""
    for text in facts_live_for_scope(scope=scope).values_list("text", flat=True):
        if near_equal(text, fact):
            return True  # already remembered
    for candidate in candidates_for_scope(scope=scope).only("pk", "fact", "source_run_id"):
        if near_equal(candidate.fact, fact):
            if candidate.source_run_id != run.pk:
                CoreCandidate.objects.filter(pk=candidate.pk).update(
                    seen_count=F("seen_count") + 1,
                    confidence=Greatest(F("confidence"), confidence),
                    evidence=evidence,
                    source_run=run,
                )
            return True
    return False
