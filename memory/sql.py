"""Helpers for the few reads on the read path written as plain SQL.

The read path runs at every run start; for its handful of indexed reads, building the
ORM query costs more than running it, so they are written as SQL over the models'
tables (both backends). What the ORM would have converted is converted here.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime


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
