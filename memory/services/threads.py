"""Thread services and selectors (design v2 §2.1–§2.3)."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.db.models import Count, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.models import Run
from agents.rows import insert_instance
from memory.models import Thread
from memory.scope import Scope


class ThreadRejected(ValueError):
    """A run named a thread it may not use. The message reveals nothing about others."""

    def __init__(self) -> None:
        super().__init__(_("找不到这个会话：它不存在，或不属于你与这个智能体的对话。"))


def thread_title_from(text: str) -> str:
    flat = " ".join(text.split())
    return flat[: settings.THREAD_TITLE_CHARS]


def thread_for_run(*, scope: Scope, thread_id: str | None, first_input: str) -> Thread:
    """The thread a new run goes into. Call inside the run's creating transaction.

    Absent id: a new thread titled from the input. Present: it must belong to the same
    tenant, agent and owner; anything else is indistinguishable from "no such thread".
    An archived thread is reactivated by the run.
    """
    now = timezone.now()
    if thread_id is None:
        thread = Thread(
            **scope.filter_kwargs(),
            title=thread_title_from(first_input),
            created_at=now,
            updated_at=now,
        )
        return insert_instance(thread)  # one INSERT without the compiler (agents/rows.py)
    # One statement: the scope check, the reactivation and the read of the row (an
    # UPDATE ... RETURNING, PostgreSQL and SQLite), where a SELECT then an UPDATE took two.
    quote = connection.ops.quote_name
    columns = ", ".join(quote(str(f.column)) for f in Thread._meta.concrete_fields)
    rows = list(
        Thread.objects.raw(
            f"UPDATE {quote(Thread._meta.db_table)} SET status = %s, updated_at = %s "
            "WHERE id = %s AND tenant_id = %s AND agent_id = %s AND owner_id = %s "
            f"AND deleted_at IS NULL RETURNING {columns}",
            [
                Thread.Status.ACTIVE.value,
                connection.ops.adapt_datetimefield_value(now),
                thread_id,
                scope.tenant_id,
                scope.agent_id,
                scope.owner_id,
            ],
        )
    )
    if not rows:
        raise ThreadRejected()
    return rows[0]


def thread_of_scope(*, scope: Scope, thread_id: str) -> Thread:
    """The scope's thread ``thread_id``; :class:`ThreadRejected` if it is not the scope's
    (missing, another tenant's, another owner's or another agent's look the same)."""
    thread = Thread.objects.visible().filter(pk=thread_id, **scope.filter_kwargs()).first()
    if thread is None:
        raise ThreadRejected()
    return thread


def thread_list(*, scope: Scope, status: str = Thread.Status.ACTIVE) -> QuerySet[Thread]:
    return (
        Thread.objects.for_scope(**scope.filter_kwargs())
        .filter(status=status)
        .annotate(run_count=Count("runs"))
        .order_by("-updated_at", "-pk")
    )


def thread_archive(*, thread: Thread) -> Thread:
    """Idempotent: archiving an archived thread changes nothing."""
    if thread.status != Thread.Status.ARCHIVED:
        Thread.objects.filter(pk=thread.pk).update(status=Thread.Status.ARCHIVED)
        thread.status = Thread.Status.ARCHIVED
    return thread


def thread_rename(*, thread: Thread, title: str) -> Thread:
    title = " ".join(title.split())
    Thread.objects.filter(pk=thread.pk).update(title=title)
    thread.title = title
    return thread


def thread_runs(*, thread: Thread) -> QuerySet[Run]:
    """The thread's messages, oldest first (restoring a conversation)."""
    return Run.objects.filter(thread_id=thread.pk).order_by("created_at", "pk")


def recent_finished_runs_query(
    *, thread_id: str, exclude_run_id: int | None = None
) -> tuple[str, list[str | int]]:
    """The SQL (and its parameters) of :func:`recent_finished_runs`, for a caller that
    reads it together with other rows (the read path).

    Columns: n (1 = the newest run), id, status, input, output.
    """
    params: list[str | int] = [thread_id, Run.Status.COMPLETED.value, Run.Status.FAILED.value]
    skip = ""
    if exclude_run_id is not None:
        skip = " AND id <> %s"
        params.append(exclude_run_id)
    params.append(settings.THREAD_RECENT_TURNS)
    return (
        "SELECT ROW_NUMBER() OVER (ORDER BY created_at DESC, id DESC) AS n, id, status, "
        "input, output FROM (SELECT id, status, input, output, created_at "
        f"FROM {Run._meta.db_table} WHERE thread_id = %s AND status IN (%s, %s){skip} "
        "ORDER BY created_at DESC, id DESC LIMIT %s) r",
        params,
    )


def recent_finished_runs(
    *, thread_id: str, exclude_run_id: int | None = None
) -> list[tuple[int, str, str, str]]:
    """The thread's last ``THREAD_RECENT_TURNS`` finished runs (id, status, input,
    output), oldest first; running runs are skipped. What the read path shows as the
    thread's turns and what recall's conversation query reads.

    Plain SQL (``Run.objects.filter(thread=...).finished()`` ordered by
    ``-created_at, -pk``): it runs at every run start, and building the ORM query costs
    more than running it.
    """
    sql, params = recent_finished_runs_query(thread_id=thread_id, exclude_run_id=exclude_run_id)
    with connection.cursor() as cursor:
        cursor.execute(f"{sql} ORDER BY n DESC", params)
        return [(pk, status, run_input, output) for _, pk, status, run_input, output in cursor]
