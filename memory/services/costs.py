"""Cost totals: run cost plus memory-op cost, never mixed in one column (design v2 §5)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import Count, Sum

from memory.models import MemoryOp, Thread


def _totals(run_filter: dict[str, Any], op_filter: dict[str, Any]) -> dict[str, Any]:
    from agents.models import Run

    runs = Run.objects.filter(**run_filter).aggregate(
        cost=Sum("cost"),
        input_tokens=Sum("input_tokens"),
        output_tokens=Sum("output_tokens"),
        count=Count("pk"),
    )
    ops = MemoryOp.objects.filter(**op_filter).aggregate(
        cost=Sum("cost"),
        input_tokens=Sum("input_tokens"),
        output_tokens=Sum("output_tokens"),
        count=Count("pk"),
    )
    run_cost = runs["cost"] or Decimal("0")
    op_cost = ops["cost"] or Decimal("0")
    return {
        "run_count": runs["count"],
        "run_cost": float(run_cost),
        "run_input_tokens": runs["input_tokens"] or 0,
        "run_output_tokens": runs["output_tokens"] or 0,
        "memory_op_count": ops["count"],
        "memory_cost": float(op_cost),
        "memory_input_tokens": ops["input_tokens"] or 0,
        "memory_output_tokens": ops["output_tokens"] or 0,
        "total_cost": float(run_cost + op_cost),
    }


def thread_totals(*, thread: Thread) -> dict[str, Any]:
    return _totals({"thread_id": thread.pk}, {"thread_id": thread.pk})
