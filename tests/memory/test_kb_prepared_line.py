"""A chunk's injected line is prepared when the chunk is written, and used only while
the rules and the chunk's texts are those it was prepared under.

Stored text that was prepared under other rules (a grown red line, a new sanitiser) or
for another title must go through the live path: re-checked, sanitised and cut again.
"""

from __future__ import annotations

from typing import Any

import pytest

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
