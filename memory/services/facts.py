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
from datetime import date
from enum import Enum, StrEnum
from typing import Final

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
from memory.services.audit import Action, ObjectType, audit_record_scoped, redline_audit_record


class Unset(Enum):
    """An argument not given, where ``None`` means something (long-term validity)."""

    UNSET = "unset"


UNSET: Final = Unset.UNSET


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


def facts_scope_lock(*, scope: Scope) -> None:
    """Serialise the writers of one scope's facts (the capacity check reads, then writes).

    Call inside a transaction: confirmations and the legacy import hold it.
    """
    list(
        Membership.objects.select_for_update()
        .filter(tenant_id=scope.tenant_id, user_id=scope.owner_id)
        .values_list("pk", flat=True)
    )


def candidate_confirm(
    *,
    candidate: CoreCandidate,
    actor_id: int,
    text: str | None = None,
    valid_until: date | Unset | None = UNSET,
) -> Confirmation:
    """Promote a candidate (optionally edited) to a fact; evict the LRU live fact at the cap.

    ``valid_until``: the last day the fact holds (``None``: long-term); not given, the
    candidate's own proposal. Only live facts count towards the cap and can be evicted.
    The confirmation (and an eviction) is an audit event with the actor, who may be an
    administrator of the teacher's tenant.
    """
    if not _actor_can_manage(
        actor_id=actor_id, tenant_id=candidate.tenant_id, owner_id=candidate.owner_id
    ):
        raise PermissionError("not allowed")
    scope = Scope.of(candidate)
    final = _clean_text(text=candidate.fact if text is None else text, scope=scope)
    until = candidate.valid_until if isinstance(valid_until, Unset) else valid_until
    now = timezone.now()
    with transaction.atomic():
        facts_scope_lock(scope=scope)
        if not CoreCandidate.objects.filter(pk=candidate.pk).exists():
            raise CoreCandidate.DoesNotExist
        facts = CoreFact.objects.for_scope(**scope.filter_kwargs()).live(today=timezone.localdate())
        for existing in facts:
            if near_equal(existing.text, final):
                CoreCandidate.objects.filter(pk=candidate.pk).delete()
                _audit_confirm(scope, candidate, actor_id, final, existing, merged=True)
                return Confirmation(fact=existing, evicted_id=None, merged=True)
        evicted_id = evicted_text = None
        if facts.count() >= settings.CORE_FACTS_MAX:
            victim = _least_recently_used(facts)
            if victim is not None:
                evicted_id, evicted_text = victim.pk, victim.text
                victim.delete()
                audit_record_scoped(
                    scope=scope,
                    action=Action.DELETE,
                    object_type=ObjectType.FACT,
                    object_id=victim.pk,
                    actor_id=actor_id,
                    detail={"reason": "evicted"},
                )
        fact = CoreFact.objects.create(
            **scope.filter_kwargs(),
            text=final,
            source_run_id=candidate.source_run_id,
            confirmed_by_id=actor_id,
            confirmed_at=now,
            valid_until=until,
        )
        CoreCandidate.objects.filter(pk=candidate.pk).delete()
        _audit_confirm(scope, candidate, actor_id, final, fact, merged=False)
    return Confirmation(fact=fact, evicted_id=evicted_id, merged=False, evicted_text=evicted_text)


def _audit_confirm(
    scope: Scope, candidate: CoreCandidate, actor_id: int, final: str, fact: CoreFact, merged: bool
) -> None:
    audit_record_scoped(
        scope=scope,
        action=Action.CONFIRM,
        object_type=ObjectType.CANDIDATE,
        object_id=candidate.pk,
        actor_id=actor_id,
        before=candidate.fact,
        after=final,
        detail={
            "fact_id": fact.pk,
            "merged": merged,
            "valid_until": fact.valid_until.isoformat() if fact.valid_until else None,
        },
    )


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
    """The live fact that confirming one more would evict, if the scope is full."""
    facts = CoreFact.objects.for_scope(**scope.filter_kwargs()).live(today=timezone.localdate())
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
    with transaction.atomic():
        if CoreCandidate.objects.filter(pk=candidate.pk).delete()[0]:
            audit_record_scoped(
                scope=Scope.of(candidate),
                action=Action.REJECT,
                object_type=ObjectType.CANDIDATE,
                object_id=candidate.pk,
                actor_id=actor_id,
            )


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


def fact_update(
    *,
    fact: CoreFact,
    actor_id: int,
    text: str | None = None,
    valid_until: date | Unset | None = UNSET,
) -> CoreFact:
    """Edit a fact's text, its validity (``None``: long-term; a past date expires it), or both.

    Moving the validity to today or later renews an expired fact. An audit event with
    the hashes of the text before and after.
    """
    if not _actor_can_manage(actor_id=actor_id, tenant_id=fact.tenant_id, owner_id=fact.owner_id):
        raise PermissionError("not allowed")
    before = fact.text
    fields = ["updated_at"]
    if text is not None:
        fact.text = _clean_text(text=text, scope=Scope.of(fact))
        fields.append("text")
    if not isinstance(valid_until, Unset):
        fact.valid_until = valid_until
        fields.append("valid_until")
        if valid_until is None or valid_until >= timezone.localdate():
            fact.expired_at = None  # renewed: a later expiry is recorded again
            fields.append("expired_at")
    with transaction.atomic():
        fact.save(update_fields=fields)
        audit_record_scoped(
            scope=Scope.of(fact),
            action=Action.EDIT,
            object_type=ObjectType.FACT,
            object_id=fact.pk,
            actor_id=actor_id,
            before=before,
            after=fact.text,
            detail={
                "fields": sorted(set(fields) - {"updated_at", "expired_at"}),
                "valid_until": fact.valid_until.isoformat() if fact.valid_until else None,
            },
        )
    return fact


def fact_delete(*, fact: CoreFact, actor_id: int) -> None:
    if not _actor_can_manage(actor_id=actor_id, tenant_id=fact.tenant_id, owner_id=fact.owner_id):
        raise PermissionError("not allowed")
    with transaction.atomic():
        if CoreFact.objects.filter(pk=fact.pk).delete()[0]:
            audit_record_scoped(
                scope=Scope.of(fact),
                action=Action.DELETE,
                object_type=ObjectType.FACT,
                object_id=fact.pk,
                actor_id=actor_id,
            )


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
