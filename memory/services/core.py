"""Core memory (L2), read side: the confirmed facts injected into every run.

Nothing here creates a fact: the only write path from candidate to fact is
``memory.services.facts``, called by a person (panel, API, admin).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from memory import boundary
from memory.models import CoreCandidate, CoreFact, FactQuerySet, RedlineAudit
from memory.render import EMPTY, Item, Rendered, render_list
from memory.scope import Scope
from memory.services.audit import redline_audit_record
from memory.stored import red_line_hits


def facts_for_scope(*, scope: Scope) -> FactQuerySet:
    """Every fact of the scope, live and expired, newest first."""
    return CoreFact.objects.for_scope(**scope.filter_kwargs()).order_by("-confirmed_at", "-pk")


def facts_live_for_scope(*, scope: Scope) -> FactQuerySet:
    """The facts still valid today (local date): the ones injected and capped."""
    return facts_for_scope(scope=scope).live(today=timezone.localdate())


def facts_expired_for_scope(*, scope: Scope) -> FactQuerySet:
    """The facts whose last valid day has passed: shown under 已过期, never injected."""
    return facts_for_scope(scope=scope).expired(today=timezone.localdate())


def candidates_for_scope(*, scope: Scope) -> QuerySet[CoreCandidate]:
    """Pending candidates, most confident first; none from a run its teacher deleted (they
    go with the run's cascade, and are hidden from the deletion on)."""
    return (
        CoreCandidate.objects.for_scope(**scope.filter_kwargs())
        .filter(source_run__deleted_at__isnull=True)
        .order_by("-confidence", "-created_at", "-pk")
    )


#: A live fact as the read path reads it: (id, text, last used before the resolution).
LiveFact = tuple[int, str, object]


def core_render(
    *,
    scope: Scope,
    budget: int,
    facts: Sequence[LiveFact] | None = None,
    now: datetime | None = None,
) -> Rendered:
    """The ``[核心记忆]`` section: confirmed facts, newest first, within ``budget``.

    Only live facts are injected (an expired one never is). Each fact is re-checked
    against the red line (a fact confirmed before a rule
    existed is held back and counted); every injected fact's ``last_used_at`` is
    touched, which is what the LRU eviction reads, when it is older than
    ``CORE_LAST_USED_RESOLUTION`` seconds (so most run starts write nothing).

    ``facts``: :func:`live_facts_query`'s rows (for ``core_last_used_due(now)``) if the
    caller has just read them with other rows; else they are read here.
    """
    if budget <= 0:
        return EMPTY
    items: list[Item] = []
    blocked: Counter[str] = Counter()
    now = now or timezone.now()
    if facts is None:
        facts = _live_facts(scope=scope, due=core_last_used_due(now))
    stale: dict[int, bool] = {}
    for fact_id, text, is_stale in facts:
        hits = red_line_hits(text)
        if hits:
            blocked.update(hit.category.value for hit in hits)
            continue
        items.append(Item(id=fact_id, text=text))
        stale[fact_id] = bool(is_stale)
    if blocked:
        redline_audit_record(scope=scope, source=RedlineAudit.Source.INJECTION, counts=blocked)
    rendered = render_list(
        header=boundary.CORE_HEADER, footer=boundary.CORE_FOOTER, items=items, budget=budget
    )
    touch = [fact_id for fact_id in rendered.ids if stale[fact_id]]
    if touch:
        CoreFact.objects.filter(pk__in=touch).update(last_used_at=now)
    return rendered


def core_last_used_due(now: datetime) -> datetime:
    """A fact last used at or before this is touched again when injected."""
    return now - timedelta(seconds=settings.CORE_LAST_USED_RESOLUTION)


def live_facts_query(*, scope: Scope, due: datetime) -> tuple[str, list[Any]]:
    """The SQL (and its parameters) of ``facts_live_for_scope``'s rows as the read path
    reads them, for a caller that reads them together with other rows.

    Columns: rank (1 = newest, the queryset's order), id, text, last used at or before
    ``due`` or never (0 or 1).
    """
    return (
        "SELECT ROW_NUMBER() OVER (ORDER BY confirmed_at DESC, id DESC) AS n, id, text, "
        "CASE WHEN last_used_at IS NULL OR last_used_at <= %s THEN 1 ELSE 0 END AS stale "
        f"FROM {CoreFact._meta.db_table} "
        "WHERE tenant_id = %s AND agent_id = %s AND owner_id = %s "
        "AND (valid_until IS NULL OR valid_until >= %s)",
        [
            connection.ops.adapt_datetimefield_value(due),
            scope.tenant_id,
            scope.agent_id,
            scope.owner_id,
            connection.ops.adapt_datefield_value(timezone.localdate()),
        ],
    )


def _live_facts(*, scope: Scope, due: datetime) -> list[LiveFact]:
    """``facts_live_for_scope``'s (id, text, last used before ``due`` or never), newest
    first. Plain SQL: it runs at every run start, and building the ORM query costs more
    than running it."""
    sql, params = live_facts_query(scope=scope, due=due)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM ({sql}) f ORDER BY n", params)
        return [(fact_id, text, stale) for _, fact_id, text, stale in cursor.fetchall()]
