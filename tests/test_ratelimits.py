"""The run limits' buckets (agents/ratelimits.py) on the configured store: the database
(SQLite or PostgreSQL, by DATABASE_URL) or Redis (LIMITS_CACHE_URL; .ci/run has a step).

The store's answers are compared with a plain model of the algorithm, times are given
(no test waits for the clock), and concurrent requests from several connections never
admit more than the bucket holds.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from typing import Any

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.ratelimits import Rate, Take, rate_take
from tests.factories import Teacher

T0 = 1_800_000_000.0  # a time in 2027: tats are seconds since the epoch


def fresh_key() -> str:
    return f"test:{uuid.uuid4().hex}"


def model_take(tat: float, rate: Rate, now: float) -> tuple[float, float]:
    """The algorithm in plain Python: (new tat, wait); wait 0 when admitted."""
    bound = now + rate.period - rate.step
    if tat <= bound:
        return max(tat, now) + rate.step, 0.0
    return tat, tat - bound


@pytest.mark.parametrize(
    ("text", "count", "period"),
    [
        ("30/minute", 30, 60.0),
        ("300/min", 300, 60.0),
        ("1/s", 1, 1.0),
        ("5/hour", 5, 3600.0),
        ("2/day", 2, 86400.0),
    ],
)
def test_rates_parse_as_the_settings_write_them(text: str, count: int, period: float) -> None:
    rate = Rate.parse(text)
    assert (rate.count, rate.period) == (count, period)
    assert rate.step == pytest.approx(period / count)


@pytest.mark.django_db
def test_a_bucket_admits_its_count_at_once_then_one_per_step() -> None:
    key, rate = fresh_key(), Rate.parse("3/minute")
    take = [Take(key=key, rate=rate)]
    assert [rate_take(take, now=T0)[0] for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = rate_take(take, now=T0)[0]
    assert wait == pytest.approx(20.0)  # one place back every 20 s
    assert rate_take(take, now=T0 + 19.9)[0] == pytest.approx(0.1)
    assert rate_take(take, now=T0 + 20.0) == [0.0]
    assert rate_take(take, now=T0 + 20.0)[0] == pytest.approx(20.0)
    # A full period after the last admitted request the bucket is full again.
    assert [rate_take(take, now=T0 + 120.0)[0] for _ in range(4)][:3] == [0.0, 0.0, 0.0]


@pytest.mark.django_db
def test_keys_are_taken_together_and_answered_each_on_its_own() -> None:
    tight, loose = fresh_key(), fresh_key()
    takes = [Take(key=tight, rate=Rate.parse("1/minute")), Take(key=loose, rate=Rate(3, 60.0))]
    with CaptureQueriesContext(connection) as queries:
        first = rate_take(takes, now=T0)
    assert first == [0.0, 0.0]
    assert len(queries) <= 1  # one statement on the database (none on Redis)
    second = rate_take(takes, now=T0 + 1)
    assert second[0] == pytest.approx(59.0) and second[1] == 0.0
    # The loose key was charged by the refused request: one place left.
    assert rate_take([takes[1]], now=T0 + 1) == [0.0]
    assert rate_take([takes[1]], now=T0 + 1)[0] > 0


@pytest.mark.django_db
@settings(max_examples=25, deadline=None)
@given(
    count=st.integers(min_value=1, max_value=6),
    period=st.sampled_from([1.0, 60.0, 3600.0]),
    gaps=st.lists(st.floats(min_value=0, max_value=2.0), min_size=1, max_size=25),
)
def test_the_store_answers_as_the_algorithm_and_never_exceeds_the_rate(
    count: int, period: float, gaps: list[float]
) -> None:
    key, rate = fresh_key(), Rate(count, period)
    times = list(itertools.accumulate(gap * rate.step for gap in gaps))
    tat, admitted = 0.0, []
    for offset in times:
        now = T0 + offset
        tat, expected = model_take(tat, rate, now)
        (wait,) = rate_take([Take(key=key, rate=rate)], now=now)
        assert wait == pytest.approx(expected, abs=1e-5)
        if wait == 0:
            admitted.append(now)
        else:
            # The wait is exact (to the float resolution of the epoch's seconds): a request
            # that long after is admitted, by the model.
            assert model_take(tat, rate, now + wait + 1e-6)[1] == 0
    # At most the bucket plus what refilled between the first and the last admission.
    span = admitted[-1] - admitted[0]
    assert len(admitted) <= count + span / rate.step + 1e-6


def race(*, key: str, rate: Rate, threads_n: int, takes_each: int) -> list[float]:
    """Every thread (a connection of its own) takes ``takes_each`` from one bucket at once."""
    barrier = threading.Barrier(threads_n)
    waits: list[float] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def contend() -> None:
        try:
            barrier.wait(timeout=30)
            mine = [rate_take([Take(key=key, rate=rate)], now=T0)[0] for _ in range(takes_each)]
            with lock:
                waits.extend(mine)
        except BaseException as exc:  # reported by the caller
            errors.append(exc)
        finally:
            connections.close_all()

    workers = [threading.Thread(target=contend) for _ in range(threads_n)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert not errors, errors
    return waits


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_from_several_connections_never_over_admit() -> None:
    """Eight threads race for a bucket of five, two requests each, five times over."""
    for _ in range(5):
        waits = race(key=fresh_key(), rate=Rate.parse("5/hour"), threads_n=8, takes_each=2)
        assert len(waits) == 16
        assert sum(1 for wait in waits if wait == 0) == 5


@pytest.mark.django_db
def test_a_run_request_takes_both_limits_in_one_statement(settings: Any, teacher: Teacher) -> None:
    settings.RUN_RATE_USER = "100/minute"
    settings.RUN_RATE_TENANT = "100/minute"
    path = f"/api/agents/{teacher.agent.pk}/run"
    with CaptureQueriesContext(connection) as queries:
        response = teacher.client.post(path, {"input": "出一份数据结构试卷"}, format="json")
    assert response.status_code == 200
    limits = [q["sql"] for q in queries if "agents_rate_bucket" in q["sql"]]
    assert len(limits) == (0 if settings.LIMITS_CACHE_URL else 1)
