"""The geometry of the admin's cost chart: stacked daily bars (run cost under memory cost).

Pure: it takes the days (anything with ``day``, ``run_cost`` and ``memory_cost``, such
as :class:`memory.selectors.DailyCost`) and returns coordinates and tick labels for a
server-rendered SVG (``memory/templates/admin/memory/cost_chart.html``); no JavaScript,
no library. The y axis starts at zero and ends on a "nice" step (1, 2, 2.5 or 5 × 10ⁿ)
above the largest day, so bars are comparable across the chart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Protocol

WIDTH = 760
HEIGHT = 300
# Room for the y labels on the left and the day labels below.
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 16, 36
Y_TICKS = 4
X_LABEL_EVERY = 5
BAR_FILL = 0.72  # share of a day's slot its bar takes


class Day(Protocol):
    @property
    def day(self) -> date: ...

    @property
    def run_cost(self) -> Decimal: ...

    @property
    def memory_cost(self) -> Decimal: ...


@dataclass(frozen=True, slots=True)
class Bar:
    day: date
    run_cost: Decimal
    memory_cost: Decimal
    x: float
    width: float
    run_y: float
    run_height: float
    memory_y: float
    memory_height: float

    @property
    def total_cost(self) -> Decimal:
        return self.run_cost + self.memory_cost


@dataclass(frozen=True, slots=True)
class Tick:
    position: float
    label: str


@dataclass(frozen=True, slots=True)
class CostChart:
    width: int
    height: int
    plot_left: int
    plot_right: int
    plot_top: int
    plot_bottom: int
    bars: tuple[Bar, ...]
    y_ticks: tuple[Tick, ...]
    x_labels: tuple[Tick, ...]
    run_total: Decimal
    memory_total: Decimal
    peak: Bar | None  # the most expensive day, None when nothing cost anything

    @property
    def total(self) -> Decimal:
        return self.run_total + self.memory_total


def nice_step(largest: Decimal, ticks: int = Y_TICKS) -> Decimal:
    """The smallest 1, 2, 2.5 or 5 × 10ⁿ step whose ``ticks`` steps reach ``largest``."""
    if largest <= 0:
        return Decimal(1)
    raw = largest / ticks
    magnitude = Decimal(10) ** raw.adjusted()
    for factor in (Decimal(1), Decimal(2), Decimal("2.5"), Decimal(5), Decimal(10)):
        if factor * magnitude >= raw:
            return factor * magnitude
    return 10 * magnitude  # unreachable: 10 × magnitude > raw always


def money_label(value: Decimal, step: Decimal) -> str:
    """``value`` with as many decimals as ``step`` needs (at least none, at most six)."""
    places = min(6, max(0, -step.normalize().as_tuple().exponent))  # type: ignore[operator]
    return f"{value:.{places}f}"


def cost_chart(days: Sequence[Day]) -> CostChart:
    plot_left, plot_right = LEFT, WIDTH - RIGHT
    plot_top, plot_bottom = TOP, HEIGHT - BOTTOM
    largest = max((d.run_cost + d.memory_cost for d in days), default=Decimal(0))
    step = nice_step(largest)
    top = step * Y_TICKS
    plot_height = plot_bottom - plot_top

    def height_of(value: Decimal) -> float:
        return float(value / top) * plot_height

    slot = (plot_right - plot_left) / max(1, len(days))
    bars = []
    for index, d in enumerate(days):
        run_height = height_of(d.run_cost)
        memory_height = height_of(d.memory_cost)
        run_y = plot_bottom - run_height
        bars.append(
            Bar(
                day=d.day,
                run_cost=d.run_cost,
                memory_cost=d.memory_cost,
                x=round(plot_left + index * slot + slot * (1 - BAR_FILL) / 2, 2),
                width=round(slot * BAR_FILL, 2),
                run_y=round(run_y, 2),
                run_height=round(run_height, 2),
                memory_y=round(run_y - memory_height, 2),
                memory_height=round(memory_height, 2),
            )
        )
    y_ticks = tuple(
        Tick(
            position=round(plot_bottom - plot_height * i / Y_TICKS, 2),
            label=money_label(step * i, step),
        )
        for i in range(Y_TICKS + 1)
    )
    # Every fifth day, counted back from the last (today is always labelled).
    x_labels = tuple(
        Tick(position=round(bar.x + bar.width / 2, 2), label=bar.day.strftime("%m-%d"))
        for index, bar in enumerate(bars)
        if (len(bars) - 1 - index) % X_LABEL_EVERY == 0
    )
    peak = max(bars, key=lambda bar: bar.total_cost, default=None)
    return CostChart(
        width=WIDTH,
        height=HEIGHT,
        plot_left=plot_left,
        plot_right=plot_right,
        plot_top=plot_top,
        plot_bottom=plot_bottom,
        bars=tuple(bars),
        y_ticks=y_ticks,
        x_labels=x_labels,
        run_total=sum((d.run_cost for d in days), Decimal(0)),
        memory_total=sum((d.memory_cost for d in days), Decimal(0)),
        peak=peak if peak is not None and peak.total_cost > 0 else None,
    )
