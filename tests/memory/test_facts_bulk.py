"""Bulk confirm and bulk delete: one service owns the order, the cap and the evictions."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import CoreCandidate, CoreFact
from memory.services.facts import (
    Refused,
    candidates_confirm_many,
    candidates_reject_many,
    facts_delete_many,
)
from tests.factories import Teacher, candidates_via_job, fact_via_confirm, make_teacher

pytestmark = pytest.mark.django_db

THREE_FACTS = "我教八年级数学。以后出题都用人教版教材。每次作业都要附答案"


def with_confidence(candidates: list[CoreCandidate], values: list[float]) -> None:
    for candidate, value in zip(candidates, values, strict=True):
        CoreCandidate.objects.filter(pk=candidate.pk).update(confidence=value)
        candidate.confidence = value


def texts() -> set[str]:
    return set(CoreFact.objects.values_list("text", flat=True))


@pytest.mark.parametrize(
    ("confidences", "kept"),
    [
        # At a cap of 2, the two most confident survive whatever order they come in.
        ([0.9, 0.8, 0.4], {"我教八年级数学", "以后出题都用人教版教材"}),
        ([0.4, 0.8, 0.9], {"以后出题都用人教版教材", "每次作业都要附答案"}),
        ([0.8, 0.2, 0.9], {"我教八年级数学", "每次作业都要附答案"}),
    ],
)
def test_at_the_cap_the_most_confident_are_kept(
    teacher: Teacher, settings: Any, confidences: list[float], kept: set[str]
) -> None:
    settings.CORE_FACTS_MAX = 2
    candidates = candidates_via_job(teacher, THREE_FACTS)
    with_confidence(candidates, confidences)
    result = candidates_confirm_many(candidates=candidates, actor_id=teacher.user.pk)
    assert len(result.confirmed) == 3 and result.refused == ()
    assert texts() == kept
    # The least confident was confirmed first and is the one evicted, by its text.
    least = min(candidates, key=lambda c: c.confidence)
    assert result.evicted_texts == [least.fact]
    assert result.confirmed[0].fact.text == least.fact


def test_refusals_are_reported_and_do_not_stop_the_rest(
    teacher: Teacher, outsider: Teacher
) -> None:
    mine = candidates_via_job(teacher, THREE_FACTS)
    theirs = candidates_via_job(outsider, "我教九年级化学，以后都用沪教版")
    sensitive = mine[0]
    CoreCandidate.objects.filter(pk=sensitive.pk).update(fact="学生李华的手机号是13800138000")
    sensitive.refresh_from_db()
    gone = mine[1]
    CoreCandidate.objects.filter(pk=gone.pk).delete()

    result = candidates_confirm_many(candidates=[*mine, *theirs], actor_id=teacher.user.pk)

    reasons = {refusal.candidate.pk: refusal.reason for refusal in result.refused}
    assert reasons == {
        sensitive.pk: Refused.REJECTED,
        gone.pk: Refused.GONE,
        theirs[0].pk: Refused.FORBIDDEN,
    }
    assert [c.fact.text for c in result.confirmed] == [mine[2].fact]
    refusal = next(r for r in result.refused if r.reason is Refused.REJECTED)
    assert "敏感信息" in refusal.message and "13800138000" not in refusal.message
    assert CoreCandidate.objects.filter(pk__in=[sensitive.pk, theirs[0].pk]).count() == 2
    assert not CoreFact.objects.filter(owner=outsider.user).exists()


def test_a_tenant_admin_may_act_for_a_teacher_an_outsider_may_not(
    teacher: Teacher, outsider: Teacher
) -> None:
    admin = make_teacher(
        tenant_name=teacher.tenant.name, username="boss", agent=teacher.agent, role="admin"
    )
    candidates = candidates_via_job(teacher, THREE_FACTS)
    refused = candidates_reject_many(candidates=candidates[:1], actor_id=outsider.user.pk)
    assert (refused.done, refused.forbidden) == (0, 1)
    rejected = candidates_reject_many(candidates=candidates[:2], actor_id=admin.user.pk)
    assert (rejected.done, rejected.forbidden) == (2, 0)
    assert list(CoreCandidate.objects.values_list("pk", flat=True)) == [candidates[2].pk]

    fact = fact_via_confirm(teacher, candidates[2])
    assert facts_delete_many(facts=[fact], actor_id=outsider.user.pk).forbidden == 1
    assert CoreFact.objects.filter(pk=fact.pk).exists()
    assert facts_delete_many(facts=[fact], actor_id=admin.user.pk).done == 1
    assert not CoreFact.objects.exists()
