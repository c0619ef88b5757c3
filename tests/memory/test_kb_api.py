"""The knowledge-base API and its worker: upload each file type, process, search, delete.

Uploads go through the API; the document's processing job is enqueued in the upload's
transaction and runs (sync test cluster) when it commits, as the worker would run it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from agents.models import Membership
from memory.models import KBChunk, KBDocument, KBIndexState, KBSource, RedlineAudit
from memory.scope import Scope
from memory.services import kb as kb_service
from memory.services.kb import kb_search
from memory.services.kb_documents import kb_document_create, kb_document_process
from memory.services.sweeper import memory_sweep
from tests.factories import Teacher, make_teacher
from tests.kbfiles import docx_file, gbk_text, pdf_file, utf16_text

Upload = Callable[..., Any]


def upload(
    teacher: Teacher,
    name: str,
    data: bytes,
    *,
    capture: Any,
    client: APIClient | None = None,
    **fields: str,
) -> Any:
    with capture(execute=True):
        return (client or teacher.client).post(
            f"/api/agents/{teacher.agent.pk}/kb/documents",
            {"file": SimpleUploadedFile(name, data), **fields},
            format="multipart",
        )


@pytest.fixture
def up(django_capture_on_commit_callbacks: Any) -> Upload:
    def _up(teacher: Teacher, name: str, data: bytes, **kwargs: Any) -> Any:
        return upload(teacher, name, data, capture=django_capture_on_commit_callbacks, **kwargs)

    return _up


def search(teacher: Teacher, q: str, client: APIClient | None = None) -> list[dict[str, Any]]:
    response = (client or teacher.client).get(f"/api/agents/{teacher.agent.pk}/kb/search", {"q": q})
    assert response.status_code == 200, response.content
    return list(response.json()["results"])


@pytest.mark.parametrize(
    ("name", "data", "question", "expected", "encoding"),
    [
        ("校规.txt", gbk_text(), "迟到几次记警告", "迟到三次记警告一次", "gb18030"),
        ("校规-utf16.txt", utf16_text(), "请假要交什么", "交回假条", "utf-16-le"),
        ("教案.docx", docx_file(), "光反应在哪里进行", "类囊体薄膜", ""),
        ("二次函数.pdf", pdf_file(), "抛物线的顶点坐标", "抛物线", ""),
    ],
    ids=["gbk-txt", "utf16-txt", "docx", "pdf"],
)
def test_an_uploaded_file_becomes_searchable_once_processed(
    teacher: Teacher,
    up: Upload,
    name: str,
    data: bytes,
    question: str,
    expected: str,
    encoding: str,
) -> None:
    response = up(teacher, name, data)
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["status"], body["title"], body["filename"]) == (
        "processing",
        name.rsplit(".", 1)[0],
        name,
    )
    document = KBDocument.objects.get(pk=body["id"])
    assert document.status == "ready", document.error
    assert document.encoding == encoding
    assert document.chunk_count == KBChunk.objects.filter(document=document).count() > 0
    assert not KBSource.objects.filter(document=document).exists()  # raw bytes dropped
    hits = search(teacher, question)
    assert hits[0]["document_id"] == document.pk
    assert expected in hits[0]["text"]
    assert hits[0]["passes_gate"] is True
    detail = teacher.client.get(f"/api/kb/documents/{document.pk}").json()
    assert (detail["status"], detail["chunk_count"]) == ("ready", document.chunk_count)


def test_a_json_text_is_a_document_too(
    teacher: Teacher, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = teacher.client.post(
            f"/api/agents/{teacher.agent.pk}/kb/documents",
            {"title": "期中考试安排", "text": "# 期中考试\n\n数学考试在十一月八日上午九点开始。"},
            format="json",
        )
    assert response.status_code == 201, response.content
    hits = search(teacher, "数学考试几点开始")
    assert hits[0]["title"] == "期中考试安排"
    assert hits[0]["heading_path"] == "期中考试"


@pytest.mark.parametrize(
    ("name", "data", "status", "field"),
    [
        ("恶意.exe", b"MZ\x90\x00", 415, None),
        ("旧格式.doc", b"\xd0\xcf\x11\xe0", 415, None),
        ("空.txt", b"", 400, "file"),
        ("空白.md", b" \n\n ", 400, "file"),
        ("假的.pdf", b"<html>not a pdf</html>", 400, "file"),
        ("假的.docx", b"just text", 400, "file"),
    ],
)
def test_bad_uploads_get_a_clear_chinese_error_and_store_nothing(
    teacher: Teacher, up: Upload, name: str, data: bytes, status: int, field: str | None
) -> None:
    response = up(teacher, name, data)
    assert response.status_code == status, response.content
    body = response.json()
    message = body["detail"] if field is None else body[field][0]
    assert any("\u4e00" <= ch <= "\u9fff" for ch in message), message
    assert not KBDocument.objects.exists()


def test_a_file_over_the_limit_is_413(teacher: Teacher, up: Upload, settings: Any) -> None:
    settings.KB_UPLOAD_MAX_BYTES = 2048
    response = up(teacher, "大纲.txt", "教学大纲。".encode() * 200)
    assert response.status_code == 413
    assert response.json()["detail"] == "文件太大：最大 2 KB。"
    # Declared too large: refused before the body is read.
    big = up(teacher, "大纲.txt", b"x" * (2048 + 70 * 1024))
    assert big.status_code == 413
    assert not KBDocument.objects.exists()


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"title": "标题"},
        {"title": "标题", "text": "   "},
        {"title": "", "text": "内容"},
        {"title": "标题", "text": 12},
        {"title": "标题", "text": "内容", "visibility": "world"},
    ],
)
def test_bad_json_uploads_are_400_with_a_field(teacher: Teacher, payload: dict[str, Any]) -> None:
    response = teacher.client.post(
        f"/api/agents/{teacher.agent.pk}/kb/documents", payload, format="json"
    )
    assert response.status_code == 400, response.content
    assert set(response.json()) & {"title", "text", "visibility"}
    assert not KBDocument.objects.exists()


def test_control_characters_in_a_file_and_its_name_are_dropped(
    teacher: Teacher, up: Upload
) -> None:
    response = up(teacher, "校\x00规\x07.txt", "第一条\x00：迟到\x1b三次记警告。".encode())
    assert response.status_code == 201, response.content
    document = KBDocument.objects.get()
    assert (document.title, document.filename, document.status) == ("校规", "校规.txt", "ready")
    assert KBChunk.objects.get().text == "第一条：迟到三次记警告。"


def test_a_file_that_fails_in_the_worker_says_why(teacher: Teacher, up: Upload) -> None:
    # A PDF header and nothing readable behind it: passes the upload's cheap checks.
    response = up(teacher, "损坏.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj garbage")
    assert response.status_code == 201
    detail = teacher.client.get(f"/api/kb/documents/{response.json()['id']}").json()
    assert detail["status"] == "failed"
    assert detail["error"] == "文件已损坏，或内容与扩展名不符，无法读取。"
    assert not KBSource.objects.exists()


def test_every_chunk_is_red_line_redacted_with_audit_counts(teacher: Teacher, up: Upload) -> None:
    roster = (
        "三年级二班学生名单\n\n"
        "张小明，身份证号 110105201001011232，家长电话 13812345678。\n"
        "李华，身份证号 11010520100202123X。\n"
    )
    response = up(teacher, "名单.txt", roster.encode("gbk"))
    document = KBDocument.objects.get(pk=response.json()["id"])
    assert document.status == "ready"
    text = "\n".join(KBChunk.objects.filter(document=document).values_list("text", flat=True))
    assert "110105201001011232" not in text and "13812345678" not in text
    assert "(涉及身份证号，略)" in text
    counts = dict(
        RedlineAudit.objects.filter(source=RedlineAudit.Source.KB).values_list("category", "count")
    )
    assert counts.get("id_number", 0) >= 1 and counts.get("mobile", 0) >= 1
    # Nor can the search show them.
    assert all("13812345678" not in hit["text"] for hit in search(teacher, "家长电话"))


def test_processing_twice_changes_nothing(teacher: Teacher, up: Upload) -> None:
    document_id = up(teacher, "校规.txt", gbk_text()).json()["id"]
    chunks = list(KBChunk.objects.order_by("pk").values_list("pk", "text"))
    version = KBIndexState.objects.get().version
    assert kb_document_process(document_id=document_id).state == "skipped"
    assert list(KBChunk.objects.order_by("pk").values_list("pk", "text")) == chunks
    assert KBIndexState.objects.get().version == version


def test_a_lost_job_is_recovered_by_the_sweeper(teacher: Teacher, settings: Any) -> None:
    # Created without its job running (the test's transaction never commits): as if the
    # worker died with it.
    document = kb_document_create(
        agent=teacher.agent,
        owner_id=teacher.user.pk,
        title="校规",
        filename="校规.txt",
        data=gbk_text(),
    )
    KBDocument.objects.filter(pk=document.pk).update(
        enqueued_at=timezone.now() - timedelta(hours=1)
    )
    report = memory_sweep(stale_after_seconds=60)
    assert report.kb_documents_reenqueued == 1
    assert memory_sweep(stale_after_seconds=60).kb_documents_reenqueued == 0  # claimed once
    kb_document_process(document_id=document.pk)  # what the re-enqueued job does
    assert KBDocument.objects.get(pk=document.pk).status == "ready"


def test_a_document_that_keeps_dying_is_failed_by_the_sweeper(
    teacher: Teacher, settings: Any
) -> None:
    document = kb_document_create(
        agent=teacher.agent, owner_id=teacher.user.pk, title="t", filename="a.txt", data=b"abc"
    )
    KBDocument.objects.filter(pk=document.pk).update(
        enqueued_at=timezone.now() - timedelta(hours=1), attempts=settings.MEMORY_JOB_MAX_ATTEMPTS
    )
    assert memory_sweep(stale_after_seconds=60).kb_documents_reenqueued == 0
    document.refresh_from_db()
    assert (document.status, document.error) == ("failed", "处理多次未能完成，请重新上传。")


# -- access and visibility ----------------------------------------------------------------
def test_anonymous_is_401(teacher: Teacher) -> None:
    anonymous = APIClient()
    assert anonymous.get(f"/api/agents/{teacher.agent.pk}/kb/documents").status_code == 401
    assert anonymous.get(f"/api/agents/{teacher.agent.pk}/kb/search?q=x").status_code == 401
    assert anonymous.get("/api/kb/documents/1").status_code == 401


def test_another_schools_agent_and_document_look_missing(
    teacher: Teacher, outsider: Teacher, up: Upload
) -> None:
    document_id = up(teacher, "校规.txt", gbk_text()).json()["id"]
    missing = 10**9
    for path in (
        f"/api/agents/{teacher.agent.pk}/kb/documents",
        f"/api/agents/{teacher.agent.pk}/kb/search?q=迟到",
        f"/api/kb/documents/{document_id}",
        f"/api/kb/documents/{missing}",
    ):
        response = outsider.client.get(path)
        assert response.status_code == 404, path
    assert outsider.client.delete(f"/api/kb/documents/{document_id}").status_code == 404
    assert up(outsider, "x.txt", b"abc", client=outsider.client).status_code == 201  # own agent
    denied = outsider.client.post(
        f"/api/agents/{teacher.agent.pk}/kb/documents",
        {"title": "x", "text": "y"},
        format="json",
    )
    assert denied.status_code == 404
    assert KBDocument.objects.filter(pk=document_id).exists()


def test_private_documents_are_their_owners_alone_shared_ones_every_members(
    teacher: Teacher, colleague: Teacher, up: Upload
) -> None:
    shared = up(teacher, "校规.txt", gbk_text()).json()["id"]
    private = up(
        teacher,
        "我的笔记.txt",
        "我的私人笔记：周三下午去教研室开会。".encode(),
        visibility="private",
    ).json()["id"]
    assert [h["document_id"] for h in search(teacher, "周三下午开会")][:1] == [private]
    assert all(h["document_id"] != private for h in search(colleague, "周三下午开会"))
    assert search(colleague, "迟到几次记警告")[0]["document_id"] == shared
    listed = colleague.client.get(f"/api/agents/{teacher.agent.pk}/kb/documents").json()
    assert [d["id"] for d in listed["results"]] == [shared]
    assert colleague.client.get(f"/api/kb/documents/{private}").status_code == 404
    # A shared document is readable by the colleague but only its uploader deletes it.
    assert colleague.client.get(f"/api/kb/documents/{shared}").json()["can_delete"] is False
    forbidden = colleague.client.delete(f"/api/kb/documents/{shared}")
    assert forbidden.status_code == 403
    assert "管理员" in forbidden.json()["detail"]
    assert colleague.client.delete(f"/api/kb/documents/{private}").status_code == 404


def test_a_school_admin_may_delete_a_shared_document_but_not_a_private_one(
    teacher: Teacher, up: Upload
) -> None:
    admin = make_teacher(
        tenant_name=teacher.tenant.name,
        username="admin",
        agent=teacher.agent,
        role=Membership.Role.ADMIN,
    )
    shared = up(teacher, "校规.txt", gbk_text()).json()["id"]
    private = up(teacher, "私.txt", "私人内容。".encode(), visibility="private").json()["id"]
    assert admin.client.delete(f"/api/kb/documents/{private}").status_code == 404
    assert admin.client.delete(f"/api/kb/documents/{shared}").status_code == 204
    assert not KBDocument.objects.filter(pk=shared).exists()


def test_a_deleted_documents_chunks_never_appear_again(
    teacher: Teacher, colleague: Teacher, up: Upload
) -> None:
    keep = up(teacher, "教案.docx", docx_file()).json()["id"]
    gone = up(teacher, "校规.txt", gbk_text()).json()["id"]
    assert search(colleague, "迟到几次记警告")[0]["document_id"] == gone  # both indexes warm
    assert teacher.client.delete(f"/api/kb/documents/{gone}").status_code == 204
    assert teacher.client.delete(f"/api/kb/documents/{gone}").status_code == 404
    for who in (teacher, colleague):
        assert all(h["document_id"] != gone for h in search(who, "迟到几次记警告"))
    assert search(teacher, "光反应在哪里进行")[0]["document_id"] == keep
    assert KBIndexState.objects.get(owner__isnull=True).chunk_count == KBChunk.objects.count()


def test_chunks_removed_behind_the_index_are_not_returned_by_a_stale_index(
    teacher: Teacher, up: Upload
) -> None:
    """A process whose index still holds deleted chunks (no version bump seen, e.g. a raw
    cascade from a deleted run) still never shows them: hits are fetched by id."""
    gone = up(teacher, "校规.txt", gbk_text()).json()["id"]
    scope = Scope.for_agent(teacher.agent, owner_id=teacher.user.pk)
    assert kb_search(scope=scope, query="迟到几次记警告")[0].document_id == gone
    KBDocument.objects.filter(pk=gone).delete()  # behind the service: no version bump
    assert kb_search(scope=scope, query="迟到几次记警告") == []


def test_a_document_still_processing_is_not_searchable(teacher: Teacher) -> None:
    kb_document_create(
        agent=teacher.agent,
        owner_id=teacher.user.pk,
        title="校规",
        filename="校规.txt",
        data=gbk_text(),
    )
    kb_service.kb_cache_clear()
    assert search(teacher, "迟到几次记警告") == []


def test_search_validates_its_query(teacher: Teacher) -> None:
    path = f"/api/agents/{teacher.agent.pk}/kb/search"
    assert teacher.client.get(path).status_code == 400
    assert teacher.client.get(path, {"q": "   "}).status_code == 400
    assert teacher.client.get(path, {"q": "x", "limit": 0}).status_code == 400
    assert teacher.client.get(path, {"q": "x" * 2001}).status_code == 400


def test_the_list_is_paginated_in_a_fixed_number_of_queries(teacher: Teacher) -> None:
    for i in range(25):
        kb_document_create(
            agent=teacher.agent, owner_id=teacher.user.pk, title=f"文档{i}", text=f"内容{i}"
        )
    path = f"/api/agents/{teacher.agent.pk}/kb/documents"
    with CaptureQueriesContext(connection) as queries:
        first = teacher.client.get(path).json()
    assert (first["count"], len(first["results"])) == (25, 20)
    assert first["results"][0]["title"] == "文档24"
    assert len(queries) <= 10, [q["sql"] for q in queries]
    colleague = make_teacher(tenant_name=teacher.tenant.name, username="li", agent=teacher.agent)
    with CaptureQueriesContext(connection) as theirs:
        assert colleague.client.get(path).json()["count"] == 25
    assert len(theirs) <= len(queries) + 1  # one membership query, not one per document
    second = teacher.client.get(path, {"page": 2}).json()
    assert [d["title"] for d in second["results"]] == [f"文档{i}" for i in range(4, -1, -1)]
