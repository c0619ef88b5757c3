"""The only path from candidate to fact, and the edits of facts: a person's actions.

Design v2 review #10: nothing becomes long-term memory without the teacher's own
confirmation. These functions take the acting user and are called only by the memory
panel, the API (owner or tenant admin) and the admin actions. No background job, LLM
output or agent tool imports this module (tests/memory/test_promotion_path.py proves it).

Each function checks that the actor may manage the item (its owner, or an administrator
of its tenant) and raises PermissionError otherwise; interfaces find items through the
access-checked getters of ``memory.selectors`` first, so a refusal here is a race.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.models import Membership
from memory.factkey import near_equal
from memory.models import MAX_FACT_CHARS, CoreCandidate, CoreFact, RedlineAudit
from memory.redline import PLACEHOLDERS, Category, scan
from memory.scope import Scope
from memory.services.audit import redline_audit_record


class FactRejected(ValueError):
    """The text cannot become a fact (empty, too long, or on the red line)."""


@dataclass(frozen=True, slots=True)
class Confirmation:
    fact: CoreFact
    evicted_id: int | None
    merged: bool
    # The text of the fact evicted to make room (read under the scope lock, so it is the
    # one that went), for the confirming person to see what they lost.
    evicted_text: str | None = None


class Refused(StrEnum):
    REJECTED = "rejected"  # the text cannot become a fact (FactRejected)
    GONE = "gone"  # the candidate was confirmed or deleted meanwhile
    FORBIDDEN = "forbidden"  # the actor may not manage it


@dataclass(frozen=True, slots=True)
class Refusal:
    candidate: CoreCandidate
    reason: Refused
    message: str


@dataclass(frozen=True, slots=True)
class BulkConfirmation:
    confirmed: tuple[Confirmation, ...]
    refused: tuple[Refusal, ...]

    @property
    def evicted_texts(self) -> list[str]:
        return [c.evicted_text for c in self.confirmed if c.evicted_text is not None]


@dataclass(frozen=True, slots=True)
class BulkResult:
    done: int
    forbidden: int


def _actor_can_manage(*, actor_id: int, tenant_id: int, owner_id: int) -> bool:
    if actor_id == owner_id:
        return Membership.objects.filter(user_id=actor_id, tenant_id=tenant_id).exists()
    return Membership.objects.filter(
        user_id=actor_id, tenant_id=tenant_id, role=Membership.Role.ADMIN
    ).exists()


def _clean_text(*, text: str, scope: Scope) -> str:
    text = " ".join(text.split())
    if not text:
        raise FactRejected(_("事实内容不能为空。"))
    if len(text) > MAX_FACT_CHARS:
        raise FactRejected(_("事实内容过长：最多 %(n)d 个字符。") % {"n": MAX_FACT_CHARS})
    hits = scan(text)
    if hits:
        counts = Counter(hit.category.value for hit in hits)
        redline_audit_record(scope=scope, source=RedlineAudit.Source.FACT, counts=counts)
        names = "、".join(sorted({PLACEHOLDERS[Category(c)] for c in counts}))
        raise FactRejected(_("这条内容涉及不能保存的敏感信息：%(what)s。") % {"what": names})
    return text


def _lock_scope(scope: Scope) -> None:
    """Serialise confirmations in one scope (the capacity check reads then writes)."""
    list(
        Membership.objects.select_for_update()
        .filter(tenant_id=scope.tenant_id, user_id=scope.owner_id)
        .values_list("pk", flat=True)
    )


def candidate_confirm(
    *, candidate: CoreCandidate, actor_id: int, text: str | None = None
) -> Confirmation:
    """Promote a candidate (optionally edited) to a fact; evict the LRU fact at the cap."""
    if not _actor_can_manage(
        actor_id=actor_id, tenant_id=candidate.tenant_id, owner_id=candidate.owner_id
    ):
        raise PermissionError("not allowed")
    scope = Scope.of(candidate)
    final = _clean_text(text=candidate.fact if text is None else text, scope=scope)
    now = timezone.now()
    with transaction.atomic():
        _lock_scope(scope)
        if not CoreCandidate.objects.filter(pk=candidate.pk).exists():
            raise CoreCandidate.DoesNotExist
        facts = CoreFact.objects.for_scope(**scope.filter_kwargs())
        for existing in facts:
            if near_equal(existing.text, final):
                CoreCandidate.objects.filter(pk=candidate.pk).delete()
                return Confirmation(fact=existing, evicted_id=None, merged=True)
        evicted_id = evicted_text = None
        if facts.count() >= settings.CORE_FACTS_MAX:
            victim = _least_recently_used(facts)
            if victim is not None:
                evicted_id, evicted_text = victim.pk, victim.text
                victim.delete()
        fact = CoreFact.objects.create(
            **scope.filter_kwargs(),
            text=final,
            source_run_id=candidate.source_run_id,
            confirmed_by_id=actor_id,
            confirmed_at=now,
        )
        CoreCandidate.objects.filter(pk=candidate.pk).delete()
    return Confirmation(fact=fact, evicted_id=evicted_id, merged=False, evicted_text=evicted_text)


def candidates_confirm_many(
    *, candidates: Iterable[CoreCandidate], actor_id: int
) -> BulkConfirmation:
    """Confirm several candidates, lowest confidence first; refusals do not stop the rest.

    The order is what makes a bulk confirm at the cap keep the right facts: each
    confirmation at the cap evicts the least recently used fact, and a fact confirmed in
    this batch has never been injected, so it is among the first to go. Confirming the
    most confident last keeps them. Ties: older candidate first, then id.
    """
    confirmed: list[Confirmation] = []
    refused: list[Refusal] = []
    for candidate in sorted(candidates, key=lambda c: (c.confidence, c.created_at, c.pk)):
        try:
            confirmed.append(candidate_confirm(candidate=candidate, actor_id=actor_id))
        except FactRejected as exc:
            refused.append(Refusal(candidate, Refused.REJECTED, str(exc)))
        except CoreCandidate.DoesNotExist:
            refused.append(Refusal(candidate, Refused.GONE, ""))
        except PermissionError:
            refused.append(Refusal(candidate, Refused.FORBIDDEN, ""))
    return BulkConfirmation(confirmed=tuple(confirmed), refused=tuple(refused))


def eviction_preview(*, scope: Scope) -> CoreFact | None:
    """The fact that confirming one more would evict, if the scope is full."""
    facts = CoreFact.objects.for_scope(**scope.filter_kwargs())
    if facts.count() < settings.CORE_FACTS_MAX:
        return None
    return _least_recently_used(facts)


def _least_recently_used(facts: QuerySet[CoreFact]) -> CoreFact | None:
    # Never injected counts as least recently used; ties go to the oldest confirmation.
    return facts.order_by(F("last_used_at").asc(nulls_first=True), "confirmed_at", "pk").first()


def candidate_reject(*, candidate: CoreCandidate, actor_id: int) -> None:
    if not _actor_can_manage(
        actor_id=actor_id, tenant_id=candidate.tenant_id, owner_id=candidate.owner_id
    ):
        raise PermissionError("not allowed")
    CoreCandidate.objects.filter(pk=candidate.pk).delete()


def candidates_reject_many(*, candidates: Iterable[CoreCandidate], actor_id: int) -> BulkResult:
    """Reject (delete) several candidates; those the actor may not manage are counted."""
    done = forbidden = 0
    for candidate in candidates:
        try:
            candidate_reject(candidate=candidate, actor_id=actor_id)
            done += 1
        except PermissionError:
            forbidden += 1
    return BulkResult(done=done, forbidden=forbidden)


def fact_update(*, fact: CoreFact, actor_id: int, text: str) -> CoreFact:
    if not _actor_can_manage(actor_id=actor_id, tenant_id=fact.tenant_id, owner_id=fact.owner_id):
        raise PermissionError("not allowed")
    fact.text = _clean_text(text=text, scope=Scope.of(fact))
    fact.save(update_fields=["text", "updated_at"])
    return fact


def fact_delete(*, fact: CoreFact, actor_id: int) -> None:
    if not _actor_can_manage(actor_id=actor_id, tenant_id=fact.tenant_id, owner_id=fact.owner_id):
        raise PermissionError("not allowed")
    CoreFact.objects.filter(pk=fact.pk).delete()


def facts_delete_many(*, facts: Iterable[CoreFact], actor_id: int) -> BulkResult:
    """Delete several facts; those the actor may not manage are counted."""
    done = forbidden = 0
    for fact in facts:
        try:
            fact_delete(fact=fact, actor_id=actor_id)
            done += 1
        except PermissionError:
            forbidden += 1
    return BulkResult(done=done, forbidden=forbidden)
