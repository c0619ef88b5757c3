"""The admin's cost chart: daily run and memory cost, last 30 days, per tenant and agent.

The daily sums come from ``memory.selectors.cost_by_day`` (checked against the rows,
summed here in Python, on the server's local days); the page draws them as SVG with a
title, a description and a table alternative, in Chinese.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import Run
from memory.costchart import cost_chart, money_label, nice_step
from memory.models import MemoryOp
from memory.selectors import DailyCost, cost_by_day
from tests.factories import Teacher, run_via_api

SHANGHAI = ZoneInfo("Asia/Shanghai")
TODAY = date(2026, 3, 31)


# -- the geometry (pure) ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("largest", "step"),
    [
        ("0", "1"),
        ("0.0004", "0.0001"),
        ("0.001", "0.00025"),
        ("0.0041", "0.002"),
        ("1", "0.25"),
        ("3.9", "1"),
        ("4", "1"),
        ("4.01", "2"),
        ("7", "2"),
        ("9", "2.5"),
        ("19", "5"),
        ("21", "10"),
        ("123456", "50000"),
    ],
)
def test_the_axis_step_is_the_smallest_nice_one_that_reaches_the_largest_day(
    largest: str, step: str
) -> None:
    got = nice_step(Decimal(largest))
    assert got == Decimal(step)
    assert got * 4 >= Decimal(largest)


def test_tick_labels_show_the_decimals_the_step_needs() -> None:
    assert money_label(Decimal("0.0005"), Decimal("0.00025")) == "0.00050"
    assert money_label(Decimal("10"), Decimal("5")) == "10"
    assert money_label(Decimal("0.5"), Decimal("0.25")) == "0.50"


def _days(costs: list[tuple[str, str]]) -> list[DailyCost]:
    first = TODAY - timedelta(days=len(costs) - 1)
    return [
        DailyCost(day=first + timedelta(days=i), run_cost=Decimal(r), memory_cost=Decimal(m))
        for i, (r, m) in enumerate(costs)
    ]


def test_bars_stack_memory_on_run_cost_in_proportion() -> None:
    days = _days([("0", "0")] * 27 + [("0.3", "0.1"), ("0", "0.2"), ("0.6", "0.2")])
    chart = cost_chart(days)
    assert len(chart.bars) == 30
    bottom, top = chart.plot_bottom, chart.plot_top
    scale = (bottom - top) / 0.8  # largest day 0.8 -> step 0.2 -> the axis ends at it
    assert [t.label for t in chart.y_ticks] == ["0.0", "0.2", "0.4", "0.6", "0.8"]
    for bar in chart.bars:
        assert bar.run_y + bar.run_height == pytest.approx(bottom, abs=0.02)
        assert bar.memory_y + bar.memory_height == pytest.approx(bar.run_y, abs=0.02)
        assert bar.run_height == pytest.approx(float(bar.run_cost) * scale, abs=0.02)
        assert bar.memory_height == pytest.approx(float(bar.memory_cost) * scale, abs=0.02)
        assert top <= bar.memory_y and bar.x >= chart.plot_left
        assert bar.x + bar.width <= chart.plot_right
    xs = [bar.x for bar in chart.bars]
    assert xs == sorted(xs)
    assert chart.peak is not None and chart.peak.day == TODAY
    assert (chart.run_total, chart.memory_total) == (Decimal("0.9"), Decimal("0.5"))
    # Today is labelled, and every fifth day back from it.
    assert chart.x_labels[-1].label == TODAY.strftime("%m-%d")
    assert len(chart.x_labels) == 6


def test_a_month_without_cost_draws_no_bar_and_names_no_peak() -> None:
    chart = cost_chart(_days([("0", "0")] * 30))
    assert all(bar.run_height == 0 and bar.memory_height == 0 for bar in chart.bars)
    assert chart.peak is None and chart.total == 0


# -- the daily sums ---------------------------------------------------------------------------
@dataclass
class Costed:
    teacher: Teacher
    outsider: Teacher
    # local day -> (run cost, memory cost) of the teacher's tenant, summed here
    want: dict[date, tuple[Decimal, Decimal]]


def _at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=SHANGHAI)


@pytest.fixture
def costed(teacher: Teacher, outsider: Teacher) -> Costed:
    """Runs and memory ops on chosen local days, some on either side of midnight."""
    placed = [
        # (who, local time, run cost, memory op cost)
        (teacher, _at(TODAY, 0, 5), "0.010000", "0.001000"),
        (teacher, _at(TODAY - timedelta(days=1), 23, 55), "0.020000", "0.002000"),
        (teacher, _at(TODAY - timedelta(days=1), 8), "0.000300", "0.000040"),
        (teacher, _at(TODAY - timedelta(days=29), 0, 1), "0.400000", "0.050000"),
        (teacher, _at(TODAY - timedelta(days=30), 23, 59), "9.000000", "9.000000"),  # too old
        (outsider, _at(TODAY - timedelta(days=1), 12), "5.000000", "5.000000"),  # not theirs
    ]
    want: dict[date, tuple[Decimal, Decimal]] = {}
    for who, when, run_cost, op_cost in placed:
        body = run_via_api(who, "出一份数据结构试卷", memory_job=True)
        Run.objects.filter(pk=body["id"]).update(created_at=when, cost=Decimal(run_cost))
        ops = MemoryOp.objects.filter(run_id=body["id"])
        assert ops.exists()
        ops.update(created_at=when, cost=Decimal(0))
        ops.filter(pk=ops.first().pk).update(cost=Decimal(op_cost))  # type: ignore[union-attr]
        if who is teacher and TODAY - when.date() < timedelta(days=30):
            run_sum, op_sum = want.get(when.date(), (Decimal(0), Decimal(0)))
            want[when.date()] = (run_sum + Decimal(run_cost), op_sum + Decimal(op_cost))
    return Costed(teacher=teacher, outsider=outsider, want=want)


@pytest.mark.django_db
def test_daily_sums_are_the_rows_of_each_local_day_and_every_day_is_there(
    costed: Costed,
) -> None:
    for key, pk in (("tenant_id", costed.teacher.tenant.pk), ("agent_id", costed.teacher.agent.pk)):
        days = cost_by_day(key=key, ids=[pk], today=TODAY)  # type: ignore[arg-type]
        assert [d.day for d in days] == [TODAY - timedelta(days=29 - i) for i in range(30)]
        got = {d.day: (d.run_cost, d.memory_cost) for d in days if d.total_cost}
        assert got == costed.want, key
    everyone = {d.day: d for d in cost_by_day(key=None, today=TODAY)}
    yesterday = TODAY - timedelta(days=1)
    assert everyone[yesterday].run_cost == costed.want[yesterday][0] + Decimal(5)
    outsider = cost_by_day(key="tenant_id", ids=[costed.outsider.tenant.pk], today=TODAY)
    assert sum(d.total_cost for d in outsider) == Decimal(10)


# -- the page ---------------------------------------------------------------------------------
@pytest.fixture
def on_today(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's today is TODAY (the fixture's days are placed around it)."""
    monkeypatch.setattr(timezone, "localdate", lambda *a, **k: TODAY)


def _operator(*, superuser: bool = True) -> Client:
    users = get_user_model().objects
    count = users.count()
    if superuser:
        user = users.create_superuser(f"ops{count}", "ops@example.com", "pw")
    else:
        user = users.create_user(f"staff{count}", password="pw", is_staff=True)
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_tenant_and_agent_charts_show_the_days_as_svg_and_as_a_table(
    costed: Costed, on_today: None
) -> None:
    client = _operator()
    tenant, agent = costed.teacher.tenant, costed.teacher.agent
    for url in (f"/admin/agents/tenant/{tenant.pk}/cost/", f"/admin/agents/agent/{agent.pk}/cost/"):
        response = client.get(url)
        assert response.status_code == 200, url
        page = response.content.decode()
        svg = re.search(r"<svg class=\"cost-chart\"[^>]*>.*?</svg>", page, re.S)
        assert svg is not None
        assert 'role="img"' in svg.group(0)
        assert 'aria-labelledby="cost-chart-title cost-chart-desc"' in svg.group(0)
        title = re.search(r'<title id="cost-chart-title">(.*?)</title>', page, re.S)
        desc = re.search(r'<desc id="cost-chart-desc">(.*?)</desc>', page, re.S)
        assert title and "近 30 天每日运行成本与记忆成本" in title.group(1)
        assert desc and "堆叠柱状图" in desc.group(1)
        peak_day = max(costed.want, key=lambda d: sum(costed.want[d]))
        assert f"成本最高的一天是 {peak_day:%Y-%m-%d}" in desc.group(1)
        # One bar group per day; the bars drawn are the days that cost something.
        assert page.count('<g class="day">') == 30
        assert svg.group(0).count('class="run"') == len(costed.want)
        # The table alternative: every day, its two costs, and the totals.
        rows = re.findall(
            r'<tr>\s*<th scope="row"><time datetime="([\d-]+)">.*?</time></th>\s*'
            r'<td class="num">([\d.]+)</td>\s*<td class="num">([\d.]+)</td>',
            page,
            re.S,
        )
        assert len(rows) == 30
        table = {date.fromisoformat(d): (Decimal(r), Decimal(m)) for d, r, m in rows}
        assert {d: v for d, v in table.items() if any(v)} == costed.want
        run_total = sum(r for r, _ in costed.want.values())
        assert f"运行成本 {run_total}" in page
        assert "5.000000" not in page  # the other school's day


@pytest.mark.django_db
def test_the_chart_of_everything_and_the_changelist_links(costed: Costed, on_today: None) -> None:
    client = _operator()
    changelist = client.get("/admin/agents/tenant/").content.decode()
    assert f'href="/admin/agents/tenant/{costed.teacher.tenant.pk}/cost/"' in changelist
    assert "每日成本" in changelist
    assert f'href="/admin/agents/agent/{costed.teacher.agent.pk}/cost/"' in (
        client.get("/admin/agents/agent/").content.decode()
    )
    response = client.get("/admin/agents/tenant/cost/")
    assert response.status_code == 200
    assert response.context["subject"] is None
    assert sum(bar.total_cost for bar in response.context["chart"].bars) > 0


@pytest.mark.django_db
def test_the_chart_needs_a_view_permission_and_an_existing_row(costed: Costed) -> None:
    url = f"/admin/agents/tenant/{costed.teacher.tenant.pk}/cost/"
    assert Client().get(url).status_code == 302  # to the admin login
    assert _operator(superuser=False).get(url).status_code == 403
    assert _operator().get("/admin/agents/tenant/987654/cost/").status_code == 404


@pytest.mark.django_db
def test_the_chart_queries_do_not_grow_with_the_rows(teacher: Teacher) -> None:
    client = _operator()
    url = f"/admin/agents/agent/{teacher.agent.pk}/cost/"

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    run_via_api(teacher, "一", memory_job=True)
    queries()  # the session's first request also reads the account's language once
    few = queries()
    for i in range(5):
        run_via_api(teacher, f"出一份第{i}份试卷", memory_job=True)
    assert queries() == few
