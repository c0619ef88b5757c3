"""Core memory end to end: extraction to pending, confirmation by a person, injection."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from agents.models import Run
from memory.models import CoreCandidate, CoreFact, MemoryOp, RedlineAudit
from memory.scope import Scope
from memory.services.core import core_render
from memory.services.jobs import after_run_process
from tests.factories import (
    Teacher,
    candidates_via_job,
    fact_via_confirm,
    make_provider,
    make_teacher,
    run_via_api,
)
from tests.fakellm import FakeLLMServer

pytestmark = pytest.mark.django_db


send = run_via_api


def run_job(body: dict[str, object]) -> None:
    after_run_process(run_id=int(body["id"]))  # type: ignore[call-overload]


def test_preference_becomes_pending_then_confirmed_then_injected(teacher: Teacher) -> None:
    body = send(teacher, "我教八年级数学，以后出题都用人教版教材")
    run_job(body)
    assert CoreFact.objects.count() == 0
    candidates = teacher.client.get(f"/api/agents/{teacher.agent.pk}/memory/candidates").json()
    assert candidates["count"] >= 1
    texts = [c["fact"] for c in candidates["results"]]
    assert any("人教版" in t for t in texts)
    target = next(c for c in candidates["results"] if "人教版" in c["fact"])
    assert target["evidence"] in "我教八年级数学，以后出题都用人教版教材"
    assert target["thread_id"] == body["thread_id"]

    confirmed = teacher.client.post(
        f"/api/memory/candidates/{target['id']}/confirm", {}, format="json"
    )
    assert confirmed.status_code == 200, confirmed.content
    fact_id = confirmed.json()["fact"]["id"]

    nxt = send(teacher, "出一份期中试卷")
    context = teacher.client.get(f"/api/runs/{nxt['id']}/context").json()
    assert "[核心记忆" in context["injected_text"]
    assert "人教版" in context["injected_text"]
    assert context["manifest"]["sections"]["core"]["fact_ids"] == [fact_id]
    assert CoreFact.objects.get(pk=fact_id).last_used_at is not None
    assert "人教版" in str(nxt["output"])  # the demo model quotes what it remembered


def test_job_never_creates_a_fact_and_is_idempotent(teacher: Teacher) -> None:
    body = send(teacher, "我是高一物理老师，以后都用新课标")
    run_job(body)
    run_job(body)
    assert CoreFact.objects.count() == 0
    assert MemoryOp.objects.filter(kind="extract", run_id=body["id"]).count() == 1


def test_output_and_history_are_never_a_source(teacher: Teacher) -> None:
    # The teacher's words hold no preference; the reply quotes history that does.
    first = send(teacher, "我教九年级化学，以后都用沪教版")
    run_job(first)
    CoreCandidate.objects.all().delete()
    second = send(teacher, "好的谢谢，继续下一题", str(first["thread_id"]))
    run_job(second)
    assert CoreCandidate.objects.count() == 0


SENSITIVE_PROPOSALS = [
    {"fact": "学生张伟的身份证号是11010519491231002X", "evidence": "张伟", "confidence": 0.9},
    {"fact": "李华期中数学考了58分，年级第35名", "evidence": "李华", "confidence": 0.9},
    {"fact": "王芳被确诊为抑郁症", "evidence": "王芳", "confidence": 0.9},
    {"fact": "老师偏好人教版教材", "evidence": "人教版", "confidence": 0.8},
]


def test_sensitive_proposals_from_a_model_are_never_stored_and_are_counted(
    fake_llm: FakeLLMServer, db: None
) -> None:
    def reply(body: dict[str, object]) -> str:
        system = str(body["messages"][0]["content"])  # type: ignore[index]
        if "长期记忆提炼器" in system:
            return json.dumps({"facts": SENSITIVE_PROPOSALS}, ensure_ascii=False)
        return "好的"

    fake_llm.reply = reply
    provider = make_provider(name="fake-local", base_url=fake_llm.base_url, locality="local")
    teacher = make_teacher(tenant_name="红线学校", username="rl", provider=provider)
    body = send(teacher, "张伟、李华、王芳这几个学生的情况你记一下，我们用人教版")
    run_job(body)
    stored = list(CoreCandidate.objects.values_list("fact", flat=True))
    assert stored == ["老师偏好人教版教材"]
    audit = {
        row.category: row.count
        for row in RedlineAudit.objects.filter(source=RedlineAudit.Source.CANDIDATE)
    }
    assert audit.get("id_number", 0) >= 1
    assert audit.get("grade", 0) >= 1
    assert audit.get("health", 0) >= 1
    assert "11010519491231002X" not in " ".join(str(v) for v in RedlineAudit.objects.values_list())


def test_confirm_with_sensitive_edit_is_400_and_keeps_the_candidate(teacher: Teacher) -> None:
    body = send(teacher, "我教八年级数学，以后出题都用人教版教材")
    run_job(body)
    candidate = CoreCandidate.objects.first()
    assert candidate is not None
    response = teacher.client.post(
        f"/api/memory/candidates/{candidate.pk}/confirm",
        {"text": "联系我 13800138000"},
        format="json",
    )
    assert response.status_code == 400
    assert "text" in response.json()
    assert CoreCandidate.objects.filter(pk=candidate.pk).exists()
    assert CoreFact.objects.count() == 0


def test_other_tenants_and_colleagues_items_are_404(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    run_job(send(teacher, "我教八年级数学，以后出题都用人教版教材"))
    candidate = CoreCandidate.objects.get()
    for other in (colleague, outsider):
        assert (
            other.client.post(
                f"/api/memory/candidates/{candidate.pk}/confirm", {}, format="json"
            ).status_code
            == 404
        )
        assert other.client.post(f"/api/memory/candidates/{candidate.pk}/reject").status_code == 404
    assert other.client.get(f"/api/agents/{teacher.agent.pk}/memory/candidates").status_code == 404
    # The colleague shares the agent but sees only their own (empty) scope.
    assert (
        colleague.client.get(f"/api/agents/{teacher.agent.pk}/memory/candidates").json()["count"]
        == 0
    )
    confirmed = teacher.client.post(
        f"/api/memory/candidates/{candidate.pk}/confirm", {}, format="json"
    )
    fact_id = confirmed.json()["fact"]["id"]
    for other in (colleague, outsider):
        assert (
            other.client.patch(
                f"/api/memory/facts/{fact_id}", {"text": "x"}, format="json"
            ).status_code
            == 404
        )
        assert other.client.delete(f"/api/memory/facts/{fact_id}").status_code == 404
    admin = make_teacher(
        tenant_name=teacher.tenant.name, username="boss", agent=teacher.agent, role="admin"
    )
    assert (
        admin.client.patch(
            f"/api/memory/facts/{fact_id}", {"text": "教八年级数学，用人教版"}, format="json"
        ).status_code
        == 200
    )


def test_capacity_evicts_the_least_recently_used(teacher: Teacher, settings) -> None:
    settings.CORE_FACTS_MAX = 3
    run = Run.objects.create(
        tenant=teacher.tenant,
        agent=teacher.agent,
        owner=teacher.user,
        input="x",
        status="completed",
    )
    ids = []
    for i in range(4):
        candidate = CoreCandidate.objects.create(
            tenant=teacher.tenant,
            agent=teacher.agent,
            owner=teacher.user,
            fact=f"偏好编号{i}的不同事实内容{'甲乙丙丁'[i] * 5}",
            fact_key=f"k{i}",
            confidence=0.5,
            evidence="x",
            source_run=run,
        )
        if i == 3:
            listing = teacher.client.get(f"/api/agents/{teacher.agent.pk}/memory/facts").json()
            assert listing["count"] == 3 and listing["capacity"] == 3
            # Fact 0 was used recently; fact 1 is the least recently used.
            assert listing["would_evict"]["id"] == ids[1]
        response = teacher.client.post(
            f"/api/memory/candidates/{candidate.pk}/confirm", {}, format="json"
        )
        assert response.status_code == 200
        ids.append(response.json()["fact"]["id"])
        if i == 0:
            send(teacher, "用一下记忆")  # injects fact 0 and touches it
            CoreFact.objects.filter(pk=ids[0]).update(last_used_at="2099-01-01T00:00:00Z")
    assert response.json()["evicted_fact_id"] == ids[1]
    assert set(CoreFact.objects.values_list("pk", flat=True)) == {ids[0], ids[2], ids[3]}


def test_last_used_is_written_at_most_once_per_resolution(teacher: Teacher, settings: Any) -> None:
    settings.CORE_LAST_USED_RESOLUTION = 300
    candidate = candidates_via_job(teacher, "我教八年级数学，以后出题都用人教版教材")[0]
    fact = fact_via_confirm(teacher, candidate)
    scope = Scope.of(fact)

    core_render(scope=scope, budget=300)
    first = CoreFact.objects.get(pk=fact.pk).last_used_at
    assert first is not None  # never used: written at once

    recent = timezone.now() - timedelta(seconds=60)
    CoreFact.objects.filter(pk=fact.pk).update(last_used_at=recent)
    assert core_render(scope=scope, budget=300).ids == (fact.pk,)
    assert CoreFact.objects.get(pk=fact.pk).last_used_at == recent  # within the resolution

    old = timezone.now() - timedelta(seconds=301)
    CoreFact.objects.filter(pk=fact.pk).update(last_used_at=old)
    core_render(scope=scope, budget=300)
    touched = CoreFact.objects.get(pk=fact.pk).last_used_at
    assert touched is not None and touched > recent  # older than the resolution: touched

    settings.CORE_LAST_USED_RESOLUTION = 0  # every injection writes
    core_render(scope=scope, budget=300)
    assert CoreFact.objects.get(pk=fact.pk).last_used_at > touched
