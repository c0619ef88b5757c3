"""Artifact archiving (opt-in per agent) and the agent setting behind it."""

from __future__ import annotations

import pytest
from django.utils import timezone

from agents.models import Agent, Membership, Run
from memory.models import KBChunk, KBDocument
from memory.scope import Scope
from memory.services.jobs import after_run_process
from memory.services.kb import kb_search
from tests.factories import Teacher, make_teacher, run_via_api

pytestmark = pytest.mark.django_db


def test_archiving_is_off_by_default(teacher: Teacher) -> None:
    assert Agent._meta.get_field("archive_artifacts").default is False
    run_via_api(teacher, "出一份光合作用的单元测验", memory_job=True)
    assert not KBDocument.objects.exists()


def test_an_opted_in_agent_archives_each_completed_run_once_as_a_private_document(
    teacher: Teacher, colleague: Teacher
) -> None:
    Agent.objects.filter(pk=teacher.agent.pk).update(archive_artifacts=True)
    body = run_via_api(teacher, "出一份光合作用的单元测验，手机号13812345678别写进去")
    after_run_process(run_id=body["id"])
    after_run_process(run_id=body["id"])  # redelivered: nothing new
    document = KBDocument.objects.get()
    assert document.source_run_id == body["id"]
    assert (document.visibility, document.owner_id, document.status, document.kind) == (
        "private",
        teacher.user.pk,
        "ready",
        "artifact",
    )
    day = timezone.localdate().isoformat()
    # No thread title was set: the request names it (the thread's title is that too).
    assert document.title.startswith("出一份光合作用的单元测验")
    assert document.title.endswith(f"（{day}）")
    text = "".join(KBChunk.objects.filter(document=document).values_list("text", flat=True))
    assert text and "13812345678" not in text
    scope = Scope.for_agent(teacher.agent, owner_id=teacher.user.pk)
    assert kb_search(scope=scope, query="光合作用单元测验")[0].document_id == document.pk
    other = Scope.for_agent(teacher.agent, owner_id=colleague.user.pk)
    assert all(h.document_id != document.pk for h in kb_search(scope=other, query="光合作用"))
    # The document API shows where it came from.
    detail = teacher.client.get(f"/api/kb/documents/{document.pk}").json()
    assert detail["source_run_id"] == body["id"]


def test_an_archived_artifact_is_titled_from_its_thread(teacher: Teacher) -> None:
    Agent.objects.filter(pk=teacher.agent.pk).update(archive_artifacts=True)
    first = run_via_api(teacher, "出一份数据结构期中试卷", memory_job=True)
    teacher.client.patch(
        f"/api/threads/{first['thread_id']}", {"title": "数据结构期中"}, format="json"
    )
    second = run_via_api(teacher, "简答题换两道", first["thread_id"], memory_job=True)
    titles = dict(KBDocument.objects.values_list("source_run_id", "title"))
    assert titles[second["id"]].startswith("数据结构期中（")


def test_a_failed_run_is_not_archived(teacher: Teacher) -> None:
    Agent.objects.filter(pk=teacher.agent.pk).update(archive_artifacts=True)
    run = Run.objects.create(
        tenant=teacher.tenant,
        agent=teacher.agent,
        owner=teacher.user,
        input="x",
        status=Run.Status.FAILED,
        error_code="provider_error",
    )
    after_run_process(run_id=run.pk)
    assert not KBDocument.objects.exists()


def test_only_a_school_admin_turns_archiving_on(teacher: Teacher, outsider: Teacher) -> None:
    path = f"/api/agents/{teacher.agent.pk}"
    assert teacher.client.get(path).json()["archive_artifacts"] is False
    denied = teacher.client.patch(path, {"archive_artifacts": True}, format="json")
    assert denied.status_code == 403
    assert "管理员" in denied.json()["detail"]
    assert (
        outsider.client.patch(path, {"archive_artifacts": True}, format="json").status_code == 404
    )
    admin = make_teacher(
        tenant_name=teacher.tenant.name,
        username="boss",
        agent=teacher.agent,
        role=Membership.Role.ADMIN,
    )
    assert (
        admin.client.patch(path, {"archive_artifacts": "yes please"}, format="json").status_code
        == 400
    )
    done = admin.client.patch(path, {"archive_artifacts": True}, format="json")
    assert done.status_code == 200 and done.json()["archive_artifacts"] is True
    assert Agent.objects.get(pk=teacher.agent.pk).archive_artifacts is True
