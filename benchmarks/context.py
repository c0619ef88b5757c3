"""The whole read path with everything present: p50/p95 on SQLite and PostgreSQL.

.venv/bin/python benchmarks/context.py [--backend sqlite|postgres|all] [--runs 1000]
    [--recall 100000] [--facts 30] [--kb-chunks 10000]

A 1,000-run thread (issue #3), 100k recall entries and 30 confirmed facts in the teacher's
scope, and 10k knowledge-base chunks shared with the agent (issue #13; target p95 <= 5 ms).
Two modes, both reported: ``repeat`` cycles ten messages (a follow-up in the thread and
new teacher requests, which find recall entries and knowledge-base chunks, so those
sections are rendered too), so a process has seen each message before (its per-process
memos hit); ``new`` gives every run a message never seen before, as live traffic does;
``unrelated`` starts new conversations with everyday messages that neither the recall
entries nor the knowledge base answer (most of a teacher's messages): the sections
search but read no rows.
``--profile N`` prints the N costliest functions (cProfile, cumulative) of each mode
(the figures are then inflated by the profiler).
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup


def main() -> None:
    args = _setup.parse(
        __doc__ or "",
        lambda p: (
            p.add_argument("--runs", type=int, default=1000),
            p.add_argument("--samples", type=int, default=300),
            p.add_argument("--recall", type=int, default=100_000),
            p.add_argument("--facts", type=int, default=30),
            p.add_argument("--kb-chunks", type=int, default=10_000),
            p.add_argument("--profile", type=int, default=0),
        ),
    )
    if not _setup.is_child():
        _setup.production_settings()
        _setup.run_per_backend(
            __file__,
            [
                *("--runs", str(args.runs), "--samples", str(args.samples)),
                *("--recall", str(args.recall), "--facts", str(args.facts)),
                *("--kb-chunks", str(args.kb_chunks), "--profile", str(args.profile)),
            ],
            args.backend,
        )
        return
    _setup.django_ready()
    import random
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone
    from kb import seed_chunks
    from recall import make_entry, make_query

    from agents.models import Agent, Run
    from agents.services_demo import demo_bootstrap
    from memory.models import CoreFact, RecallEntry, RecallScope, Thread
    from memory.scope import Scope
    from memory.services.context import context_assemble
    from memory.services.recall import stored_terms

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
    scope = Scope(tenant_id=agent.tenant_id, agent_id=agent.pk, owner_id=owner_id)
    rng = random.Random(5)

    # 100k recall entries (each with its run, outside the thread), stored as recall stores.
    texts = [make_entry(rng) for _ in range(args.recall)]
    Run.objects.bulk_create(
        [
            Run(
                tenant_id=agent.tenant_id,
                agent=agent,
                owner_id=owner_id,
                input=t[:200],
                output=t[200:],
                status=Run.Status.COMPLETED,
                created_at=start - timedelta(seconds=i),
                memory_state=Run.MemoryState.DONE,
            )
            for i, t in enumerate(texts)
        ],
        batch_size=2000,
    )
    old_runs = (
        Run.objects.filter(thread__isnull=True).order_by("pk").values_list("pk", "created_at")
    )
    RecallEntry.objects.bulk_create(
        [
            RecallEntry(
                **scope.filter_kwargs(), run_id=pk, text=t, terms=stored_terms(t), created_at=at
            )
            for (pk, at), t in zip(old_runs, texts, strict=True)
        ],
        batch_size=2000,
    )
    top = RecallEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    RecallScope.objects.create(
        **scope.filter_kwargs(), version=1, entry_count=len(texts), max_entry_id=top
    )
    # 30 confirmed facts, and the knowledge base.
    CoreFact.objects.bulk_create(
        [
            CoreFact(**scope.filter_kwargs(), text=f"我教{i % 6 + 7}年级，常用人教版教材第{i}册")
            for i in range(args.facts)
        ]
    )
    chunks = seed_chunks(agent=agent, owner_id=owner_id, count=args.kb_chunks, rng=rng)
    messages = ["简答题换两道，难度再低一点", *(make_query(rng) for _ in range(9))]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # what autovacuum does on a live server
    # The new-message mode's messages: drawn like the others, none seen before.
    seen = set(messages)
    fresh: list[str] = []
    while len(fresh) < args.samples + 20:
        message = make_query(rng)
        if message not in seen:
            seen.add(message)
            fresh.append(message)

    def measure(mode: str, message_of: Callable[[int], str], *, in_thread: bool = True) -> None:
        injected = {"recall": 0, "kb": 0}
        wall_samples: list[float] = []
        cpu_samples: list[float] = []

        def once(i: int) -> None:
            began, cpu = time.perf_counter(), time.process_time()
            assembled = context_assemble(
                scope=scope,
                thread=thread if in_thread else None,
                run_id=None,
                user_input=message_of(i),
                agent_system_prompt=agent.system_prompt,
            )
            wall_samples.append((time.perf_counter() - began) * 1000)
            cpu_samples.append((time.process_time() - cpu) * 1000)
            for name in injected:
                injected[name] += bool(assembled.manifest["sections"][name]["tokens"])

        for i in range(20):
            once(i)
        injected.update(recall=0, kb=0)
        wall_samples.clear()
        cpu_samples.clear()
        profiler = cProfile.Profile() if args.profile else None
        if profiler is not None:
            profiler.enable()
        for i in range(20, 20 + args.samples):
            once(i)
        if profiler is not None:
            profiler.disable()
        p50, p95 = _setup.percentiles(wall_samples)
        c50, c95 = _setup.percentiles(cpu_samples)
        print(
            f"context_assemble  mode={mode:<9} backend={connection.vendor:<10} runs={args.runs} "
            f"recall={args.recall} facts={args.facts} kb_chunks={chunks} "
            f"samples={args.samples}  p50={p50:.2f} ms  p95={p95:.2f} ms  (CPU p50={c50:.2f} "
            f"p95={c95:.2f}; recall injected in {injected['recall']}, KB in {injected['kb']} "
            f"of {args.samples})"
        )
        if profiler is not None:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(args.profile)
            print(out.getvalue())

    measure("repeat", lambda i: messages[i % len(messages)])
    measure("new", lambda i: fresh[i])
    everyday = [
        "今天天气怎么样",
        "谢谢，就这样吧",
        "好的，我知道了",
        "明天下午开家长会，提醒我带签到表",
        "帮我写一份运动会开幕式的主持词",
        "周五的教研活动改到几点了？",
        "给我讲个笑话放松一下",
    ]
    measure("unrelated", lambda i: everyday[i % len(everyday)], in_thread=False)

    # Where the time goes: each section's own service, CPU time of this process.
    from memory.render import Turn, render_thread
    from memory.services.core import core_render
    from memory.services.kb import kb_render
    from memory.services.recall import RecallQuery, recall_render, recent_turns
    from memory.stored import redacted

    turns = tuple(turn for _, turn in recent_turns(thread_id=thread.pk))
    queries = [
        RecallQuery(message=m, turns=turns, summary=thread.rolling_summary) for m in messages
    ]

    def thread_section(_: int) -> None:
        render_thread(
            summary=redacted(thread.rolling_summary).text,
            turns=[
                Turn(run_id=pk, user=turn.user, assistant=turn.assistant)
                for pk, turn in recent_turns(thread_id=thread.pk)
            ],
            budget=2000,
            summary_cap=600,
            recent_cap=1200,
        )

    sections = {
        "core": lambda _: core_render(scope=scope, budget=300),
        "thread": thread_section,
        "kb": lambda i: kb_render(scope=scope, query=messages[i % len(messages)], budget=1500),
        "recall": lambda i: recall_render(
            scope=scope, query=queries[i % len(queries)], exclude_run_ids=set(), budget=600
        ),
    }
    parts = []
    for name, section in sections.items():
        spent = []
        for i in range(100):
            cpu = time.process_time()
            section(i)
            spent.append((time.process_time() - cpu) * 1000)
        s50, s95 = _setup.percentiles(spent)
        parts.append(f"{name} p50={s50:.2f} p95={s95:.2f}")
    print(f"  CPU by section (ms): {'; '.join(parts)}")
    print(f"  load: {_setup.uptime()}")


if __name__ == "__main__":
    main()
