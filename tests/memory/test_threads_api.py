"""Thread endpoints: auth, another tenant or owner, bad input, happy paths, query counts."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from memory.models import Thread
from tests.factories import Teacher, run_via_api

pytestmark = pytest.mark.django_db


send = run_via_api


def test_new_thread_is_titled_from_the_first_input(teacher: Teacher) -> None:
    text = "请帮我出一份关于二叉树遍历、图的最短路径和动态规划的综合练习，难度中等，题量适中"
    body = send(teacher, text)
    thread = Thread.objects.get(pk=body["thread_id"])
    assert thread.title == text[:40]
    assert thread.id.startswith("th_")
    assert (thread.tenant_id, thread.agent_id, thread.owner_id) == (
        teacher.tenant.pk,
        teacher.agent.pk,
        teacher.user.pk,
    )


def test_second_message_joins_the_thread_and_sees_the_first(teacher: Teacher) -> None:
    first = send(teacher, "出一份数据结构试卷")
    second = send(teacher, "简答题换两道", str(first["thread_id"]))
    assert second["thread_id"] == first["thread_id"]
    context = teacher.client.get(f"/api/runs/{second['id']}/context").json()
    assert "‹用户› 出一份数据结构试卷" in context["injected_text"]
    assert str(first["output"]).splitlines()[0] in context["injected_text"]
    assert context["manifest"]["sections"]["thread"]["run_ids"] == [first["id"]]
    assert "出一份数据结构试卷" in str(second["output"])


def test_sync_and_stream_inject_the_same_context(teacher: Teacher) -> None:
    first = send(teacher, "出一份数据结构试卷")
    thread_id = str(first["thread_id"])
    sync = send(teacher, "简答题换两道", thread_id)
    # Same history for the stream run: archive nothing, just compare the thread section
    # each run received for the same prior turns.
    teacher2_first = send(teacher, "出一份数据结构试卷")
    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/run/stream",
        {"input": "简答题换两道", "thread_id": teacher2_first["thread_id"]},
        format="json",
    )
    b"".join(response.streaming_content)
    stream_run = Thread.objects.get(pk=teacher2_first["thread_id"]).runs.order_by("-pk").first()
    assert stream_run is not None
    a = teacher.client.get(f"/api/runs/{sync['id']}/context").json()["injected_text"]
    b = teacher.client.get(f"/api/runs/{stream_run.pk}/context").json()["injected_text"]
    assert a == b and a


@pytest.mark.parametrize("bad", ["th_doesnotexist", "th_0123456789abcdef", "", "x" * 33])
def test_unknown_thread_id_is_400(teacher: Teacher, bad: str) -> None:
    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/run", {"input": "你好", "thread_id": bad}, format="json"
    )
    assert response.status_code == 400
    assert "thread_id" in response.json()


def test_other_tenants_owners_and_agents_threads_are_400_and_reveal_nothing(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    foreign = send(outsider, "外校的会话")["thread_id"]
    mine_other_owner = send(colleague, "同事的会话")["thread_id"]
    missing = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/run",
        {"input": "你好", "thread_id": "th_ffffffffffffffff"},
        format="json",
    ).json()
    for thread_id in (foreign, mine_other_owner):
        response = teacher.client.post(
            f"/api/agents/{teacher.agent.pk}/run",
            {"input": "你好", "thread_id": thread_id},
            format="json",
        )
        assert response.status_code == 400
        assert response.json() == missing  # same answer as a thread that does not exist


def test_thread_of_another_agent_is_400(teacher: Teacher) -> None:
    from agents.models import Agent

    other_agent = Agent.objects.create(
        tenant=teacher.tenant, name="另一个助手", provider=teacher.agent.provider
    )
    thread_id = send(teacher, "第一个助手的会话")["thread_id"]
    response = teacher.client.post(
        f"/api/agents/{other_agent.pk}/run",
        {"input": "你好", "thread_id": thread_id},
        format="json",
    )
    assert response.status_code == 400


def test_continue_run_is_explicit_and_separate_from_the_thread(teacher: Teacher) -> None:
    first = send(teacher, "出一份数据结构试卷")
    plain = send(teacher, "简答题换两道", str(first["thread_id"]))
    manifest = teacher.client.get(f"/api/runs/{plain['id']}/context").json()["manifest"]
    assert manifest["continue_prompt"]["run_id"] is None
    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/run",
        {
            "input": "在这份上把选择题改成5道",
            "thread_id": first["thread_id"],
            "context": {"run_id": first["id"]},
        },
        format="json",
    )
    assert response.status_code == 200
    context = teacher.client.get(f"/api/runs/{response.json()['id']}/context").json()
    assert context["manifest"]["continue_prompt"]["run_id"] == first["id"]
    assert "[上次产物" in context["injected_text"]
    assert context["manifest"]["ledger"]["spent"]["continue_prompt"] > 0


def test_archived_thread_is_reactivated_by_a_run(teacher: Teacher) -> None:
    thread_id = str(send(teacher, "第一问")["thread_id"])
    first = teacher.client.post(f"/api/threads/{thread_id}/archive")
    again = teacher.client.post(f"/api/threads/{thread_id}/archive/")
    assert first.status_code == again.status_code == 200
    assert again.json()["status"] == "archived"
    listed = teacher.client.get(f"/api/agents/{teacher.agent.pk}/threads").json()
    assert listed["count"] == 0
    archived = teacher.client.get(f"/api/agents/{teacher.agent.pk}/threads?status=archived").json()
    assert [t["id"] for t in archived["results"]] == [thread_id]
    send(teacher, "第二问", thread_id)
    assert Thread.objects.get(pk=thread_id).status == "active"


def test_thread_list_is_newest_first_with_counts_and_paginated(
    teacher: Teacher, outsider: Teacher
) -> None:
    ids = []
    for i in range(23):
        ids.append(str(send(teacher, f"会话{i}")["thread_id"]))
    send(teacher, "追问", ids[0])  # the oldest thread becomes the newest
    send(outsider, "外校")
    page1 = teacher.client.get(f"/api/agents/{teacher.agent.pk}/threads").json()
    assert page1["count"] == 23
    assert page1["results"][0]["id"] == ids[0]
    assert page1["results"][0]["run_count"] == 2
    assert page1["results"][1]["id"] == ids[-1]
    page2 = teacher.client.get(f"/api/agents/{teacher.agent.pk}/threads?page=2").json()
    assert len(page1["results"]) == 20 and len(page2["results"]) == 3
    assert not set(t["id"] for t in page1["results"]) & set(t["id"] for t in page2["results"])


def test_thread_list_query_count_does_not_grow_with_threads(teacher: Teacher) -> None:
    def count_queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert teacher.client.get(f"/api/agents/{teacher.agent.pk}/threads").status_code == 200
        return len(ctx.captured_queries)

    send(teacher, "一")
    few = count_queries()
    for i in range(10):
        send(teacher, f"再来{i}")
    assert count_queries() == few <= 5


def test_thread_runs_oldest_first_query_count(teacher: Teacher) -> None:
    thread_id = str(send(teacher, "一")["thread_id"])
    for text in ["二", "三", "四"]:
        send(teacher, text, thread_id)
    with CaptureQueriesContext(connection) as ctx:
        body = teacher.client.get(f"/api/threads/{thread_id}/runs").json()
    assert [r["input"] for r in body["results"]] == ["一", "二", "三", "四"]
    assert all(r["status"] == "completed" and r["output"] for r in body["results"])
    assert len(ctx.captured_queries) <= 6


def test_thread_detail_patch_and_404s(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    thread_id = str(send(teacher, "第一问")["thread_id"])
    detail = teacher.client.get(f"/api/threads/{thread_id}").json()
    for key in (
        "rolling_summary",
        "summary_upto_at",
        "summary_upto_run_id",
        "totals",
        "memory_notice",
    ):
        assert key in detail
    renamed = teacher.client.patch(
        f"/api/threads/{thread_id}", {"title": "  数据结构 期中  "}, format="json"
    )
    assert renamed.status_code == 200 and renamed.json()["title"] == "数据结构 期中"
    assert (
        teacher.client.patch(f"/api/threads/{thread_id}", {"title": ""}, format="json").status_code
        == 400
    )
    assert (
        teacher.client.patch(f"/api/threads/{thread_id}", {"title": 5}, format="json").status_code
        == 400
    )
    assert teacher.client.patch(f"/api/threads/{thread_id}", {}, format="json").status_code == 400
    for other in (colleague, outsider):
        assert other.client.get(f"/api/threads/{thread_id}").status_code == 404
        assert other.client.get(f"/api/threads/{thread_id}/runs").status_code == 404
        assert other.client.post(f"/api/threads/{thread_id}/archive").status_code == 404
        assert (
            other.client.patch(
                f"/api/threads/{thread_id}", {"title": "x"}, format="json"
            ).status_code
            == 404
        )
    assert APIClient().get(f"/api/threads/{thread_id}").status_code == 401
    assert teacher.client.get("/api/threads/th_ffffffffffffffff").status_code == 404
    bad_status = teacher.client.get(f"/api/agents/{teacher.agent.pk}/threads?status=deleted")
    assert bad_status.status_code == 400 and "status" in bad_status.json()


def test_run_context_is_for_the_owner_only(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    run_id = send(teacher, "第一问")["id"]
    assert teacher.client.get(f"/api/runs/{run_id}/context").status_code == 200
    for other in (colleague, outsider):
        assert other.client.get(f"/api/runs/{run_id}/context").status_code == 404
