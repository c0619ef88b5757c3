"""The read path's plain-SQL reads agree with the ORM querysets they stand for.

The read path (``memory.services.context``) reads facts, a thread's recent turns, the
index version rows and the hits' rows in plain SQL (building the ORM query costs more
than running it). Each read here is checked against the queryset it replaces, on data
made to tell them apart (other scopes, expiry on the boundary day, ties in the order,
running and deleted runs), on SQLite and on PostgreSQL.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from agents.models import Run
from agents.rows import db_datetime
from memory.models import CoreFact, KBChunk, KBDocument, KBIndexState, RecallEntry, RecallScope
from memory.scope import Scope
from memory.services import kb, recall
from memory.services.context import _hit_rows, _scope_rows
from memory.services.core import _live_facts, facts_live_for_scope
from memory.services.index_cache import IndexState
from memory.services.threads import recent_finished_runs
from tests.factories import Teacher

pytestmark = pytest.mark.django_db


def _index_states(scope: Scope) -> tuple[IndexState, dict[int | None, IndexState]]:
    """The version rows as the read path reads them (with its facts, no thread)."""
    read = _scope_rows(scope=scope, thread=None, before_run_id=None, due=timezone.now())
    return read.recall, read.kb


def scope_of(teacher: Teacher) -> Scope:
    return Scope.for_agent(teacher.agent, owner_id=teacher.user.pk)


def fact(teacher: Teacher, text: str, **fields: object) -> CoreFact:
    return CoreFact.objects.create(**scope_of(teacher).filter_kwargs(), text=text, **fields)


def test_live_facts_are_the_live_queryset_in_its_order(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    today = timezone.localdate()
    now = timezone.now()
    due = now - timedelta(seconds=300)
    tie = now - timedelta(days=2)
    fact(teacher, "永久有效")
    fact(teacher, "今天是最后一天", valid_until=today)
    fact(teacher, "明天到期", valid_until=today + timedelta(days=1))
    fact(teacher, "昨天过期", valid_until=today - timedelta(days=1))
    fact(teacher, "早已过期", valid_until=date(2020, 1, 31))
    fact(teacher, "同一时刻甲", confirmed_at=tie, last_used_at=due)  # on the boundary: stale
    fact(teacher, "同一时刻乙", confirmed_at=tie, last_used_at=due + timedelta(seconds=1))
    fact(
        teacher,
        "很久没用",
        confirmed_at=now - timedelta(days=9),
        last_used_at=now - timedelta(days=1),
    )
    fact(teacher, "刚用过", last_used_at=now)
    fact(colleague, "同事的事实")
    fact(outsider, "别校的事实")

    sql = _live_facts(scope=scope_of(teacher), due=due)
    orm = [
        (f.pk, f.text, f.last_used_at is None or f.last_used_at <= due)
        for f in facts_live_for_scope(scope=scope_of(teacher))
    ]

    assert [(pk, text, bool(stale)) for pk, text, stale in sql] == orm
    read = _scope_rows(scope=scope_of(teacher), thread=None, before_run_id=None, due=due)
    assert [(pk, text, bool(stale)) for pk, text, stale in read.facts] == orm
    assert {text for _, text, _ in sql} >= {"今天是最后一天", "同一时刻甲", "同一时刻乙"}
    assert len(orm) == 7


def make_run(teacher: Teacher, thread_id: str | None, n: int, **fields: object) -> Run:
    return Run.objects.create(
        tenant_id=teacher.tenant.pk,
        agent=teacher.agent,
        owner=teacher.user,
        thread_id=thread_id,
        input=f"第{n}轮",
        output=f"回答{n}",
        **fields,
    )


def test_recent_finished_runs_are_the_finished_queryset(teacher: Teacher) -> None:
    from memory.models import Thread

    thread = Thread.objects.create(
        tenant_id=teacher.tenant.pk, agent=teacher.agent, owner=teacher.user, title="会话"
    )
    other = Thread.objects.create(
        tenant_id=teacher.tenant.pk, agent=teacher.agent, owner=teacher.user, title="别的会话"
    )
    start = timezone.now() - timedelta(hours=1)
    statuses = [Run.Status.COMPLETED, Run.Status.FAILED, Run.Status.RUNNING, Run.Status.COMPLETED]
    made = []
    for n in range(settings.THREAD_RECENT_TURNS + 6):
        # Pairs of runs share a creation time: the id breaks the tie.
        made.append(
            make_run(
                teacher,
                thread.pk,
                n,
                status=statuses[n % len(statuses)],
                created_at=start + timedelta(seconds=n // 2),
            )
        )
    make_run(teacher, other.pk, 99, status=Run.Status.COMPLETED, created_at=start)
    excluded = made[-1].pk

    for exclude in (None, excluded):
        orm = (
            Run.objects.filter(thread_id=thread.pk)
            .finished()
            .exclude(pk=exclude)
            .order_by("-created_at", "-pk")[: settings.THREAD_RECENT_TURNS]
        )
        expected = [(r.pk, r.status, r.input, r.output) for r in reversed(list(orm))]
        assert recent_finished_runs(thread_id=thread.pk, exclude_run_id=exclude) == expected
        read = _scope_rows(
            scope=scope_of(teacher), thread=thread, before_run_id=exclude, due=timezone.now()
        )
        assert [(t.run_id, t.user, t.assistant) for t in read.turns] == [
            (pk, user, output if status == Run.Status.COMPLETED else None)
            for pk, status, user, output in expected
        ]
        assert len(expected) == settings.THREAD_RECENT_TURNS


def orm_state(row: RecallScope | KBIndexState | None) -> IndexState:
    if row is None:
        return IndexState()
    if isinstance(row, RecallScope):
        return IndexState(row.pk, row.version, row.entry_count, row.max_entry_id, row.epoch)
    return IndexState(row.pk, row.version, row.chunk_count, row.max_chunk_id)


def test_version_rows_are_the_model_rows(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    me, them = scope_of(teacher), scope_of(colleague)
    # No rows at all: every state is the empty one.
    assert _index_states(me) == (IndexState(), {None: IndexState(), me.owner_id: IndexState()})

    RecallScope.objects.create(
        **me.filter_kwargs(), version=7, entry_count=3, max_entry_id=40, epoch=2
    )
    RecallScope.objects.create(**them.filter_kwargs(), version=9, entry_count=5, max_entry_id=50)
    RecallScope.objects.create(**scope_of(outsider).filter_kwargs(), version=1)
    KBIndexState.objects.create(
        tenant_id=me.tenant_id,
        agent_id=me.agent_id,
        owner=None,
        version=4,
        chunk_count=8,
        max_chunk_id=80,
    )
    KBIndexState.objects.create(
        tenant_id=them.tenant_id, agent_id=them.agent_id, owner_id=them.owner_id, version=6
    )
    KBIndexState.objects.create(
        tenant_id=outsider.tenant.pk, agent=outsider.agent, owner=None, version=11
    )

    for scope in (me, them):
        recall_row = RecallScope.objects.filter(**scope.filter_kwargs()).first()
        kb_rows = KBIndexState.objects.filter(tenant_id=scope.tenant_id, agent_id=scope.agent_id)
        shared = kb_rows.filter(owner__isnull=True).first()
        private = kb_rows.filter(owner_id=scope.owner_id).first()
        expected_kb = {None: orm_state(shared), scope.owner_id: orm_state(private)}

        assert _index_states(scope) == (orm_state(recall_row), expected_kb)
        assert recall._state(scope) == orm_state(recall_row)
        assert kb._states(scope.tenant_id, scope.agent_id, (None, scope.owner_id)) == expected_kb
        assert kb._states(scope.tenant_id, scope.agent_id, (scope.owner_id,)) == {
            scope.owner_id: orm_state(private)
        }
    assert _index_states(me)[1][me.owner_id] == IndexState()  # the colleague's is not mine


def kb_chunks(teacher: Teacher, colleague: Teacher, outsider: Teacher) -> list[KBChunk]:
    """Chunks of every visibility and status, the teacher's, a colleague's, an outsider's:
    the teacher may see the first three."""
    chunks = []
    for owner, visibility, status in [
        (teacher, "agent", "ready"),
        (teacher, "private", "ready"),
        (colleague, "agent", "ready"),
        (colleague, "private", "ready"),
        (teacher, "agent", "processing"),
        (outsider, "agent", "ready"),
    ]:
        document = KBDocument.objects.create(
            tenant_id=owner.tenant.pk,
            agent=owner.agent,
            owner=owner.user,
            title=f"{owner.user.username}-{visibility}-{status}",
            visibility=visibility,
            status=status,
        )
        chunks.append(
            KBChunk.objects.create(
                document=document,
                tenant_id=document.tenant_id,
                agent_id=document.agent_id,
                index_owner=owner.user if visibility == "private" else None,
                position=0,
                heading_path="第一章",
                text=f"内容 {document.title}",
                terms="内容",
            )
        )
    return chunks


def test_hit_rows_are_the_visible_rows(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    me = scope_of(teacher)
    chunks = kb_chunks(teacher, colleague, outsider)
    ids = [c.pk for c in chunks]

    orm = {
        c.pk: kb._ChunkRow(c.document_id, c.document.title, c.heading_path, c.text)
        for c in KBChunk.objects.filter(
            pk__in=ids,
            tenant_id=me.tenant_id,
            agent_id=me.agent_id,
            document__status=KBDocument.Status.READY,
        )
        .filter(
            kb.IndexKey(me.tenant_id, me.agent_id, me.owner_id).chunk_filter()
            | kb.IndexKey(me.tenant_id, me.agent_id, None).chunk_filter()
        )
        .select_related("document")
    }
    assert kb._chunk_rows(me, ids) == orm
    assert set(orm) == {chunks[0].pk, chunks[1].pk, chunks[2].pk}


def recall_entries(teacher: Teacher, colleague: Teacher) -> list[Run]:
    """Three runs of the teacher with entries (the last deleted), then a colleague's: the
    teacher's first two entries are visible."""
    me = scope_of(teacher)
    runs = [make_run(teacher, None, n, status=Run.Status.COMPLETED) for n in range(3)]
    theirs = make_run(colleague, None, 9, status=Run.Status.COMPLETED)
    at = timezone.now().replace(microsecond=123456) - timedelta(days=3)
    for run in runs:
        RecallEntry.objects.create(
            **me.filter_kwargs(), run=run, text=run.input, terms="x", created_at=at
        )
    RecallEntry.objects.create(
        **scope_of(colleague).filter_kwargs(), run=theirs, text="同事", terms="x", created_at=at
    )
    Run.objects.filter(pk=runs[2].pk).update(deleted_at=timezone.now())
    return [*runs, theirs]


def test_entry_rows_are_the_visible_entries_with_the_orms_datetimes(
    teacher: Teacher, colleague: Teacher
) -> None:
    me = scope_of(teacher)
    runs = recall_entries(teacher, colleague)
    run_ids = [r.pk for r in runs]

    orm = {
        e.run_id: recall._EntryRow(e.pk, e.thread_id, e.text, e.created_at)
        for e in RecallEntry.objects.filter(
            **me.filter_kwargs(), run_id__in=run_ids, run__deleted_at__isnull=True
        )
    }
    assert recall._entry_rows(me, run_ids) == orm
    assert set(orm) == {runs[0].pk, runs[1].pk}


def test_the_read_paths_hit_rows_in_one_query_are_each_sections_own(
    teacher: Teacher, colleague: Teacher, outsider: Teacher
) -> None:
    """The passages and the entries read side by side in one UNION ALL (each part's
    columns NULL in the other's rows) are what each section reads alone."""
    me = scope_of(teacher)
    chunk_ids = [c.pk for c in kb_chunks(teacher, colleague, outsider)]
    run_ids = [r.pk for r in recall_entries(teacher, colleague)]
    kb_query = kb.kb_chunk_rows_query(chunk_ids)
    recall_query = recall.recall_entry_rows_query(run_ids)

    kb_rows, recall_rows = _hit_rows(kb_query, recall_query)
    assert len(kb_rows) == len(chunk_ids) and len(recall_rows) == len(run_ids) - 1
    assert kb.kb_chunk_rows(me, kb_rows) == kb._chunk_rows(me, chunk_ids)
    assert recall.recall_entry_rows(me, recall_rows) == recall._entry_rows(me, run_ids)
    assert len(kb._chunk_rows(me, chunk_ids)) == 3 and len(recall._entry_rows(me, run_ids)) == 2
    # One part alone, and neither.
    assert _hit_rows(kb_query, None)[1] == [] and _hit_rows(None, recall_query)[0] == []
    assert kb.kb_chunk_rows(me, _hit_rows(kb_query, None)[0]) == kb._chunk_rows(me, chunk_ids)
    assert _hit_rows(None, None) == ([], [])


def test_db_datetime_is_what_the_orm_reads(teacher: Teacher) -> None:
    run = make_run(teacher, None, 1, status=Run.Status.COMPLETED)
    at = timezone.now().replace(microsecond=654321) - timedelta(days=40)
    Run.objects.filter(pk=run.pk).update(created_at=at)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT created_at FROM {Run._meta.db_table} WHERE id = %s", [run.pk])
        (raw,) = cursor.fetchone()
    converted = db_datetime(raw)
    assert converted == Run.objects.get(pk=run.pk).created_at == at
    assert converted.tzinfo is not None
