"""Rate limits shared by every web process: GCRA buckets, taken in one atomic statement.

A limit of ``n`` per ``period`` is a bucket of ``n`` requests refilled at ``n`` per
``period`` (the generic cell rate algorithm): each key keeps one number, its theoretical
arrival time ``tat``. A request at ``now`` is admitted when ``tat <= now + period - step``
(``step = period / n``), and then moves it to ``max(tat, now) + step``; a refused request
leaves it where it is and waits ``tat - (now + period - step)`` seconds. So a teacher may
start ``n`` runs at once, then one every ``step`` seconds; over any long stretch no more
than ``n`` per ``period`` get through.

:func:`rate_take` takes one request from several keys at once (a run request: the
teacher's and the school's) in one statement, each key admitted or refused on its own:

- the database (the default): one ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` over
  :class:`agents.models.RateBucket` rows (PostgreSQL and SQLite). The check and the
  move happen in the row's update, under its row lock, so concurrent requests in several
  processes never both take the last place (a read then a write would);
- Redis, when ``LIMITS_CACHE_URL`` is set: one Lua script, atomic in Redis.

Rows are never culled: one per teacher and one per school.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings
from django.db import connections, router

from agents.models import RateBucket

_PERIODS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass(frozen=True, slots=True)
class Rate:
    """``count`` requests per ``period`` seconds."""

    count: int
    period: float

    @classmethod
    def parse(cls, text: str) -> Rate:
        """``"30/minute"`` (DRF's notation: the unit's first letter counts)."""
        count, unit = text.split("/", 1)
        return cls(count=int(count), period=_PERIODS[unit.strip()[0].lower()])

    @property
    def step(self) -> float:
        return self.period / self.count


@dataclass(frozen=True, slots=True)
class Take:
    """One request against one key's bucket."""

    key: str
    rate: Rate


def rate_take(takes: Sequence[Take], *, now: float | None = None) -> list[float]:
    """Take one request from each key's bucket; per key, 0.0 if admitted, else the seconds
    until it would be. Keys are independent: a key that admits is charged even when
    another refuses (a request refused by the school's limit still spends its teacher's).
    """
    if not takes:
        return []
    now = time.time() if now is None else now
    if settings.LIMITS_CACHE_URL:
        return _take_redis(takes, now)
    return _take_database(takes, now)


def _take_database(takes: Sequence[Take], now: float) -> list[float]:
    connection = connections[router.db_for_write(RateBucket)]
    quote = connection.ops.quote_name
    table = quote(RateBucket._meta.db_table)
    # The model's fields are its columns (no db_column).
    key, tat, step, bound, admitted = (
        quote(name) for name in ("key", "tat", "step", "bound", "admitted")
    )
    greatest = "GREATEST" if connection.vendor == "postgresql" else "MAX"
    # Sorted keys: concurrent statements lock the rows in one order (no deadlock).
    ordered = sorted(takes, key=lambda take: take.key)
    rows = ", ".join(["(%s, %s, %s, %s, %s)"] * len(ordered))
    params: list[Any] = []
    for take in ordered:
        # A new key's bucket is empty: it admits, and its tat becomes now + step.
        params += [take.key, now + take.rate.step, take.rate.step, _bound(take, now), True]
    # EXCLUDED carries this request's values: tat = now + step, its step and bound. In
    # SET, the table's columns are the row's values before this update.
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({key}, {tat}, {step}, {bound}, {admitted}) VALUES {rows} "
            f"ON CONFLICT ({key}) DO UPDATE SET "
            f"{admitted} = {table}.{tat} <= EXCLUDED.{bound}, "
            f"{tat} = CASE WHEN {table}.{tat} <= EXCLUDED.{bound} "
            f"THEN {greatest}({table}.{tat} + EXCLUDED.{step}, EXCLUDED.{tat}) "
            f"ELSE {table}.{tat} END, "
            f"{step} = EXCLUDED.{step}, {bound} = EXCLUDED.{bound} "
            f"RETURNING {key}, {tat}, {admitted}",
            params,
        )
        answered = {row[0]: (float(row[1]), bool(row[2])) for row in cursor.fetchall()}
    waits = []
    for take in takes:
        new_tat, ok = answered[take.key]
        waits.append(0.0 if ok else max(new_tat - _bound(take, now), 0.0))
    return waits


def _bound(take: Take, now: float) -> float:
    """The latest tat at which a request at ``now`` is still admitted."""
    return now + take.rate.period - take.rate.step


# KEYS: the buckets; ARGV: now, then each key's step and bound. Returns per key "0"
# (admitted) or the seconds to wait, as strings (Lua numbers become integers in replies).
_SCRIPT = """
local now = tonumber(ARGV[1])
local out = {}
for i, key in ipairs(KEYS) do
  local step = tonumber(ARGV[2 * i])
  local bound = tonumber(ARGV[2 * i + 1])
  local tat = tonumber(redis.call('GET', key) or '0')
  if tat <= bound then
    tat = math.max(tat, now) + step
    redis.call('SET', key, string.format('%.17g', tat), 'PX', math.ceil((tat - now) * 1000))
    out[i] = '0'
  else
    out[i] = string.format('%.17g', tat - bound)
  end
end
return out
"""
_redis_lock = threading.Lock()
_redis: dict[str, Any] = {}


def _redis_script() -> Any:
    """The script registered on a client of LIMITS_CACHE_URL (one per process and URL)."""
    url = settings.LIMITS_CACHE_URL
    with _redis_lock:
        if url not in _redis:
            # A request never hangs on a black-holed Redis.
            client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
            _redis[url] = client.register_script(_SCRIPT)
        return _redis[url]


def _take_redis(takes: Sequence[Take], now: float) -> list[float]:
    # Installations (and test runs) sharing one Redis keep apart by their queue name.
    keys = [f"{settings.Q_NAME}:limits:{take.key}" for take in takes]
    args: list[Any] = [repr(now)]
    for take in takes:
        args += [repr(take.rate.step), repr(_bound(take, now))]
    answer = _redis_script()(keys=keys, args=args)
    return [float(value) for value in answer]


def rate_store_probe() -> str:
    """Raise if the store does not answer (doctor); return what it is."""
    if settings.LIMITS_CACHE_URL:
        _redis_script().registered_client.ping()
        return "Redis"
    RateBucket.objects.filter(key="").exists()
    return f"database table {RateBucket._meta.db_table}"
