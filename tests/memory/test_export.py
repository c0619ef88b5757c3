"""Export (issue #14): the teacher's right of access, as one documented JSON document."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from agents.models import Membership, Run
from memory.models import CoreFact, KBDocument
from memory.services.export import EXPORT_FORMAT, EXPORT_VERSION
from memory.services.kb_documents import (
    kb_artifact_archive,
    kb_document_create,
    kb_document_process,
)
from tests.factories import Teacher, candidates_via_job, fact_via_confirm, make_teacher, run_via_api

pytestmark = pytest.mark.django_db

TOP_LEVEL = [
    "format",
    "version",
    "exported_at",
    "tenant",
    "agent",
    "owner",
    "facts",
    "candidates",
    "threads",
    "recall_entries",
    "kb_documents",
    "audit_events",
]


def export(teacher: Teacher) -> dict[str, Any]:
    response = teacher.client.get(f"/api/agents/{teacher.agent.pk}/memory/export")
    assert response.status_code == 200
    day = timezone.localdate().isoformat()
    assert response["Content-Disposition"] == (
        f'attachment; filename="memory-export-agent{teacher.agent.pk}-{day}.json"'
    )
    assert response["Content-Type"] == "application/json"
    return dict(json.loads(response.content))


def test_the_export_holds_every_layer_of_the_teachers_memory(
    teacher: Teacher, colleague: Teacher
) -> None:
    first = run_via_api(teacher, "出一份数据结构期中试卷，考二叉树遍历", memory_job=True)
    run_via_api(teacher, "简答题换两道", str(first["thread_id"]), memory_job=True)
    candidates = candidates_via_job(teacher, "我教八年级数学。以后出题都用人教版教材")
    fact = fact_via_confirm(teacher, candidates[0])
    CoreFact.objects.filter(pk=fact.pk).update(valid_until="2020-01-31")
    run_via_api(colleague, "同事的对话：出一份化学试卷", memory_job=True)
    deleted = run_via_api(teacher, "这条会被删除", memory_job=True)
    teacher.client.delete(f"/api/runs/{deleted['id']}")

    document = export(teacher)

    assert list(document) == TOP_LEVEL
    assert (
        (document["format"], document["version"])
        == (EXPORT_FORMAT, EXPORT_VERSION)
        == (
            "agent-memory.export",
            1,
        )
    )
    assert document["owner"] == {"id": teacher.user.pk, "username": "zhang"}
    assert document["agent"] == {"id": teacher.agent.pk, "name": teacher.agent.name}
    assert document["tenant"] == {"id": teacher.tenant.pk, "name": "第一中学"}
    [exported_fact] = document["facts"]
    assert exported_fact == {
        "id": fact.pk,
        "text": fact.text,
        "valid_until": "2020-01-31",
        "expired": True,
        "confirmed_at": exported_fact["confirmed_at"],
        "confirmed_by": "zhang",
        "last_used_at": None,
        "source_run_id": fact.source_run_id,
    }
    assert [c["fact"] for c in document["candidates"]] == [candidates[1].fact]
    assert set(document["candidates"][0]) == {
        "id", "fact", "evidence", "confidence", "seen_count", "valid_until",
        "source_run_id", "created_at",
    }  # fmt: skip
    threads = {t["id"]: t for t in document["threads"]}
    thread = threads[first["thread_id"]]
    assert [r["input"] for r in thread["runs"]] == [
        "出一份数据结构期中试卷，考二叉树遍历",
        "简答题换两道",
    ]
    assert set(thread["runs"][0]) == {
        "id", "status", "input", "output", "redacted", "created_at", "finished_at",
        "input_tokens", "output_tokens", "cost",
    }  # fmt: skip
    assert thread["runs"][0]["output"] == first["output"]
    # Nothing of the colleague's memory, nothing of the deleted run but its absence.
    everything = json.dumps(document, ensure_ascii=False)
    for text in ("同事的对话", "这条会被删除"):
        assert text not in everything, everything[everything.index(text) - 300 :][:400]
    run_ids = {r["id"] for t in document["threads"] for r in t["runs"]}
    assert deleted["id"] not in run_ids
    entries = {e["run_id"] for e in document["recall_entries"]}
    assert entries == run_ids  # every completed run is recalled
    # The audit trail, the export itself first.
    actions = [e["action"] for e in document["audit_events"]]
    assert actions[0] == "export" and "confirm" in actions and "delete" in actions
    assert document["audit_events"][0]["actor"] == "zhang"


def kb_text(teacher: Teacher, title: str, visibility: str, *, process: bool = True) -> KBDocument:
    document = kb_document_create(
        agent=teacher.agent,
        owner_id=teacher.user.pk,
        visibility=visibility,
        title=title,
        text=f"# {title}\n\n迟到三次记警告一次，病假需交回假条。",
    )
    if process:
        kb_document_process(document_id=document.pk)
    document.refresh_from_db()
    return document


def test_the_export_lists_the_knowledge_base_documents_the_teacher_uploaded(
    teacher: Teacher, colleague: Teacher
) -> None:
    private = kb_text(teacher, "我的家访记录", "private")
    shared = kb_text(teacher, "我分享的校规", "agent")
    waiting = kb_text(teacher, "还在处理的教案", "private", process=False)
    run = run_via_api(teacher, "出一份光合作用单元测验")
    artifact = kb_artifact_archive(run=Run.objects.get(pk=run["id"]))
    assert artifact is not None
    kb_text(colleague, "同事分享的资料", "agent")  # shared with the teacher, not theirs
    kb_text(colleague, "同事的私人资料", "private")

    exported = export(teacher)["kb_documents"]

    assert [d["id"] for d in exported] == [private.pk, shared.pk, waiting.pk, artifact.pk]
    first = exported[0]
    assert first == {
        "id": private.pk,
        "title": "我的家访记录",
        "visibility": "private",
        "status": "ready",
        "kind": "text",
        "size_bytes": private.size_bytes,
        "chunk_count": private.chunk_count,
        "source_run_id": None,
        "created_at": first["created_at"],
        "updated_at": first["updated_at"],
        "processed_at": first["processed_at"],
    }
    assert private.size_bytes > 0 and private.chunk_count >= 1
    assert first["created_at"] and first["processed_at"]
    assert (exported[1]["visibility"], exported[2]["status"]) == ("agent", "processing")
    assert exported[2]["processed_at"] is None
    assert (exported[3]["kind"], exported[3]["source_run_id"]) == ("artifact", run["id"])
    # Metadata only: no chunk text, nothing of the colleague's documents.
    everything = json.dumps(exported, ensure_ascii=False)
    for text in ("迟到三次", "同事"):
        assert text not in everything


def test_the_export_is_the_callers_own(teacher: Teacher, outsider: Teacher) -> None:
    admin = make_teacher(
        tenant_name=teacher.tenant.name,
        username="principal",
        agent=teacher.agent,
        role=Membership.Role.ADMIN,
    )
    run_via_api(teacher, "老师自己的对话", memory_job=True)
    url = f"/api/agents/{teacher.agent.pk}/memory/export"
    assert outsider.client.get(url).status_code == 404
    assert Client().get(url).status_code == 401
    assert "老师自己的对话" not in admin.client.get(url).content.decode()  # the admin's own
    # The panel's button: the same endpoint with the browser's session.
    browser = Client()
    browser.force_login(teacher.user)
    response = browser.get(url)
    assert response.status_code == 200 and "老师自己的对话" in response.content.decode()
