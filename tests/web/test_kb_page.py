"""The knowledge-base page (/kb/) through plain HTML forms: it works without JavaScript."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from memory.models import KBDocument
from tests.factories import Teacher
from tests.kbfiles import docx_file, gbk_text

pytestmark = pytest.mark.django_db


def browser(teacher: Teacher) -> Client:
    client = Client()
    client.force_login(teacher.user)
    return client


def page(client: Client, teacher: Teacher, **params: str) -> str:
    response = client.get("/kb/", {"agent": teacher.agent.pk, **params})
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_needs_a_login(teacher: Teacher) -> None:
    response = Client().get("/kb/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_upload_list_search_and_delete_without_javascript(
    teacher: Teacher, django_capture_on_commit_callbacks: Any
) -> None:
    client = browser(teacher)
    html = page(client, teacher)
    assert "<h1" in html and "知识库" in html
    assert 'for="kb-file"' in html and 'id="kb-file"' in html  # a labelled plain file input
    assert 'enctype="multipart/form-data"' in html
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/kb/upload/",
            {
                "agent": teacher.agent.pk,
                "file": SimpleUploadedFile("校规.txt", gbk_text()),
                "visibility": "agent",
            },
        )
    assert response.status_code == 302
    html = page(client, teacher)
    assert "已上传「校规」，正在后台处理，完成后即可检索。" in html
    document = KBDocument.objects.get()
    assert f'id="document-{document.pk}"' in html
    assert "可用" in html  # processed by the time the page is shown again

    html = page(client, teacher, q="迟到几次记警告")
    assert "会提供给智能体" in html
    assert "[知识库检索结果 — " in html  # what the agent would see, verbatim
    assert "迟到三次记警告一次" in html
    html = page(client, teacher, q="出一份数据结构期末试卷")
    assert "这句话不会从知识库注入任何内容。" in html

    response = client.post(f"/kb/documents/{document.pk}/delete/", {"agent": teacher.agent.pk})
    assert response.status_code == 302
    assert "已删除「校规」。" in page(client, teacher)
    assert not KBDocument.objects.exists()


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("病毒.exe", b"MZ", "不支持这种文件类型"),
        ("空.txt", b"", "文件是空的"),
    ],
)
def test_a_refused_upload_says_why_on_the_page(
    teacher: Teacher, name: str, data: bytes, message: str
) -> None:
    client = browser(teacher)
    client.post("/kb/upload/", {"agent": teacher.agent.pk, "file": SimpleUploadedFile(name, data)})
    html = page(client, teacher)
    assert f"没有上传「{name}」：" in html and message in html
    assert not KBDocument.objects.exists()


def test_a_colleagues_documents_are_shown_by_visibility_and_not_deletable(
    teacher: Teacher, colleague: Teacher, django_capture_on_commit_callbacks: Any
) -> None:
    mine = browser(teacher)
    with django_capture_on_commit_callbacks(execute=True):
        mine.post(
            "/kb/upload/",
            {"agent": teacher.agent.pk, "file": SimpleUploadedFile("教案.docx", docx_file())},
        )
        mine.post(
            "/kb/upload/",
            {
                "agent": teacher.agent.pk,
                "visibility": "private",
                "file": SimpleUploadedFile("私人.txt", "私人笔记。".encode()),
            },
        )
    shared = KBDocument.objects.get(title="教案")
    private = KBDocument.objects.get(title="私人")
    theirs = browser(colleague)
    html = page(theirs, teacher)
    assert f'id="document-{shared.pk}"' in html and f'id="document-{private.pk}"' not in html
    assert f"/kb/documents/{shared.pk}/delete/" not in html
    response = theirs.post(f"/kb/documents/{shared.pk}/delete/", {"agent": teacher.agent.pk})
    assert response.status_code == 302
    assert KBDocument.objects.filter(pk=shared.pk).exists()
    assert (
        theirs.post(f"/kb/documents/{private.pk}/delete/", {"agent": teacher.agent.pk}).status_code
        == 404
    )


def test_another_schools_agent_and_document_are_404(
    teacher: Teacher, outsider: Teacher, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        browser(teacher).post(
            "/kb/upload/",
            {"agent": teacher.agent.pk, "file": SimpleUploadedFile("校规.txt", gbk_text())},
        )
    document = KBDocument.objects.get()
    theirs = browser(outsider)
    assert theirs.get("/kb/", {"agent": teacher.agent.pk}).status_code == 404
    assert (
        theirs.post(
            "/kb/upload/", {"agent": teacher.agent.pk, "file": SimpleUploadedFile("a.txt", b"x")}
        ).status_code
        == 404
    )
    response = theirs.post(f"/kb/documents/{document.pk}/delete/", {"agent": outsider.agent.pk})
    assert response.status_code == 404
    assert KBDocument.objects.exists()


def test_the_chat_page_and_the_memory_panel_link_to_the_knowledge_base(teacher: Teacher) -> None:
    client = browser(teacher)
    for path in ("/chat/", "/memory/"):
        assert 'href="/kb/"' in client.get(path).content.decode(), path
    assert (
        f'href="/kb/?agent={teacher.agent.pk}"'
        in client.get("/memory/", {"agent": teacher.agent.pk}).content.decode()
    )
