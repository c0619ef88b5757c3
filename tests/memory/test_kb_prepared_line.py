"""A chunk's injected line is prepared when the chunk is written, and used only while
the rules and the chunk's texts are those it was prepared under.

Stored text that was prepared under other rules (a grown red line, a new sanitiser) or
for another title must go through the live path: re-checked, sanitised and cut again.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import stored
from memory.models import KBChunk, KBDocument
from memory.scope import Scope
from memory.services.kb import _render_line, kb_cache_clear, kb_render
from memory.services.kb_documents import kb_document_create
from tests.factories import Teacher

pytestmark = pytest.mark.django_db

RULES = "# 校规\n\n## 作息时间\n\n学生每天早上七点半前到校，迟到三次记警告一次。"
QUESTION = "学生几点前到校？迟到几次记警告？"


@pytest.fixture
def chunk(teacher: Teacher, django_capture_on_commit_callbacks: Any) -> KBChunk:
    with django_capture_on_commit_callbacks(execute=True):
        document = kb_document_create(
            agent=teacher.agent, owner_id=teacher.user.pk, title="校规", text=RULES
        )
    document.refresh_from_db()
    assert document.status == KBDocument.Status.READY, document.error
    return KBChunk.objects.get(document=document)


def injected(teacher: Teacher) -> str:
    kb_cache_clear()  # a fresh process: nothing memoised
    scope = Scope.for_agent(teacher.agent, owner_id=teacher.user.pk)
    return kb_render(scope=scope, query=QUESTION, budget=1500).text


def live_line(chunk: KBChunk, title: str = "校规") -> str:
    return _render_line(
        chunk_id=chunk.pk, title=title, heading_path=chunk.heading_path, text=chunk.text
    ).text


def test_the_stored_line_is_the_live_line(teacher: Teacher, chunk: KBChunk) -> None:
    assert chunk.line_stamp
    assert chunk.line == live_line(chunk)
    assert chunk.line_tokens > 0
    assert chunk.line in injected(teacher).splitlines()


def test_the_stored_line_is_what_is_injected_while_its_stamp_holds(
    teacher: Teacher, chunk: KBChunk
) -> None:
    KBChunk.objects.filter(pk=chunk.pk).update(line="- 《校规》 存档的注入行")
    assert "- 《校规》 存档的注入行" in injected(teacher).splitlines()


def test_a_line_stored_under_other_rules_is_checked_again(
    teacher: Teacher, chunk: KBChunk, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Prepared under rules that let an ID number through; the rules have changed since.
    leaked = "- 《校规》 身份证号 110105201001011232"
    KBChunk.objects.filter(pk=chunk.pk).update(line=leaked)
    monkeypatch.setattr(stored, "RULES_DIGEST", "the red line grew")

    text = injected(teacher)

    assert "110105201001011232" not in text
    assert live_line(chunk) in text.splitlines()


def test_chunk_rows_are_read_only_for_a_message_the_knowledge_base_answers(
    teacher: Teacher, chunk: KBChunk
) -> None:
    scope = Scope.for_agent(teacher.agent, owner_id=teacher.user.pk)
    table = KBChunk._meta.db_table
    kb_render(scope=scope, query=QUESTION, budget=1500)  # the index is loaded

    with CaptureQueriesContext(connection) as unrelated:
        assert kb_render(scope=scope, query="帮我写一封家长会的邀请函", budget=1500).text == ""
    with CaptureQueriesContext(connection) as answered:
        assert chunk.line in kb_render(scope=scope, query=QUESTION, budget=1500).text

    assert not any(table in query["sql"] for query in unrelated.captured_queries)
    assert any(table in query["sql"] for query in answered.captured_queries)


def test_a_renamed_document_is_injected_under_its_new_title(
    teacher: Teacher, chunk: KBChunk
) -> None:
    KBDocument.objects.filter(pk=chunk.document_id).update(title="学生守则")

    text = injected(teacher)

    assert chunk.line not in text
    assert live_line(chunk, title="学生守则") in text.splitlines()


def test_a_chunk_written_before_prepared_lines_takes_the_live_path(
    teacher: Teacher, chunk: KBChunk
) -> None:
    KBChunk.objects.filter(pk=chunk.pk).update(line="", line_tokens=0, line_stamp="")
    assert live_line(chunk) in injected(teacher).splitlines()


def test_every_line_of_a_long_document_is_its_live_line(
    teacher: Teacher, django_capture_on_commit_callbacks: Any
) -> None:
    # Long enough for the lines to be counted in parallel batches, with passages that
    # are cut to EXCERPT_TOKENS and some that are not, and an ID number to redact.
    sections = [
        f"## 第{i}节\n\n" + "光反应在类囊体薄膜上进行，暗反应在叶绿体基质中进行。" * (4 + i % 30)
        for i in range(60)
    ]
    sections.append("## 名单\n\n张伟的身份证号是110101199003074514，请核对。")
    with django_capture_on_commit_callbacks(execute=True):
        document = kb_document_create(
            agent=teacher.agent, owner_id=teacher.user.pk, title="讲义", text="\n\n".join(sections)
        )
    chunks = list(KBChunk.objects.filter(document=document).order_by("position"))
    assert len(chunks) > 20
    assert {chunk.line_cut for chunk in chunks} == {True, False}
    for chunk in chunks:
        live = _render_line(
            chunk_id=chunk.pk, title="讲义", heading_path=chunk.heading_path, text=chunk.text
        )
        assert (chunk.line, chunk.line_tokens, chunk.line_cut) == (live.text, live.tokens, live.cut)
    assert not any("110101199003074514" in chunk.line for chunk in chunks)


def test_chunks_are_written_with_every_column() -> None:
    from memory.services.kb_documents import _CHUNK_FIELDS

    columns = {field.name for field in KBChunk._meta.concrete_fields if not field.primary_key}
    assert set(_CHUNK_FIELDS) == columns
