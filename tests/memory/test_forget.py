"""Forgetting that cascades (issue #14): delete a thread, delete a run, forget a text.

Everything goes through the API and the real job (sync cluster: the job runs on commit,
in the worker's code path). Each test checks what is gone from every layer, that what
must stay stays (facts a person confirmed, cost rows), that cost totals still add up,
and that running the job again changes nothing.
"""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import Client
from django.utils import timezone

from agents.models import Membership, Run
from agents.providers.base import Completion
from memory.models import (
    CoreCandidate,
    CoreFact,
    MemoryAuditEvent,
    MemoryJob,
    MemoryOp,
    RecallEntry,
    RunContext,
    Thread,
)
from memory.scope import Scope
from memory.selectors import cost_totals
from memory.services import compression, forget
from memory.services.forget import memory_job_process
from memory.services.recall import RecallQuery, recall_cache_clear, recall_search
from memory.services.sweeper import memory_sweep
from runs.services import run_finish, run_start
from tests.factories import (
    Teacher,
    fact_via_confirm,
    make_teacher,
    run_via_api,
    school_admin_browser,
)

# Transactional: the sync cluster runs each job right after its request commits, as the
# worker would (inside a test transaction nothing would ever commit).
pytestmark = pytest.mark.django_db(transaction=True)

STUDENT = "王小明"


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    recall_cache_clear()


def send(teacher: Teacher, text: str, thread_id: str | None = None) -> dict[str, Any]:
    return run_via_api(teacher, text, thread_id, memory_job=True)


def scope_of(teacher: Teacher) -> Scope:
    return Scope.for_agent(teacher.agent, owner_id=teacher.user.pk)


def search(teacher: Teacher, text: str) -> set[int]:
    return {h.run_id for h in recall_search(scope=scope_of(teacher), query=RecallQuery(text))}


def agent_totals(teacher: Teacher) -> tuple[Decimal, Decimal, int, int]:
    totals = cost_totals(
        memory_ops=MemoryOp.objects.filter(agent=teacher.agent),
        runs=Run.objects.filter(agent=teacher.agent),
    )
    return totals.run_cost, totals.memory_cost, totals.run_input_tokens, totals.memory_op_count


def priced(teacher: Teacher) -> None:
    """Give every run and memory op a cost, so that totals are not trivially zero."""
    Run.objects.filter(agent=teacher.agent).update(cost=Decimal("0.001250"))
    MemoryOp.objects.filter(agent=teacher.agent).update(cost=Decimal("0.000300"))


def job_from(response: Any) -> MemoryJob:
    match = re.fullmatch(r'</api/memory/jobs/(\d+)>; rel="monitor"', response["Link"])
    assert match, response["Link"]
    return MemoryJob.objects.get(pk=int(match[1]))


def conversation(teacher: Teacher) -> tuple[str, list[dict[str, Any]]]:
    """A thread of four runs: the first two folded into its summary."""
    first = send(teacher, f"我班上的{STUDENT}数学很好，出一份数据结构期中试卷，考二叉树遍历")
    thread_id = str(first["thread_id"])
    runs = [first] + [
        send(teacher, text, thread_id)
        for text in ("简答题换两道图的最短路径", "再加一道动态规划大题", "最后附上参考答案")
    ]
    return thread_id, runs


# -- delete a thread ----------------------------------------------------------------------------
def test_deleting_a_thread_erases_every_layer_and_keeps_the_costs(teacher: Teacher) -> None:
    thread_id, runs = conversation(teacher)
    other = send(teacher, "另一个会话：出一份二叉树遍历的练习")
    run_ids = [r["id"] for r in runs]
    candidate_run = send(teacher, "我教八年级数学", thread_id)
    run_ids.append(candidate_run["id"])
    assert CoreCandidate.objects.filter(source_run_id=candidate_run["id"]).exists()
    kept_fact = fact_via_confirm(
        teacher, CoreCandidate.objects.get(source_run_id=candidate_run["id"])
    )
    assert Thread.objects.get(pk=thread_id).rolling_summary
    assert set(run_ids[:2]) <= search(teacher, "二叉树遍历 数据结构")
    # The other thread's run was shown one of this thread's runs (recall): its manifest
    # goes too, the run itself stays.
    shown = RunContext.objects.get(run_id=other["id"]).manifest["sections"]["recall"]["entries"]
    assert {e["run_id"] for e in shown} & set(run_ids)
    priced(teacher)
    before = agent_totals(teacher)

    response = teacher.client.delete(f"/api/threads/{thread_id}")

    assert response.status_code == 204
    job = job_from(response)
    assert job.status == MemoryJob.Status.DONE
    assert job.counts == {
        "runs": len(run_ids),
        "run_contexts": len(run_ids) + 1,
        "recall_entries": len(run_ids),
        "candidates": 0,  # the one candidate was confirmed: the fact stays
        "threads": 1,
    }
    # L1: the thread is gone, for the API and the database.
    assert teacher.client.get(f"/api/threads/{thread_id}").status_code == 404
    assert not Thread.objects.filter(pk=thread_id).exists()
    listed = teacher.client.get(f"/api/agents/{teacher.agent.pk}/threads").json()["results"]
    assert thread_id not in {t["id"] for t in listed}
    # L0: the runs stay as numbers only: no text, no thread, not visible.
    for run in Run.objects.filter(pk__in=run_ids):
        assert (run.input, run.output, run.context, run.thread_id) == ("", "", {}, None)
        assert run.deleted_at is not None and run.cost == Decimal("0.001250")
    for run_id in run_ids:
        assert teacher.client.get(f"/api/runs/{run_id}").status_code == 404
    # Manifests and recall entries are gone; search finds only the other thread's run.
    assert not RunContext.objects.filter(run_id__in=run_ids).exists()
    assert not RecallEntry.objects.filter(run_id__in=run_ids).exists()
    assert search(teacher, "二叉树遍历 数据结构") == {other["id"]}
    # L2: the confirmed fact stays; the other thread is untouched.
    assert CoreFact.objects.filter(pk=kept_fact.pk).exists()
    assert RecallEntry.objects.filter(run_id=other["id"]).exists()
    # Cost history still adds up: the agent's totals are what they were.
    assert agent_totals(teacher) == before
    assert MemoryOp.objects.filter(agent=teacher.agent, thread__isnull=True).count() >= 3
    # Idempotent: the job again removes nothing.
    MemoryJob.objects.filter(pk=job.pk).update(status=MemoryJob.Status.FAILED)
    assert memory_job_process(job_id=job.pk).counts == {}
    assert agent_totals(teacher) == before


def test_a_thread_delete_also_drops_manifests_that_recalled_its_runs(teacher: Teacher) -> None:
    old = send(teacher, "出一份数据结构期中试卷，重点考二叉树的遍历和图的最短路径")
    for text in ("帮我批改英语作文", "设计光合作用教案", "写一封期末考试通知"):
        send(teacher, text)
    later = send(teacher, "再出一份和上次类似的数据结构试卷，二叉树部分多一些")
    shown = RunContext.objects.get(run_id=later["id"]).manifest["sections"]["recall"]["entries"]
    assert old["id"] in {e["run_id"] for e in shown}

    response = teacher.client.delete(f"/api/threads/{old['thread_id']}")

    assert response.status_code == 204
    assert not RunContext.objects.filter(run_id=later["id"]).exists()
    assert teacher.client.get(f"/api/runs/{later['id']}").status_code == 200  # the run stays


def test_deleting_a_thread_is_the_owners_alone(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    thread_id, _ = conversation(teacher)
    for other in (colleague, outsider):
        assert other.client.delete(f"/api/threads/{thread_id}").status_code == 404
    assert teacher.client.delete("/api/threads/th_00000000").status_code == 404
    assert Thread.objects.filter(pk=thread_id, deleted_at__isnull=True).exists()
    assert teacher.client.delete(f"/api/threads/{thread_id}").status_code == 204
    assert teacher.client.delete(f"/api/threads/{thread_id}").status_code == 404  # gone


def test_a_deleted_thread_takes_no_new_run(teacher: Teacher) -> None:
    thread_id, _ = conversation(teacher)
    teacher.client.delete(f"/api/threads/{thread_id}")
    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/run",
        {"input": "继续", "thread_id": thread_id},
        format="json",
    )
    assert response.status_code == 400
    assert "thread_id" in response.json()


# -- delete a run -------------------------------------------------------------------------------
def folded_markers(thread_id: str) -> set[int]:
    """The run ids the offline model's summary says it folded (one ``#id`` per run)."""
    return {int(m) for m in re.findall(r"#(\d+)", Thread.objects.get(pk=thread_id).rolling_summary)}


def test_deleting_a_covered_run_rebuilds_the_summary_from_the_rest(teacher: Teacher) -> None:
    thread_id, runs = conversation(teacher)
    first, second = runs[0]["id"], runs[1]["id"]
    assert folded_markers(thread_id) == {first, second}
    thread = Thread.objects.get(pk=thread_id)
    version = thread.summary_version
    # Another thread, later: its summary cursor is past the run, but it never held it.
    elsewhere = send(teacher, "写一封期末考试安排的家长通知")
    for text in ("再加一段安全提醒", "改成更正式的语气", "最后加上落款"):
        later_in_elsewhere = send(teacher, text, str(elsewhere["thread_id"]))
    later_manifest = RunContext.objects.get(run_id=later_in_elsewhere["id"]).manifest
    assert first not in {e["run_id"] for e in later_manifest["sections"]["recall"]["entries"]}
    assert later_manifest["sections"]["thread"]["cursor"]["summary_upto_run_id"] > first
    priced(teacher)
    before = agent_totals(teacher)

    response = teacher.client.delete(f"/api/runs/{first}")

    assert response.status_code == 204
    job = job_from(response)
    assert job.status == MemoryJob.Status.DONE, job.error
    assert job.counts["runs"] == 1 and job.counts["recall_entries"] == 1
    assert job.counts["summaries_rebuilt"] == 1
    # The summary no longer holds the run; the cursor is consistent with the remaining
    # runs: everything older than the two most recent is folded, exactly once.
    thread.refresh_from_db()
    remaining = list(
        Run.objects.filter(thread_id=thread_id)
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)
    )
    assert first not in remaining
    assert folded_markers(thread_id) == set(remaining[:-2])
    assert thread.summary_upto_run_id == remaining[-3]
    assert thread.summary_version > version
    assert STUDENT not in thread.rolling_summary
    # The run's own layers.
    assert teacher.client.get(f"/api/runs/{first}").status_code == 404
    assert not RecallEntry.objects.filter(run_id=first).exists()
    assert first not in search(teacher, "二叉树遍历 数据结构 王小明")
    assert not RunContext.objects.filter(run_id=first).exists()
    listed = teacher.client.get(f"/api/threads/{thread_id}/runs").json()["results"]
    assert first not in {r["id"] for r in listed}
    # Manifests that showed it (the next runs' recent turns) are gone too; another
    # thread's are not.
    assert not RunContext.objects.filter(run_id=second).exists()
    assert RunContext.objects.filter(run_id=later_in_elsewhere["id"]).exists()
    # Costs: the run's numbers stay; the rebuild's calls are new memory cost.
    run_cost, memory_cost, tokens, ops = agent_totals(teacher)
    assert run_cost == before[0] and tokens == before[2]
    assert ops > before[3] and memory_cost >= before[1]


def test_deleting_a_recent_run_needs_no_rebuild(teacher: Teacher) -> None:
    thread_id, runs = conversation(teacher)
    summary = Thread.objects.get(pk=thread_id).rolling_summary
    response = teacher.client.delete(f"/api/runs/{runs[-1]['id']}")
    assert response.status_code == 204
    job = job_from(response)
    assert job.status == MemoryJob.Status.DONE
    assert "summaries_rebuilt" not in job.counts
    assert Thread.objects.get(pk=thread_id).rolling_summary == summary


def test_a_compression_that_read_a_deleted_run_is_never_saved(teacher: Teacher) -> None:
    """The compare-and-set includes the summary version that a deletion bumps."""
    thread_id, runs = conversation(teacher)
    thread = Thread.objects.get(pk=thread_id)  # as a compression job read it
    teacher.client.delete(f"/api/runs/{runs[2]['id']}")
    assert not compression._save_if_cursor_unchanged(
        thread=thread,
        summary="stale summary with the deleted run",
        upto_at=thread.summary_upto_at,  # type: ignore[arg-type]
        upto_run_id=thread.summary_upto_run_id or 0,
    )
    assert "stale summary" not in Thread.objects.get(pk=thread_id).rolling_summary


def test_deleting_a_run_is_the_owners_alone(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    run = send(teacher, "出一份数据结构试卷")
    admin = make_admin(teacher)
    for other in (colleague, outsider, admin):
        assert other.client.delete(f"/api/runs/{run['id']}").status_code == 404
    assert teacher.client.delete(f"/api/runs/{run['id']}").status_code == 204
    assert teacher.client.delete(f"/api/runs/{run['id']}").status_code == 404


def make_admin(teacher: Teacher) -> Teacher:
    return make_teacher(
        tenant_name=teacher.tenant.name,
        username="admin1",
        agent=teacher.agent,
        role=Membership.Role.ADMIN,
    )


# -- forget a text -------------------------------------------------------------------------------
def test_forgetting_a_text_reaches_every_layer(teacher: Teacher, colleague: Teacher) -> None:
    thread_id, runs = conversation(teacher)
    # A fact and a candidate that mention the student, one fact that does not.
    mention = send(teacher, f"以后给{STUDENT}单独准备拓展题。我教八年级数学")
    candidates = list(CoreCandidate.objects.filter(source_run_id=mention["id"]).order_by("pk"))
    assert len(candidates) == 2
    fact_about = fact_via_confirm(teacher, next(c for c in candidates if STUDENT in c.fact))
    fact_other = fact_via_confirm(teacher, next(c for c in candidates if STUDENT not in c.fact))
    later = send(teacher, f"以后{STUDENT}的作业都要附答案", thread_id)
    assert CoreCandidate.objects.filter(source_run_id=later["id"]).exists()
    # The colleague's memory mentions the same name: it is not theirs to forget.
    theirs = send(colleague, f"{STUDENT}是我班上的课代表")
    # Spelled with a zero-width space and full-width characters in one place.
    Run.objects.filter(pk=runs[2]["id"]).update(input="再加一道王\u200b小明要做的动态规划大题")
    before_ops = MemoryOp.objects.count()
    mentioning = {
        pk
        for pk, text, answer in Run.objects.filter(owner=teacher.user).values_list(
            "pk", "input", "output"
        )
        if any(name in text + answer for name in (STUDENT, "王\u200b小明"))
    }
    entries = RecallEntry.objects.filter(run_id__in=mentioning).count()

    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/memory/forget", {"text": f" {STUDENT} "}, format="json"
    )

    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued" and body["kind"] == "forget"
    job = teacher.client.get(f"/api/memory/jobs/{body['id']}").json()
    assert job["status"] == "done"
    counts = job["counts"]
    assert counts["facts"] == 1 and counts["candidates"] == 1
    assert counts["runs"] == len(mentioning) >= 4  # inputs and the outputs that echo them
    assert counts["threads"] == 2  # two titles, one of them with its summary
    assert counts["recall_entries"] == counts["recall_entries_rebuilt"] == entries
    assert counts["run_contexts"] >= 1
    # Nothing of the teacher's memory with this agent mentions the student any more.
    scope = scope_of(teacher).filter_kwargs()
    texts = [
        *CoreFact.objects.filter(**scope).values_list("text", flat=True),
        *CoreCandidate.objects.filter(**scope).values_list("fact", "evidence"),
        *Run.objects.filter(**scope).values_list("input", "output"),
        *Thread.objects.filter(**scope).values_list("title", "rolling_summary"),
        *RecallEntry.objects.filter(**scope).values_list("text", flat=True),
        *RunContext.objects.filter(run__owner=teacher.user).values_list("injected_text", flat=True),
        *(
            str(m)
            for m in RunContext.objects.filter(run__owner=teacher.user).values_list(
                "messages", flat=True
            )
        ),
    ]
    flat = " ".join(t if isinstance(t, str) else " ".join(t) for t in texts)
    assert STUDENT not in flat and "王\u200b小明" not in flat
    assert "（已遗忘）" in flat
    assert not CoreFact.objects.filter(pk=fact_about.pk).exists()
    assert CoreFact.objects.filter(pk=fact_other.pk).exists()
    redacted = Run.objects.get(pk=runs[2]["id"])
    assert (
        redacted.redacted_at is not None
        and redacted.input == "再加一道（已遗忘）要做的动态规划大题"
    )
    hits = recall_search(scope=scope_of(teacher), query=RecallQuery(STUDENT))
    assert not any(STUDENT in hit.text or hit.passes_gate for hit in hits)
    assert search(teacher, "动态规划大题")  # rebuilt entries are still recalled
    # The colleague's memory is untouched; no model was called; the text left the job.
    assert STUDENT in Run.objects.get(pk=theirs["id"]).input
    assert MemoryOp.objects.count() == before_ops
    assert STUDENT not in str(MemoryJob.objects.get(pk=body["id"]).params)
    assert STUDENT not in str(list(MemoryAuditEvent.objects.values()))
    # Idempotent.
    MemoryJob.objects.filter(pk=body["id"]).update(
        status=MemoryJob.Status.QUEUED, params={"text": STUDENT}
    )
    again = memory_job_process(job_id=body["id"])
    assert again.counts == {k: 0 for k in again.counts}


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "text"),
        ({"text": ""}, "text"),
        ({"text": "的"}, "text"),
        ({"text": " \u200b王 "}, "text"),
        ({"text": "长" * 201}, "text"),
        ({"text": 12345}, "text"),
        ({"text": ["王小明"]}, "text"),
    ],
)
def test_forget_refuses_bad_input(teacher: Teacher, payload: dict[str, Any], field: str) -> None:
    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/memory/forget", payload, format="json"
    )
    assert response.status_code == 400
    assert field in response.json()
    assert not MemoryJob.objects.exists()


def test_forget_and_its_job_are_the_callers(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    assert (
        outsider.client.post(
            f"/api/agents/{teacher.agent.pk}/memory/forget", {"text": STUDENT}, format="json"
        ).status_code
        == 404
    )
    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/memory/forget", {"text": STUDENT}, format="json"
    )
    job_id = response.json()["id"]
    for other in (colleague, outsider):
        assert other.client.get(f"/api/memory/jobs/{job_id}").status_code == 404
    assert teacher.client.get("/api/memory/jobs/999999").status_code == 404
    anonymous = teacher.client.__class__()
    assert anonymous.get(f"/api/memory/jobs/{job_id}").status_code == 401


# -- tenant-wide, from the admin ------------------------------------------------------------------
def test_a_tenant_admin_forgets_across_the_school_from_the_admin(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    mine = send(teacher, f"{STUDENT}的数学作业")
    theirs = send(colleague, f"{STUDENT}是课代表")
    elsewhere = send(outsider, f"{STUDENT}是另一所学校的学生")
    head, browser = school_admin_browser(teacher)
    url = f"/admin/agents/tenant/{teacher.tenant.pk}/forget/"
    assert browser.get(url).status_code == 200
    assert "text" in browser.post(url, {"text": "王"}).context["form"].errors

    response = browser.post(url, {"text": STUDENT})

    assert response.status_code == 302
    job = MemoryJob.objects.get()
    assert response["Location"] == f"/admin/memory/memoryjob/{job.pk}/change/"
    assert (job.status, job.agent_id, job.owner_id, job.actor_id) == (
        "done",
        None,
        None,
        head.user.pk,
    )
    assert job.counts["runs"] >= 2
    for run, gone in ((mine, True), (theirs, True), (elsewhere, False)):
        assert (STUDENT in Run.objects.get(pk=run["id"]).input) is not gone
    event = MemoryAuditEvent.objects.get(action="forget")
    assert (event.actor_id, event.owner_id, event.detail["tenant_wide"]) == (
        head.user.pk,
        None,
        True,
    )
    # Someone who does not administer the school cannot (another school's admin, a teacher).
    other_head = make_teacher(tenant_name=outsider.tenant.name, username="head2", role="admin")
    other_head.user.is_staff = True
    other_head.user.save()
    browser.force_login(other_head.user)
    assert browser.post(url, {"text": "课代表"}).status_code == 404
    with pytest.raises(PermissionError):
        forget.tenant_forget(tenant_id=teacher.tenant.pk, text="课代表", actor=teacher.user)
    assert MemoryJob.objects.count() == 1


# -- races and recovery --------------------------------------------------------------------------
def test_a_run_deleted_while_the_model_answers_keeps_its_cost_not_its_text(
    teacher: Teacher,
) -> None:
    first = send(teacher, "出一份数据结构试卷")
    started = run_start(
        agent=teacher.agent,
        owner_id=teacher.user.pk,
        user_input="简答题换两道",
        thread_id=str(first["thread_id"]),
    )
    assert teacher.client.delete(f"/api/threads/{first['thread_id']}").status_code == 204
    settled = run_finish(
        run=started.run,
        completion=Completion(text="这是模型的回答", input_tokens=120, output_tokens=80),
    )
    run = Run.objects.get(pk=started.run.pk)
    assert (run.input, run.output, run.status, run.error_code) == ("", "", "failed", "run_deleted")
    assert (run.input_tokens, run.output_tokens) == (120, 80)
    assert settled.output == ""
    assert not RecallEntry.objects.filter(run_id=run.pk).exists()


def test_the_sweeper_recovers_a_lost_governance_job(teacher: Teacher) -> None:
    thread_id, _ = conversation(teacher)
    # A job whose queue task was lost (a Redis push that never happened, a killed worker).
    with transaction.atomic():
        Thread.objects.filter(pk=thread_id).update(deleted_at=timezone.now())
        job = MemoryJob.objects.create(
            tenant=teacher.tenant,
            agent=teacher.agent,
            owner=teacher.user,
            actor=teacher.user,
            kind=MemoryJob.Kind.THREAD_DELETE,
            params={"thread_id": thread_id},
            enqueued_at=timezone.now() - timedelta(hours=1),
        )
    assert memory_sweep().jobs_reenqueued == 1  # the sync cluster runs it on commit
    job.refresh_from_db()
    assert job.status == MemoryJob.Status.DONE and job.counts["threads"] == 1
    assert memory_sweep().jobs_reenqueued == 0


def test_deleting_in_the_admin_goes_through_the_cascade(teacher: Teacher) -> None:
    thread_id, runs = conversation(teacher)
    single = send(teacher, "另一段对话")
    operator = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw")
    browser = Client()
    browser.force_login(operator)
    response = browser.post(f"/admin/memory/thread/{thread_id}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Thread.objects.filter(pk=thread_id).exists()
    assert set(
        Run.objects.filter(pk__in=[r["id"] for r in runs]).values_list("input", "output")
    ) == {("", "")}
    response = browser.post(f"/admin/agents/run/{single['id']}/delete/", {"post": "yes"})
    assert response.status_code == 302
    run = Run.objects.get(pk=single["id"])  # kept as a cost row
    assert (run.input, run.output, run.deleted_at is not None) == ("", "", True)
    assert not RecallEntry.objects.filter(run_id=single["id"]).exists()
    assert MemoryAuditEvent.objects.filter(action="delete", actor_id=operator.pk).count() == 2


def test_a_forgotten_title_stays_within_its_column(teacher: Teacher) -> None:
    """The placeholder is longer than the text it replaces: a title of 100 forgotten names
    is cut to its 200 characters (PostgreSQL refuses a longer value; the API promises the
    length)."""
    thread_id = send(teacher, "出一份数据结构试卷")["thread_id"]
    Thread.objects.filter(pk=thread_id).update(title="李华" * 100)
    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/memory/forget", {"text": "李华"}, format="json"
    )
    assert response.status_code == 202
    job = teacher.client.get(f"/api/memory/jobs/{response.json()['id']}").json()
    assert job["status"] == "done" and job["counts"]["threads"] == 1
    title = Thread.objects.get(pk=thread_id).title
    assert "李华" not in title and 0 < len(title) <= 200
    listed = teacher.client.get(f"/api/agents/{teacher.agent.pk}/threads/").json()["results"]
    assert [t["title"] for t in listed if t["id"] == thread_id] == [title]
