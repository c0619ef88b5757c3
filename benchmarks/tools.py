"""The tool loop (kb_search, #13): its own overhead, and a run with one tool call at a
real model's pace, against the loopback fake OpenAI-compatible server.

    .venv/bin/python benchmarks/tools.py [--backend sqlite|postgres|all] [--runs 200]
        [--paced 6]

1. One call's execution (``runs.tools.tool_call_run``: parse the arguments, validate
   them against the tool's JSON Schema, call a dictionary-lookup tool, record): p50/p95.
2. Whole sync runs (``run_execute``: database, read path, provider calls, settle)
   against the fake answering instantly: tools not offered, offered but not called, one
   call. The loop's overhead for a call is the difference minus the fake's own round trip
   (a bare ``client.complete`` against the same fake, measured alongside).
3. Streamed runs at a real model's pace: the fake waits 1–3 s before every answer
   (seeded) and streams ~30 tokens/s. Time to the first text and to the end, without a
   tool call and with one (two model calls).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup

ANSWER = (
    "根据知识库中的期末考试说明，本学期期末考试范围是第三章到第五章，"
    "题型包括选择题、简答题和计算题，考试时间九十分钟。"
)


def _ms(samples: list[float]) -> str:
    p50, p95 = _setup.percentiles(samples)
    return f"p50 {p50 * 1000:8.2f} ms   p95 {p95 * 1000:8.2f} ms"


def main() -> None:
    def extra(parser: Any) -> None:
        parser.add_argument("--runs", type=int, default=200)
        parser.add_argument("--paced", type=int, default=6)

    args = _setup.parse(__doc__ or "", extra)
    if not _setup.is_child():
        _setup.run_per_backend(
            __file__, ["--runs", str(args.runs), "--paced", str(args.paced)], args.backend
        )
        return
    _setup.django_ready()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection

    from agents.models import Agent, Membership, Provider, Tenant
    from agents.providers.base import Message, ToolCall
    from agents.providers.openai_compat import OpenAICompatClient
    from agents.tokens import count_tokens
    from memory.scope import Scope
    from runs import tools
    from runs.services import TextDelta, run_execute, run_start, run_stream
    from runs.tools import ToolContext, tool_call_run
    from tests.fakellm import FakeLLMServer, FakeToolCall, ToolCallsReply
    from tests.glossary import GLOSSARY_TOOL

    tools.registry.register(GLOSSARY_TOOL)
    backend = connection.vendor
    print(f"\n== tool loop on {backend} ==")

    # 1. One call's execution.
    scope = Scope(tenant_id=1, agent_id=1, owner_id=1)
    context = ToolContext(scope=scope, run_id=1, budget=settings.RUN_TOOL_RESULT_MAX_TOKENS)
    samples = []
    for i in range(max(args.runs * 10, 1000)):
        call = ToolCall(id=f"c{i}", name="glossary", arguments=f'{{"word": "词条{i % 120}"}}')
        start = time.perf_counter()
        tool_call_run(registry=tools.registry, call=call, context=context)
        samples.append(time.perf_counter() - start)
    p50, p95 = _setup.percentiles(samples)
    print(
        f"tool_call_run (parse, validate, dict tool, record):  p50 {p50 * 1e6:6.1f} µs   "
        f"p95 {p95 * 1e6:6.1f} µs"
    )

    tenant = Tenant.objects.create(name="基准学校")
    user = get_user_model().objects.create_user(username="bench", password="x")
    Membership.objects.create(tenant=tenant, user=user)

    def agent_on(fake: FakeLLMServer, *, name: str, supports_tools: bool) -> Agent:
        provider = Provider.objects.create(
            name=name,
            kind=Provider.Kind.OPENAI_COMPAT,
            base_url=fake.base_url,
            model="fake-model",
            locality=Provider.Locality.LOCAL,
            timeout_seconds=30,
            supports_tools=supports_tools,
        )
        return Agent.objects.create(tenant=tenant, name=name, provider=provider)

    def with_call(word: str) -> ToolCallsReply:
        return ToolCallsReply([FakeToolCall("glossary", {"word": word})])

    # 2. Whole sync runs, the fake answering instantly.
    with FakeLLMServer(reply=ANSWER) as fake:
        plain = agent_on(fake, name="plain", supports_tools=False)
        offered = agent_on(fake, name="offered", supports_tools=True)
        client = OpenAICompatClient(
            name="bare", base_url=fake.base_url, model="m", api_key=None, timeout=30
        )
        bare = [
            Message(role="system", content="你是教学助手。"),
            Message(role="user", content="你好"),
        ]
        rows: dict[str, list[float]] = {
            "round trip": [],
            "no tools": [],
            "offered": [],
            "one call": [],
        }
        for i in range(args.runs):
            start = time.perf_counter()
            client.complete(bare)
            rows["round trip"].append(time.perf_counter() - start)
            for label, agent, script in (
                ("no tools", plain, []),
                ("offered", offered, []),
                ("one call", offered, [with_call(f"词条{i % 100}")]),
            ):
                fake.script = list(script)
                started = run_start(
                    agent=agent, owner_id=user.pk, user_input=f"第{i}次：栈是什么？"
                )
                start = time.perf_counter()
                run = run_execute(started=started)
                rows[label].append(time.perf_counter() - start)
                assert run.status == "completed", run.error_code
                assert len(run.tool_calls) == (1 if script else 0)
        for label, values in rows.items():
            print(f"sync run, fake answers at once — {label:10}  {_ms(values)}")
        overhead = [
            call - base - trip
            for call, base, trip in zip(
                rows["one call"], rows["offered"], rows["round trip"], strict=True
            )
        ]
        offering = statistics.median(rows["offered"]) - statistics.median(rows["no tools"])
        print(
            "the loop's own cost of one tool call (one call − offered − round trip): "
            f"median {statistics.median(overhead) * 1000:.2f} ms"
        )
        print(f"offering the tools without a call (offered − no tools): {offering * 1000:.2f} ms")

    # 3. Streamed runs at a real model's pace: 1-3 s before each answer, ~30 tokens/s.
    # One character per stream piece, paced so that the answer arrives at 30 tokens/s.
    tokens = count_tokens(ANSWER)
    pace = tokens / len(ANSWER) / 30
    with FakeLLMServer(
        reply=ANSWER,
        mode="slow_stream",
        chunk_size=1,
        stream_delay=pace,
        latency=(1.0, 3.0),
        seed=13,
    ) as fake:
        offered = agent_on(fake, name="paced", supports_tools=True)
        paced: dict[str, dict[str, list[float]]] = {}
        for label, script in (("no tool call", []), ("one tool call", [with_call("词条7")])):
            first_text, total, calls = [], [], []
            for i in range(args.paced):
                fake.script = list(script)
                before = len(fake.chat_requests)
                started = run_start(
                    agent=offered, owner_id=user.pk, user_input=f"第{i}次：考试范围？"
                )
                start = time.perf_counter()
                first = None
                for event in run_stream(started=started):
                    if first is None and isinstance(event, TextDelta):
                        first = time.perf_counter() - start
                total.append(time.perf_counter() - start)
                first_text.append(first or 0.0)
                calls.append(len(fake.chat_requests) - before)
            paced[label] = {"first": first_text, "total": total}
            print(
                f"streamed, 1–3 s per call, 30 tok/s — {label:13}  "
                f"model calls {statistics.mean(calls):.0f}   "
                f"first text median {statistics.median(first_text):5.2f} s   "
                f"end median {statistics.median(total):5.2f} s (max {max(total):5.2f} s)"
            )
        print(
            f"(answer {tokens} tokens / {len(ANSWER)} characters, one character every "
            f"{pace * 1000:.0f} ms; n={args.paced} per row, latencies drawn with seed 13)"
        )


if __name__ == "__main__":
    main()
