"""Forgetting reaches the knowledge base (L4, issue #14).

Deleting a thread or a run deletes the archived artifacts of its runs; forgetting a text
deletes the requesting teacher's private documents that mention it (the tenant's, for
its administrator). After each cascade neither ``kb_search`` nor the search API finds
the chunks, even from an index that was warm before (the version row moved).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from agents.models import Agent, Run
from memory.models import KBChunk, KBDocument, KBIndexState, MemoryJob
from memory.scope import Scope
from memory.services.forget import memory_job_process
from memory.services.kb import kb_cache_clear, kb_search
from memory.services.kb_documents import (
    kb_artifact_archive,
    kb_document_create,
    kb_document_process,
)
from memory.services.recall import recall_cache_clear
from tests.factories import Teacher, run_via_api, school_admin_browser

pytestmark = pytest.mark.django_db(transaction=True)

STUDENT = "王小明"


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    recall_cache_clear()
    kb_cache_clear()


def archiving(teacher: Teacher) -> None:
    Agent.objects.filter(pk=teacher.agent.pk).update(archive_artifacts=True)


def send(teacher: Teacher, text: str, thread_id: str | None = None) -> dict[str, Any]:
    return run_via_api(teacher, text, thread_id, memory_job=True)


def artifact_of(run: dict[str, Any]) -> int:
    return KBDocument.objects.values_list("pk", flat=True).get(source_run_id=run["id"])


def document(teacher: Teacher, text: str, *, visibility: str = "private") -> int:
    created = kb_document_create(
        agent=teacher.agent,
        owner_id=teacher.user.pk,
        visibility=visibility,
        title=text[:12],
        text=text,
    )
    kb_document_process(document_id=created.pk)
    assert KBDocument.objects.get(pk=created.pk).status == KBDocument.Status.READY
    return created.pk


def found(teacher: Teacher, query: str) -> set[int]:
    """The documents a search finds, through the service and through the API (the same)."""
    scope = Scope.for_agent(teacher.agent, owner_id=teacher.user.pk)
    by_service = {hit.document_id for hit in kb_search(scope=scope, query=query, limit=20)}
    response = teacher.client.get(
        f"/api/agents/{teacher.agent.pk}/kb/search", {"q": query, "limit": 20}
    )
    assert response.status_code == 200, response.content
    by_api = {hit["document_id"] for hit in response.json()["results"]}
    assert by_api <= by_service
    return by_service


def versions(teacher: Teacher) -> dict[int | None, int]:
    return dict(KBIndexState.objects.filter(agent=teacher.agent).values_list("owner_id", "version"))


def job_of(response: Any) -> MemoryJob:
    job_id = int(response["Link"].split("/api/memory/jobs/")[1].split(">")[0])
    return MemoryJob.objects.get(pk=job_id)


def test_deleting_a_thread_deletes_the_artifacts_of_its_runs(teacher: Teacher) -> None:
    archiving(teacher)
    first = send(teacher, "出一份数据结构期中试卷，考二叉树遍历")
    second = send(teacher, "二叉树遍历再加一道大题", str(first["thread_id"]))
    other = send(teacher, "另一个会话：二叉树遍历的练习")
    gone = {artifact_of(first), artifact_of(second)}
    chunks = KBChunk.objects.filter(document_id__in=gone).count()
    assert gone | {artifact_of(other)} <= found(teacher, "二叉树遍历")  # the index is warm
    before = versions(teacher)

    response = teacher.client.delete(f"/api/threads/{first['thread_id']}")

    assert response.status_code == 204
    job = job_of(response)
    assert job.status == MemoryJob.Status.DONE
    assert (job.counts["kb_documents"], job.counts["kb_chunks"]) == (2, chunks)
    assert not KBDocument.objects.filter(pk__in=gone).exists()
    assert not KBChunk.objects.filter(document_id__in=gone).exists()
    assert versions(teacher)[teacher.user.pk] > before[teacher.user.pk]
    assert found(teacher, "二叉树遍历") == {artifact_of(other)}
    # Idempotent: the job again deletes nothing more.
    MemoryJob.objects.filter(pk=job.pk).update(status=MemoryJob.Status.FAILED)
    assert memory_job_process(job_id=job.pk).counts == {}


def test_deleting_a_run_deletes_its_artifact_only(teacher: Teacher) -> None:
    archiving(teacher)
    first = send(teacher, "出一份光合作用单元测验")
    second = send(teacher, "光合作用单元测验加一道实验题", str(first["thread_id"]))
    assert {artifact_of(first), artifact_of(second)} <= found(teacher, "光合作用单元测验")
    gone = artifact_of(second)

    response = teacher.client.delete(f"/api/runs/{second['id']}")

    assert response.status_code == 204
    assert job_of(response).counts["kb_documents"] == 1
    assert not KBDocument.objects.filter(pk=gone).exists()
    assert found(teacher, "光合作用单元测验") == {artifact_of(first)}


def test_forgetting_a_text_deletes_the_teachers_private_documents_that_mention_it(
    teacher: Teacher, colleague: Teacher
) -> None:
    archiving(teacher)
    mentioned = document(teacher, f"# 家访记录\n\n{STUDENT}的家长希望多布置阅读作业。")
    titled = KBDocument.objects.create(  # only its title names the student
        tenant=teacher.tenant,
        agent=teacher.agent,
        owner=teacher.user,
        kind="text",
        title=f"{STUDENT}的成绩单",
        visibility="private",
        status="ready",
    ).pk
    spelled = document(teacher, "# 座位表\n\n王\u200b小明坐第一排，阅读作业按时交。")
    unrelated = document(teacher, "# 阅读作业\n\n每周阅读作业两篇，周五交。")
    shared = document(teacher, f"# 班级公告\n\n{STUDENT}获得阅读作业之星。", visibility="agent")
    theirs = document(colleague, f"# 课代表\n\n{STUDENT}是课代表，收阅读作业。")
    run = send(teacher, f"给{STUDENT}布置阅读作业")
    artifact = artifact_of(run)
    assert {mentioned, spelled, unrelated, shared, artifact} <= found(teacher, "阅读作业")
    before = versions(teacher)

    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/memory/forget", {"text": STUDENT}, format="json"
    )

    assert response.status_code == 202
    job = job_of(response)
    assert job.status == MemoryJob.Status.DONE
    gone = {mentioned, titled, spelled, artifact}
    assert job.counts["kb_documents"] == len(gone)
    assert set(KBDocument.objects.values_list("pk", flat=True)) == {unrelated, shared, theirs}
    assert versions(teacher)[teacher.user.pk] > before[teacher.user.pk]
    # Shared documents are the school's material, a colleague's private one is theirs.
    assert found(teacher, "阅读作业") == {unrelated, shared}
    assert found(colleague, "阅读作业") == {shared, theirs}
    scope = Scope.for_agent(teacher.agent, owner_id=teacher.user.pk)
    assert all(
        STUDENT not in hit.text
        for hit in kb_search(scope=scope, query=STUDENT)
        if hit.document_id != shared
    )


def test_a_tenant_wide_forget_deletes_every_private_document_of_the_school_that_mentions_it(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    mine = document(teacher, f"# 家访\n\n{STUDENT}的家长来访。")
    theirs = document(colleague, f"# 课代表\n\n{STUDENT}是课代表。")
    shared = document(teacher, f"# 公告\n\n{STUDENT}获奖。", visibility="agent")
    elsewhere = document(outsider, f"# 学生\n\n{STUDENT}是另一所学校的学生。")
    _head, browser = school_admin_browser(teacher)

    response = browser.post(f"/admin/agents/tenant/{teacher.tenant.pk}/forget/", {"text": STUDENT})

    assert response.status_code == 302
    job = MemoryJob.objects.get()
    assert job.counts["kb_documents"] == 2
    assert set(KBDocument.objects.values_list("pk", flat=True)) == {shared, elsewhere}
    assert mine not in found(teacher, "家访") and theirs not in found(colleague, "课代表")
    assert found(outsider, "另一所学校的学生") == {elsewhere}


def test_an_archive_that_read_the_run_before_a_delete_or_a_forget_stores_nothing_stale(
    teacher: Teacher,
) -> None:
    """The memory job read the run, then a cascade erased or redacted it: the archive
    re-reads the run under its lock and stores what it holds now (or nothing)."""
    deleted, redacted = (
        Run.objects.get(pk=send(teacher, text)["id"])
        for text in ("出一份光合作用单元测验", f"给{STUDENT}出一份阅读作业")
    )
    Run.objects.filter(pk=deleted.pk).update(deleted_at=timezone.now())
    Run.objects.filter(pk=redacted.pk).update(output=redacted.output.replace(STUDENT, "（已遗忘）"))
    assert STUDENT in redacted.output  # the job's copy is stale

    assert kb_artifact_archive(run=deleted) is None
    artifact = kb_artifact_archive(run=redacted)

    assert artifact is not None and not KBDocument.objects.filter(source_run=deleted).exists()
    text = "".join(KBChunk.objects.filter(document=artifact).values_list("text", flat=True))
    assert "（已遗忘）" in text and STUDENT not in text
