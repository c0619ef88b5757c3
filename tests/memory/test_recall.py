"""Episodic recall through the API: entries, the gate, injection, scope, the cache."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import Run
from memory.models import RecallEntry
from memory.scope import Scope
from memory.services.jobs import after_run_process
from memory.services.recall import (
    TERMS_MARK,
    RecallQuery,
    recall_cache_clear,
    recall_render,
    recall_search,
)
from tests.factories import Teacher, run_via_api

pytestmark = pytest.mark.django_db

HISTORY = [
    "出一份数据结构期中试卷，重点考二叉树的遍历和图的最短路径",
    "帮我批改这篇英语作文，主题是我的暑假",
    "设计一节关于光合作用的初二生物课教案",
    "出十道一元二次方程的练习题，附答案",
    "给家长写一封关于期末考试安排的通知",
    "整理一下唐诗三首的赏析要点",
    "推荐几本适合初中生的课外阅读书目",
    "出一份化学实验安全须知的小测验",
]


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    recall_cache_clear()


def send(teacher: Teacher, text: str, thread_id: str | None = None) -> dict[str, object]:
    return run_via_api(teacher, text, thread_id, memory_job=True)


def history(teacher: Teacher) -> dict[str, dict[str, object]]:
    return {text: send(teacher, text) for text in HISTORY}


def recalled(teacher: Teacher, run: dict[str, object]) -> list[int]:
    manifest = teacher.client.get(f"/api/runs/{run['id']}/context").json()["manifest"]
    return [e["run_id"] for e in manifest["sections"]["recall"]["entries"]]


def test_related_query_in_a_new_thread_injects_the_old_run(teacher: Teacher) -> None:
    old = history(teacher)
    run = send(teacher, "再出一份和上次类似的数据结构试卷，二叉树部分多一些")
    assert recalled(teacher, run) and recalled(teacher, run)[0] == old[HISTORY[0]]["id"]
    context = teacher.client.get(f"/api/runs/{run['id']}/context").json()["injected_text"]
    assert "[相关历史" in context and "二叉树的遍历" in context
    assert "我想起一次相关的历史" in str(run["output"])


def test_unrelated_query_injects_nothing(teacher: Teacher) -> None:
    history(teacher)
    for text in ["今天天气怎么样", "帮我写一份运动会开幕式的主持词", "怎样给小学生讲分数的意义"]:
        run = send(teacher, text)
        assert recalled(teacher, run) == [], text
        context = teacher.client.get(f"/api/runs/{run['id']}/context").json()
        assert "[相关历史" not in context["injected_text"]
        assert context["manifest"]["sections"]["recall"]["tokens"] == 0


def test_entry_rows_are_read_only_for_a_message_a_past_run_answers(teacher: Teacher) -> None:
    history(teacher)
    scope = Scope.for_agent(teacher.agent, owner_id=teacher.user.pk)
    table = RecallEntry._meta.db_table

    def render(message: str) -> tuple[str, list[str]]:
        with CaptureQueriesContext(connection) as queries:
            rendered, _hits = recall_render(
                scope=scope, query=RecallQuery(message), exclude_run_ids=set(), budget=600
            )
        return rendered.text, [q["sql"] for q in queries.captured_queries]

    render("预热")  # the index is loaded
    unrelated, unrelated_sql = render("帮我写一份运动会开幕式的主持词")
    related, related_sql = render("再出一份数据结构试卷，二叉树的遍历多考一些")

    assert unrelated == "" and not any(table in sql for sql in unrelated_sql)
    assert "二叉树的遍历" in related and any(table in sql for sql in related_sql)


def test_recent_turns_are_not_recalled_again(teacher: Teacher) -> None:
    first = send(teacher, "出一份数据结构期中试卷，重点考二叉树的遍历")
    second = send(teacher, "二叉树的遍历题再多出几道", str(first["thread_id"]))
    assert first["id"] not in recalled(teacher, second)  # it is already a verbatim turn


def test_failed_runs_have_no_entry_and_jobs_are_idempotent(teacher: Teacher) -> None:
    body = send(teacher, "出一份数据结构期中试卷")
    after_run_process(run_id=int(body["id"]))  # type: ignore[call-overload]
    assert RecallEntry.objects.filter(run_id=body["id"]).count() == 1
    failed = Run.objects.create(
        tenant=teacher.tenant,
        agent=teacher.agent,
        owner=teacher.user,
        input="出一份数据结构试卷",
        status=Run.Status.FAILED,
        error_code="provider_timeout",
    )
    after_run_process(run_id=failed.pk)
    assert not RecallEntry.objects.filter(run_id=failed.pk).exists()


def test_entries_are_red_line_filtered(teacher: Teacher) -> None:
    body = send(teacher, "学生张伟的身份证号是11010519491231002X，帮我出一份数据结构试卷")
    entry = RecallEntry.objects.get(run_id=body["id"])
    assert "11010519491231002X" not in entry.text and "(涉及身份证号，略)" in entry.text


def test_another_teachers_memory_is_never_recalled(teacher: Teacher, colleague: Teacher) -> None:
    history(colleague)  # same school, same agent, another owner
    run = send(teacher, "再出一份和上次类似的数据结构试卷，二叉树部分多一些")
    assert recalled(teacher, run) == []
    scope = Scope(tenant_id=teacher.tenant.pk, agent_id=teacher.agent.pk, owner_id=teacher.user.pk)
    hits = recall_search(scope=scope, query=RecallQuery(message="数据结构试卷 二叉树"))
    assert {hit.run_id for hit in hits} == {run["id"]}  # only the teacher's own run


def test_recall_api(teacher: Teacher, outsider: Teacher) -> None:
    old = history(teacher)
    url = f"/api/agents/{teacher.agent.pk}/recall"
    body = teacher.client.get(url, {"q": "数据结构试卷 二叉树 遍历"}).json()
    assert body["threshold"] == settings.RECALL_GATE and body["thread_id"] is None
    top = body["results"][0]
    assert top["run_id"] == old[HISTORY[0]]["id"] and top["passes_gate"] is True
    assert 0.0 <= top["score"] <= 1.0
    assert all(0.0 <= r["score"] <= 1.0 for r in body["results"])
    assert sum(r["passes_gate"] for r in body["results"]) <= 3
    assert teacher.client.get(url).status_code == 400
    assert teacher.client.get(url, {"q": "   "}).status_code == 400
    assert teacher.client.get(url, {"q": "x", "limit": "abc"}).status_code == 400
    assert outsider.client.get(url, {"q": "数据结构"}).status_code == 404
    mine = outsider.client.get(f"/api/agents/{outsider.agent.pk}/recall", {"q": "数据结构"}).json()
    assert mine["results"] == []


def test_index_follows_new_and_deleted_entries(teacher: Teacher) -> None:
    scope = Scope(tenant_id=teacher.tenant.pk, agent_id=teacher.agent.pk, owner_id=teacher.user.pk)
    first = send(teacher, "出一份数据结构期中试卷，重点考二叉树的遍历")
    assert [
        h.run_id for h in recall_search(scope=scope, query=RecallQuery(message="二叉树遍历试卷"))
    ] == [first["id"]]
    second = send(teacher, "再出一份二叉树遍历的专项练习")
    assert {
        h.run_id for h in recall_search(scope=scope, query=RecallQuery(message="二叉树遍历"))
    } == {
        first["id"],
        second["id"],
    }
    Run.objects.filter(pk=first["id"]).delete()  # cascades to its entry
    third = send(teacher, "图的最短路径练习题")  # any write bumps the scope version
    ids = {
        h.run_id
        for h in recall_search(scope=scope, query=RecallQuery(message="二叉树遍历 最短路径"))
    }
    assert first["id"] not in ids and {second["id"], third["id"]} <= ids


# -- the conversation asks, not only the message (gate v2) ---------------------------------
TOPICS = [
    "出一份光合作用的单元测验，考叶绿体、光反应和暗反应",
    "出一份牛顿第二定律的单元测验，重点是受力分析和加速度",
    "出一份二次函数的单元测验，考顶点坐标和对称轴",
    "设计一节辛亥革命的历史课教案",
    "给家长写一封关于春游安全的通知",
]


def test_a_vague_follow_up_recalls_the_matching_run_of_another_thread(teacher: Teacher) -> None:
    old = {text: send(teacher, text) for text in TOPICS}  # each in a thread of its own
    first = send(teacher, "下周讲光合作用，实验怎么设计比较好？")
    follow = send(teacher, "像上次那样出一份单元测验", str(first["thread_id"]))
    ids = recalled(teacher, follow)
    assert ids and ids[0] == old[TOPICS[0]]["id"]  # the biology quiz, from another thread
    assert not {old[text]["id"] for text in TOPICS[1:]} & set(ids)  # no other topic
    context = teacher.client.get(f"/api/runs/{follow['id']}/context").json()
    assert "叶绿体" in context["injected_text"]
    # The same follow-up in a thread about Newton's law recalls that quiz instead.
    physics = send(teacher, "牛顿第二定律的受力分析怎么讲清楚？")
    again = send(teacher, "像上次那样出一份单元测验", str(physics["thread_id"]))
    ids = recalled(teacher, again)
    assert ids and ids[0] == old[TOPICS[1]]["id"]
    # (Not asserted for the other quizzes here: the offline model's answers quote what
    # was recalled for them, so the 二次函数 quiz's entry now holds the physics quiz too.)
    assert old[TOPICS[0]]["id"] not in ids and old[TOPICS[3]]["id"] not in ids


def test_the_recall_api_builds_the_query_from_the_thread(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    old = {text: send(teacher, text) for text in TOPICS}
    first = send(teacher, "下周讲光合作用，实验怎么设计比较好？")
    url = f"/api/agents/{teacher.agent.pk}/recall"
    biology = old[TOPICS[0]]["id"]
    alone = teacher.client.get(url, {"q": "像上次那样出一份单元测验"}).json()
    body = teacher.client.get(
        url, {"q": "像上次那样出一份单元测验", "thread_id": first["thread_id"]}
    ).json()
    assert body["thread_id"] == first["thread_id"]
    passed = [r["run_id"] for r in body["results"] if r["passes_gate"]]
    assert passed == [biology]  # the thread's topic decides among the quizzes
    score = {r["run_id"]: r["score"] for r in alone["results"]}
    assert alone["results"][0]["run_id"] != biology  # alone, the message cannot tell
    assert body["results"][0]["score"] > score[biology]
    # Another owner's, another tenant's or a missing thread: the run endpoints' 400.
    theirs = send(colleague, "出一份光合作用的单元测验")
    foreign = run_via_api(outsider, "出一份光合作用的单元测验")
    for thread_id in (theirs["thread_id"], foreign["thread_id"], "th_missing", "x" * 33):
        response = teacher.client.get(url, {"q": "单元测验", "thread_id": thread_id})
        assert response.status_code == 400, thread_id
        assert "thread_id" in response.json()
    run = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/run",
        {"input": "单元测验", "thread_id": theirs["thread_id"]},
        format="json",
    )
    assert run.status_code == 400
    message = teacher.client.get(url, {"q": "单元测验", "thread_id": theirs["thread_id"]}).json()
    assert message["thread_id"] == run.json()["thread_id"]


def test_entries_written_by_an_older_tokenizer_are_retokenised(teacher: Teacher) -> None:
    body = send(teacher, "出一份数据结构期中试卷，重点考二叉树的遍历")
    entry = RecallEntry.objects.get(run_id=body["id"])
    assert entry.terms.split()[0] == TERMS_MARK
    RecallEntry.objects.filter(pk=entry.pk).update(terms="tim old terms")  # version 1
    send(teacher, "写一封家长会通知")  # bumps the scope: the index is rebuilt
    recall_cache_clear()
    scope = Scope(tenant_id=teacher.tenant.pk, agent_id=teacher.agent.pk, owner_id=teacher.user.pk)
    hits = recall_search(scope=scope, query=RecallQuery(message="二叉树遍历"))
    assert hits and hits[0].run_id == body["id"]


# -- who the question is about (the gate's name features) ---------------------------------
ENGLISH_RUNS = [
    "Write a short note to Omar's parents: Omar finished the reading log and wrote a poem",
    "Plan a reading group for Grade 5 on the novel Charlotte's Web, four sessions",
    "Draft a science worksheet on the water cycle with six questions",
    "Make a vocabulary list about weather for the English club",
]


def test_a_question_about_a_named_pupil_recalls_only_from_a_memory_that_knows_them(
    teacher: Teacher,
) -> None:
    old = {text: send(teacher, text) for text in ENGLISH_RUNS}
    scope = Scope(tenant_id=teacher.tenant.pk, agent_id=teacher.agent.pk, owner_id=teacher.user.pk)
    asked = recall_search(
        scope=scope, query=RecallQuery(message="Did Omar finish the reading log?")
    )
    assert asked[0].run_id == old[ENGLISH_RUNS[0]]["id"] and asked[0].passes_gate
    # The same words about a pupil this memory has never mentioned: Omar's note matches them
    # as well, but it is about someone else, and nothing is injected.
    stranger = recall_search(
        scope=scope, query=RecallQuery(message="Did Priya finish the reading log?")
    )
    assert stranger[0].run_id == old[ENGLISH_RUNS[0]]["id"]
    assert not [hit for hit in stranger if hit.passes_gate]
