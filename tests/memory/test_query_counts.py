"""Query counts on the read path and the thread API: bounded, and flat in the data size.

The bounds are itemised; a change that adds a query per fact, run or entry fails here.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.models import CoreCandidate, CoreFact, Thread
from memory.scope import Scope
from memory.services.context import context_assemble
from memory.services.kb import kb_cache_clear
from memory.services.kb_documents import kb_document_create
from memory.services.recall import recall_cache_clear
from tests.factories import Teacher, fact_via_confirm, run_via_api

pytestmark = pytest.mark.django_db

# One read of the scope's rows (the live facts, the thread's recent turns and the version
# rows of the scope's recall index and of the agent's shared and the teacher's private KB
# index); core: touching last_used_at (only when older than CORE_LAST_USED_RESOLUTION);
# recall: loading new entries into the process's index, the rows of the hits that pass
# (with the KB's passages, in one query); KB: loading, and its passages' rows when recall
# has none, only when a knowledge base exists (KB_QUERIES_WITH_DOCUMENTS).
CONTEXT_ASSEMBLE_QUERIES = 4
# Loading the shared and the private index (cold process), the passages when no recall
# entry is read with them (the version rows are read with the scope's rows).
KB_QUERIES_WITH_DOCUMENTS = 3
# A warm process, facts touched a moment ago: the scope's rows, the hits' rows.
CONTEXT_ASSEMBLE_WARM_QUERIES = 2
# token auth, the thread (with its run count), run sums, memory-op sums.
THREAD_DETAIL_QUERIES = 4


def grow(teacher: Teacher, thread_id: str, *, runs: int) -> None:
    """More runs in the thread (each with its memory job), and every candidate confirmed."""
    for i in range(runs):
        run_via_api(
            teacher, f"第{i}轮：我教八年级数学，出一份人教版试卷", thread_id, memory_job=True
        )
    for candidate in CoreCandidate.objects.filter(owner=teacher.user):
        fact_via_confirm(teacher, candidate)


def assemble_queries(thread_id: str) -> int:
    thread = Thread.objects.get(pk=thread_id)
    recall_cache_clear()  # a cold process: the recall index is loaded too
    kb_cache_clear()
    with CaptureQueriesContext(connection) as ctx:
        context_assemble(
            scope=Scope.of(thread),
            thread=thread,
            run_id=None,
            user_input="数学试卷人教版",
            agent_system_prompt="你是教学助手。",
        )
    return len(ctx.captured_queries)


def test_context_assemble_queries_are_bounded_and_flat(teacher: Teacher) -> None:
    thread_id = str(
        run_via_api(teacher, "我教八年级数学。以后出题都用人教版教材", memory_job=True)["thread_id"]
    )
    grow(teacher, thread_id, runs=2)
    small = assemble_queries(thread_id)
    grow(teacher, thread_id, runs=10)
    assert Thread.objects.get(pk=thread_id).runs.count() == 13
    large = assemble_queries(thread_id)
    # Whether a recall hit passes the gate (one more query for its row) depends on the
    # data, not on its size: the count may only stay or fall.
    assert large <= small <= CONTEXT_ASSEMBLE_QUERIES


def test_context_assemble_with_the_pytest_django_bound(
    teacher: Teacher, django_assert_max_num_queries: Any
) -> None:
    thread_id = str(run_via_api(teacher, "出一份数据结构试卷", memory_job=True)["thread_id"])
    grow(teacher, thread_id, runs=3)
    thread = Thread.objects.get(pk=thread_id)
    with django_assert_max_num_queries(CONTEXT_ASSEMBLE_QUERIES):
        context_assemble(
            scope=Scope.of(thread),
            thread=thread,
            run_id=None,
            user_input="简答题换两道",
            agent_system_prompt="",
        )


def test_thread_detail_queries_are_bounded_and_flat(teacher: Teacher) -> None:
    thread_id = str(run_via_api(teacher, "出一份数据结构试卷", memory_job=True)["thread_id"])

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            response = teacher.client.get(f"/api/threads/{thread_id}")
            assert response.status_code == 200
        return len(ctx.captured_queries)

    small = queries()
    grow(teacher, thread_id, runs=8)
    assert small == queries() <= THREAD_DETAIL_QUERIES


def test_the_knowledge_base_adds_a_fixed_number_of_queries(
    teacher: Teacher, django_capture_on_commit_callbacks: Any
) -> None:
    thread_id = str(run_via_api(teacher, "出一份数据结构试卷", memory_job=True)["thread_id"])
    without = assemble_queries(thread_id)
    for i in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            kb_document_create(
                agent=teacher.agent,
                owner_id=teacher.user.pk,
                title=f"数学资料{i}",
                text=f"# 数学试卷\n\n人教版八年级数学试卷第{i}套，含答案。",
                visibility="private" if i == 2 else "agent",
            )
    with_kb = assemble_queries(thread_id)
    assert with_kb - without <= KB_QUERIES_WITH_DOCUMENTS


def test_a_warm_read_path_reads_twice_and_writes_nothing(teacher: Teacher) -> None:
    thread_id = str(
        run_via_api(teacher, "我教八年级数学。以后出题都用人教版教材", memory_job=True)["thread_id"]
    )
    grow(teacher, thread_id, runs=2)
    thread = Thread.objects.get(pk=thread_id)

    def assemble() -> list[str]:
        with CaptureQueriesContext(connection) as ctx:
            context = context_assemble(
                scope=Scope.of(thread),
                thread=thread,
                run_id=None,
                user_input="数学试卷人教版",
                agent_system_prompt="你是教学助手。",
            )
        assert context.manifest["sections"]["core"]["fact_ids"]
        return [query["sql"] for query in ctx.captured_queries]

    assemble()  # touches the injected facts' last_used_at
    used = dict(CoreFact.objects.values_list("pk", "last_used_at"))
    assert all(used.values())
    warm = assemble()
    assert len(warm) <= CONTEXT_ASSEMBLE_WARM_QUERIES
    assert not [sql for sql in warm if not sql.lstrip().upper().startswith("SELECT")]
    assert dict(CoreFact.objects.values_list("pk", "last_used_at")) == used


def test_what_both_sections_inject_is_read_in_one_query(
    teacher: Teacher, django_capture_on_commit_callbacks: Any
) -> None:
    """A new conversation that a past run and the knowledge base both answer: the scope's
    rows, then the passages and the entry together."""
    run_via_api(teacher, "出一份二叉树遍历的练习题，含先序中序后序", memory_job=True)
    with django_capture_on_commit_callbacks(execute=True):
        kb_document_create(
            agent=teacher.agent,
            owner_id=teacher.user.pk,
            title="数据结构讲义",
            text="# 二叉树\n\n二叉树的遍历：先序、中序、后序遍历的递归与非递归写法。",
            visibility="agent",
        )

    def assemble() -> tuple[dict[str, Any], list[str]]:
        with CaptureQueriesContext(connection) as ctx:
            context = context_assemble(
                scope=Scope.for_agent(teacher.agent, owner_id=teacher.user.pk),
                thread=None,
                run_id=None,
                user_input="二叉树遍历的练习题再出一份，先序中序后序都要",
                agent_system_prompt="",
            )
        return context.manifest["sections"], [query["sql"] for query in ctx.captured_queries]

    assemble()  # the indexes are loaded
    sections, warm = assemble()
    assert sections["kb"]["chunk_ids"] and sections["recall"]["entries"]
    assert len(warm) == 2, warm
    assert "UNION ALL" in warm[1]
