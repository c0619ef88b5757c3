"""Context assembly for a 1,000-run thread (issue #3): p50/p95 on SQLite and PostgreSQL.

.venv/bin/python benchmarks/context.py [--backend sqlite|postgres|all] [--runs 1000]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup


def main() -> None:
    args = _setup.parse(
        __doc__ or "",
        lambda p: (
            p.add_argument("--runs", type=int, default=1000),
            p.add_argument("--samples", type=int, default=300),
        ),
    )
    if not _setup.is_child():
        _setup.run_per_backend(
            __file__, ["--runs", str(args.runs), "--samples", str(args.samples)], args.backend
        )
        return
    _setup.django_ready()
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from agents.models import Agent, Run
    from agents.services_demo import demo_bootstrap
    from memory.models import Thread
    from memory.scope import Scope
    from memory.services.context import context_assemble

    account = demo_bootstrap(tenant_name="基准学校", username="bench")
    agent = Agent.objects.get(pk=account.agent_id)
    owner_id = agent.tenant.memberships.get().user_id
    start = timezone.now() - timedelta(days=30)
    thread = Thread.objects.create(
        tenant_id=agent.tenant_id,
        agent=agent,
        owner_id=owner_id,
        title="基准会话",
        rolling_summary="老师在准备数据结构期中考试，已经确定了题型与分值。" * 20,
    )
    runs = [
        Run(
            tenant_id=agent.tenant_id,
            agent=agent,
            owner_id=owner_id,
            thread=thread,
            input=f"第{i}轮：把第{i % 7 + 1}题换成关于二叉树遍历的题目，难度中等。" * 3,
            output=(
                "好的，已替换。新题如下：给定一棵二叉树，写出其先序、中序和后序遍历序列。" * 12
            ),
            status=Run.Status.COMPLETED if i % 17 else Run.Status.FAILED,
            created_at=start + timedelta(seconds=i),
            started_at=start,
            finished_at=start,
            memory_state=Run.MemoryState.DONE,
        )
        for i in range(args.runs)
    ]
    Run.objects.bulk_create(runs, batch_size=500)
    last = Run.objects.filter(thread=thread).order_by("-created_at", "-pk")[2]
    Thread.objects.filter(pk=thread.pk).update(
        summary_upto_at=last.created_at, summary_upto_run_id=last.pk
    )
    thread.refresh_from_db()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # what autovacuum does on a live server
    scope = Scope(tenant_id=agent.tenant_id, agent_id=agent.pk, owner_id=owner_id)

    def once() -> float:
        began = time.perf_counter()
        context_assemble(
            scope=scope,
            thread=thread,
            run_id=None,
            user_input="简答题换两道，难度再低一点",
            agent_system_prompt=agent.system_prompt,
        )
        return (time.perf_counter() - began) * 1000

    for _ in range(20):
        once()
    samples = [once() for _ in range(args.samples)]
    p50, p95 = _setup.percentiles(samples)
    print(
        f"context_assemble  backend={connection.vendor:<10} runs={args.runs:<6} "
        f"samples={args.samples}  p50={p50:.2f} ms  p95={p95:.2f} ms"
    )


if __name__ == "__main__":
    main()
