"""Plain SQL for the few statements on the hot paths, with the ORM's own conversions.

A run request and a memory job each make about ten indexed statements; for most of them
building and compiling the ORM query costs more CPU than the database spends running it
(2 ms against 0.1 ms for a join of four tables). These helpers write such a statement
once as SQL over the models' tables and keep everything else the ORM's: instances come
from ``Model.from_db`` with each field's database converters, values go in through each
field's ``pre_save`` and ``get_db_prep_save``. They work on SQLite and PostgreSQL.

For the reads written as plain SQL elsewhere (a few columns, no instances),
``db_datetime`` converts a datetime column as the ORM would, and ``fetch_all`` runs one.

What they skip is what these statements do not need: ``insert_instance`` and
``update_row`` send no ``pre_save``/``post_save`` signals (the project connects none to
the models they are used for; tests/test_rows.py checks), and a plain statement is not
seen by ``QuerySet`` caches (there are none on these paths).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Field, Model
from django.utils import timezone
from django.utils.dateparse import parse_datetime

Converter = Callable[[Any, Any, Any], Any]


class RowPlan:
    """Several models' concrete columns side by side in one row, and how to turn a row
    back into instances (None where a LEFT JOIN found nothing).

    ``sql`` holds ``{columns}`` where the select list goes; ``parts`` names each model
    and its table alias in the order of the columns.
    """

    def __init__(self, sql: str, parts: Sequence[tuple[type[Model], str]]) -> None:
        self.parts: list[tuple[type[Model], list[str], list[tuple[int, Any, list[Converter]]]]] = []
        columns: list[str] = []
        quote = connection.ops.quote_name
        for model, alias in parts:
            fields = model._meta.concrete_fields
            converters = []
            for i, field in enumerate(fields):
                col = field.get_col(alias)
                found = connection.ops.get_db_converters(col) + field.get_db_converters(connection)
                if found:
                    converters.append((i, col, found))
            columns += [f"{alias}.{quote(str(field.column))}" for field in fields]
            self.parts.append((model, [field.attname for field in fields], converters))
        self.sql = sql.format(columns=", ".join(columns))

    def instances(self, row: Sequence[Any]) -> list[Model | None]:
        found: list[Model | None] = []
        start = 0
        for model, names, converters in self.parts:
            values = list(row[start : start + len(names)])
            start += len(names)
            if values[0] is None:  # the primary key: nothing joined
                found.append(None)
                continue
            for i, col, functions in converters:
                for function in functions:
                    values[i] = function(values[i], col, connection)
            found.append(model.from_db(connection.alias, names, values))
        return found

    def fetch_one(self, params: Sequence[Any]) -> list[Model | None] | None:
        """The instances of the first row the statement answers, or None."""
        with connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            row = cursor.fetchone()
        return None if row is None else self.instances(row)

    def fetch_all(self, params: Sequence[Any]) -> list[list[Model | None]]:
        """The instances of every row the statement answers, in its order."""
        with connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            rows = cursor.fetchall()
        return [self.instances(row) for row in rows]


class PlanCache:
    """One :class:`RowPlan` per database vendor, built on first use (the column list and
    the converters depend on the backend)."""

    def __init__(self, build: Callable[[], RowPlan]) -> None:
        self._build = build
        self._plans: dict[str, RowPlan] = {}

    def get(self) -> RowPlan:
        plan = self._plans.get(connection.vendor)
        if plan is None:
            plan = self._plans[connection.vendor] = self._build()
        return plan


def table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _field(model: type[Model], name: str) -> Field[Any, Any]:
    field = model._meta.get_field(name)
    assert isinstance(field, Field), f"{model.__name__}.{name} is not a column"
    return field


def column(model: type[Model], name: str) -> str:
    return connection.ops.quote_name(str(_field(model, name).column))


def db_value(model: type[Model], name: str, value: Any) -> Any:
    """``value`` of field ``name`` as the database takes it (what ``update()`` would send)."""
    return _field(model, name).get_db_prep_save(value, connection)


def db_datetime(value: datetime | str) -> datetime:
    """A datetime column as read by a cursor, as the ORM returns it (aware with USE_TZ):
    SQLite returns naive UTC (or text), PostgreSQL an aware datetime."""
    if isinstance(value, str):
        parsed = parse_datetime(value)
        if parsed is None:
            raise ValueError(f"not a datetime: {value!r}")
        value = parsed
    if settings.USE_TZ and timezone.is_naive(value):
        value = timezone.make_aware(value, connection.timezone)
    return value


def insert_instance[M: Model](instance: M) -> M:
    """Insert a new, unsaved instance as ``save()`` would (field defaults and
    ``auto_now_add`` applied, the new primary key set on it), in one statement.
    No signals are sent."""
    model = type(instance)
    meta = model._meta
    pk = meta.pk
    assert pk is not None
    fields = [
        f
        for f in meta.concrete_fields
        if not (f.primary_key and getattr(instance, f.attname) is None)
    ]
    values = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    quote = connection.ops.quote_name
    names = ", ".join(quote(str(f.column)) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    sql = f"INSERT INTO {table(model)} ({names}) VALUES ({marks}) RETURNING {quote(str(pk.column))}"
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        row = cursor.fetchone()
    assert row is not None
    setattr(instance, pk.attname, row[0])
    instance._state.adding = False
    instance._state.db = connection.alias
    return instance


def update_row(
    model: type[Model],
    pk: Any,
    values: Mapping[str, Any],
    *,
    where: Mapping[str, Any] | None = None,
) -> int:
    """``model.objects.filter(pk=pk, **where).update(**values)`` for plain values (no
    expressions), as one statement; the number of rows changed. A ``where`` value of
    None means ``IS NULL``, a tuple ``IN``."""
    sets = ", ".join(f"{column(model, name)} = %s" for name in values)
    params = [db_value(model, name, value) for name, value in values.items()]
    pk_column = connection.ops.quote_name(str(model._meta.pk.column))  # type: ignore[union-attr]
    conditions = [f"{pk_column} = %s"]
    params.append(pk)
    for name, value in (where or {}).items():
        if value is None:
            conditions.append(f"{column(model, name)} IS NULL")
        elif isinstance(value, tuple):
            conditions.append(f"{column(model, name)} IN ({', '.join(['%s'] * len(value))})")
            params += [db_value(model, name, item) for item in value]
        else:
            conditions.append(f"{column(model, name)} = %s")
            params.append(db_value(model, name, value))
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table(model)} SET {sets} WHERE {' AND '.join(conditions)}", params)
        return int(cursor.rowcount)


def fetch_all(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of one plain ``SELECT`` (``sql`` with ``%s`` placeholders)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
