"""The operators' admin: cost totals by value, and actions that go through the services."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents.models import Membership, Run
from memory.models import CoreCandidate, CoreFact, KBChunk, KBDocument, KBIndexState, MemoryOp
from memory.services.kb_documents import kb_document_create
from tests.factories import Teacher, candidates_via_job, fact_via_confirm, run_via_api

pytestmark = pytest.mark.django_db

THREE_FACTS = "我教八年级数学。以后出题都用人教版教材。每次作业都要附答案"


def operator(teacher: Teacher | None = None) -> Client:
    """A superuser; an administrator of the teacher's school if a teacher is given."""
    count = get_user_model().objects.count()
    user = get_user_model().objects.create_superuser(f"ops{count}", "ops@example.com", "pw")
    if teacher is not None:
        Membership.objects.create(tenant=teacher.tenant, user=user, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(user)
    return client


def flashed(response: Any) -> list[str]:
    return [str(message) for message in response.context["messages"]]


# -- cost totals ----------------------------------------------------------------------------
@pytest.fixture
def costed(teacher: Teacher, outsider: Teacher) -> dict[str, Any]:
    """Two threads of the teacher and one of an outsider, with known run and op costs."""
    first = run_via_api(teacher, "出一份数据结构试卷", memory_job=True)
    thread_a = str(first["thread_id"])
    run_via_api(teacher, "简答题换两道", thread_a, memory_job=True)
    run_via_api(teacher, "再来一份", thread_a, memory_job=True)
    thread_b = str(
        run_via_api(teacher, "我教八年级数学，以后都用人教版", memory_job=True)["thread_id"]
    )
    thread_c = str(run_via_api(outsider, "外校的会话", memory_job=True)["thread_id"])
    Run.objects.filter(thread_id=thread_a).update(cost=Decimal("0.001500"))
    Run.objects.filter(thread_id=thread_b).update(cost=Decimal("0.000700"))
    Run.objects.filter(thread_id=thread_c).update(cost=Decimal("0.090000"))
    MemoryOp.objects.filter(thread_id=thread_a).update(cost=Decimal("0.000250"))
    MemoryOp.objects.filter(thread_id=thread_b).update(cost=Decimal("0.000030"))
    MemoryOp.objects.filter(thread_id=thread_c).update(cost=Decimal("0.500000"))
    return {"a": thread_a, "b": thread_b, "c": thread_c}


def expected(**filters: Any) -> dict[str, Any]:
    """The totals, summed in Python from the rows (not by the selector under test)."""
    runs = list(Run.objects.filter(**filters))
    ops = list(MemoryOp.objects.filter(**filters))
    run_cost = sum((r.cost for r in runs), Decimal(0))
    memory_cost = sum((o.cost for o in ops), Decimal(0))
    return {
        "run_count": len(runs),
        "run_cost": run_cost,
        "run_input_tokens": sum(r.input_tokens for r in runs),
        "run_output_tokens": sum(r.output_tokens for r in runs),
        "memory_op_count": len(ops),
        "memory_cost": memory_cost,
        "memory_input_tokens": sum(o.input_tokens for o in ops),
        "memory_output_tokens": sum(o.output_tokens for o in ops),
        "total_cost": run_cost + memory_cost,
    }


def test_thread_api_totals_are_the_rows_sums(teacher: Teacher, costed: dict[str, Any]) -> None:
    want = expected(thread_id=costed["a"])
    assert want["run_count"] == 3 and want["memory_op_count"] >= 3
    assert want["run_input_tokens"] > 0 and want["memory_input_tokens"] > 0
    totals = teacher.client.get(f"/api/threads/{costed['a']}").json()["totals"]
    # Numbers in JSON, as before: costs are floats of the Decimal sums.
    assert totals == {
        key: float(value) if isinstance(value, Decimal) else value for key, value in want.items()
    }
    assert list(totals) == list(want)  # the same keys in the same order
    assert totals["run_cost"] == pytest.approx(0.0045)


def test_changelist_cost_columns_are_the_rows_sums(
    teacher: Teacher, outsider: Teacher, costed: dict[str, Any]
) -> None:
    client = operator()
    pages = {
        "/admin/memory/thread/": ("thread_id", [costed["a"], costed["b"], costed["c"]]),
        "/admin/agents/agent/": ("agent_id", [teacher.agent.pk, outsider.agent.pk]),
        "/admin/agents/tenant/": ("tenant_id", [teacher.tenant.pk, outsider.tenant.pk]),
    }
    for url, (key, ids) in pages.items():
        response = client.get(url)
        assert response.status_code == 200
        rows = {row.pk: row for row in response.context["cl"].result_list}
        assert set(ids) <= set(rows)
        for pk in ids:
            want = expected(**{key: pk})
            totals = rows[pk].cost_totals
            assert (totals.run_cost, totals.memory_cost, totals.total_cost) == (
                want["run_cost"],
                want["memory_cost"],
                want["total_cost"],
            ), (url, pk)


def test_cost_columns_sort_by_value(costed: dict[str, Any]) -> None:
    client = operator()
    # The changelist's own columns (with the action checkbox first).
    column = client.get("/admin/memory/thread/").context["cl"].list_display.index("run_cost_total")
    ascending = client.get(f"/admin/memory/thread/?o={column}").context["cl"].result_list
    descending = client.get(f"/admin/memory/thread/?o=-{column}").context["cl"].result_list
    assert [t.pk for t in ascending] == [costed["b"], costed["a"], costed["c"]]
    assert [t.pk for t in descending] == [costed["c"], costed["a"], costed["b"]]


def test_thread_changelist_queries_do_not_grow_with_rows(teacher: Teacher) -> None:
    client = operator()

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get("/admin/memory/thread/").status_code == 200
        return len(ctx.captured_queries)

    run_via_api(teacher, "一")
    queries()  # a session's first request also reads the account's language (once)
    few = queries()
    for i in range(6):
        run_via_api(teacher, f"会话{i}")
    assert queries() == few


def test_memory_op_changelist_states_the_filtered_totals(costed: dict[str, Any]) -> None:
    client = operator()
    response = client.get("/admin/memory/memoryop/?kind__exact=extract")
    ops = list(MemoryOp.objects.filter(kind="extract"))
    cost = sum((o.cost for o in ops), Decimal(0))
    assert flashed(response) == [
        f"当前筛选合计：{len(ops)} 次，输入 {sum(o.input_tokens for o in ops)} token，"
        f"输出 {sum(o.output_tokens for o in ops)} token，成本 {cost}"
    ]


# -- actions through the services ---------------------------------------------------------
def act(client: Client, url: str, action: str, ids: list[int]) -> Any:
    response = client.post(url, {"action": action, "_selected_action": ids}, follow=True)
    assert response.status_code == 200
    return response


def test_confirm_action_confirms_lowest_confidence_first_and_reports(
    teacher: Teacher, settings: Any
) -> None:
    settings.CORE_FACTS_MAX = 2
    candidates = candidates_via_job(teacher, THREE_FACTS)
    for candidate, value in zip(candidates, [0.9, 0.8, 0.4], strict=True):
        CoreCandidate.objects.filter(pk=candidate.pk).update(confidence=value)
    response = act(
        operator(teacher),
        "/admin/memory/corecandidate/",
        "confirm_candidates",
        [c.pk for c in candidates],
    )
    assert flashed(response) == [
        "已确认 3 条，未能确认 0 条。",
        "已达上限，已淘汰最久未使用的记忆：「每次作业都要附答案」",
    ]
    assert set(CoreFact.objects.values_list("text", flat=True)) == {
        "我教八年级数学",
        "以后出题都用人教版教材",
    }
    assert not CoreCandidate.objects.exists()


def test_an_operator_outside_the_school_changes_nothing(teacher: Teacher) -> None:
    candidates = candidates_via_job(teacher, THREE_FACTS)
    fact = fact_via_confirm(teacher, candidates[0])
    client = operator()
    ids = [c.pk for c in candidates[1:]]
    response = act(client, "/admin/memory/corecandidate/", "confirm_candidates", ids)
    assert flashed(response) == ["已确认 0 条，未能确认 2 条。"]
    response = act(client, "/admin/memory/corecandidate/", "reject_candidates", ids)
    assert flashed(response) == ["已删除 0 条，无权删除 2 条。"]
    response = act(client, "/admin/memory/corefact/", "delete_facts", [fact.pk])
    assert flashed(response) == ["已删除 0 条，无权删除 1 条。"]
    assert CoreCandidate.objects.count() == 2 and CoreFact.objects.count() == 1


def test_reject_and_delete_actions_go_through_the_services(teacher: Teacher) -> None:
    candidates = candidates_via_job(teacher, THREE_FACTS)
    fact = fact_via_confirm(teacher, candidates[0])
    client = operator(teacher)
    response = act(client, "/admin/memory/corecandidate/", "reject_candidates", [candidates[1].pk])
    assert flashed(response) == ["已删除 1 条，无权删除 0 条。"]
    response = act(client, "/admin/memory/corefact/", "delete_facts", [fact.pk])
    assert flashed(response) == ["已删除 1 条，无权删除 0 条。"]
    assert list(CoreCandidate.objects.values_list("pk", flat=True)) == [candidates[2].pk]
    assert not CoreFact.objects.exists()


def test_djangos_own_delete_is_not_offered(teacher: Teacher) -> None:
    candidates = candidates_via_job(teacher, THREE_FACTS)
    fact = fact_via_confirm(teacher, candidates[0])
    client = operator(teacher)
    for url, model_id in (
        ("/admin/memory/corecandidate/", candidates[1].pk),
        ("/admin/memory/corefact/", fact.pk),
    ):
        choices = dict(client.get(url).context["action_form"].fields["action"].choices)
        assert "delete_selected" not in choices
        client.post(
            url, {"action": "delete_selected", "_selected_action": [model_id], "post": "yes"}
        )
        assert client.get(f"{url}{model_id}/delete/").status_code == 403
    assert CoreCandidate.objects.filter(pk=candidates[1].pk).exists()
    assert CoreFact.objects.filter(pk=fact.pk).exists()


def test_another_school_admin_cannot_act(teacher: Teacher, outsider: Teacher) -> None:
    candidates = candidates_via_job(teacher, THREE_FACTS)
    response = act(
        operator(outsider), "/admin/memory/corecandidate/", "confirm_candidates", [candidates[0].pk]
    )
    assert flashed(response) == ["已确认 0 条，未能确认 1 条。"]
    assert not CoreFact.objects.exists()


# -- the knowledge base ---------------------------------------------------------------------
def test_kb_documents_and_chunks_are_browsable_and_failures_show_why(
    teacher: Teacher, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        good = kb_document_create(
            agent=teacher.agent,
            owner_id=teacher.user.pk,
            title="校规",
            text="# 校规\n\n迟到三次记警告。",
        )
        bad = kb_document_create(
            agent=teacher.agent,
            owner_id=teacher.user.pk,
            title="坏文件",
            filename="坏.pdf",
            data=b"%PDF-1.4 broken",
        )
    client = operator(teacher)
    listing = client.get("/admin/memory/kbdocument/?status__exact=failed").content.decode()
    assert "坏文件" in listing and "文件已损坏" in listing and "校规" not in listing
    assert client.get(f"/admin/memory/kbdocument/{good.pk}/change/").status_code == 200
    chunk = KBChunk.objects.get(document=good)
    assert "迟到三次记警告" in client.get("/admin/memory/kbchunk/").content.decode()
    assert client.get(f"/admin/memory/kbchunk/{chunk.pk}/change/").status_code == 200
    version = KBIndexState.objects.get().version
    response = client.post(
        "/admin/memory/kbdocument/",
        {"action": "delete_kb_documents", "_selected_action": [good.pk, bad.pk]},
        follow=True,
    )
    assert "已删除 2 份文档。" in flashed(response)
    assert not KBDocument.objects.exists() and not KBChunk.objects.exists()
    assert KBIndexState.objects.get().version == version + 1  # through the service
