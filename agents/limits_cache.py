"""The throttles' shared store on the database: Django's database cache, one upsert per write.

Django's ``DatabaseCache.set`` counts the table's rows (to cull it), reads the key, then
updates or inserts it in a transaction: four statements and a commit for every
throttle's write, two throttles per run request. Here a write is one
``INSERT ... ON CONFLICT DO UPDATE`` (PostgreSQL and SQLite), atomic by itself. Nothing
is culled: the throttles keep one key per teacher and one per school
(agents/api/throttles.py), and a key's expired row is overwritten by its next write.
Reads, deletes and the table (a migration's) are the database cache's own.
"""

from __future__ import annotations

import base64
import pickle
from datetime import UTC, datetime
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.db import DatabaseCache
from django.db import connections, router


class LimitsCache(DatabaseCache):
    def set(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        key = self.make_and_validate_key(key, version=version)
        seconds = self.get_backend_timeout(timeout)
        expires = datetime.max if seconds is None else datetime.fromtimestamp(seconds, tz=UTC)
        connection = connections[router.db_for_write(self.cache_model_class)]
        quote = connection.ops.quote_name
        table, name, data, until = (
            quote(self._table),  # type: ignore[attr-defined]
            quote("cache_key"),
            quote("value"),
            quote("expires"),
        )
        encoded = base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} ({name}, {data}, {until}) VALUES (%s, %s, %s) "
                f"ON CONFLICT ({name}) DO UPDATE SET {data} = EXCLUDED.{data}, "
                f"{until} = EXCLUDED.{until}",
                [
                    key,
                    encoded,
                    connection.ops.adapt_datetimefield_value(expires.replace(microsecond=0)),
                ],
            )
