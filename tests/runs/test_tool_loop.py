"""The run engine's tool loop against the loopback fake OpenAI-compatible server.

A real tool is registered for these tests (``glossary``, tests/glossary.py: a dictionary
lookup, the shape of ``kb_search`` without the knowledge base behind it), next to
``kb_search``. The fake
model is scripted: it calls tools through the real protocol, sync and streamed, and the
run engine executes them, sends the results back and records them on the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from agents.models import Run
from agents.tokens import count_tokens
from memory.scope import Scope
from memory.services.jobs import after_run_process
from runs import tools
from runs.services import ToolUsed, run_prepare, run_start, run_stream
from runs.tools import Tool
from tests.factories import Teacher, make_provider, make_teacher
from tests.fakellm import FakeLLMServer, FakeToolCall, ToolCallsReply
from tests.glossary import GLOSSARY_TOOL, glossary_result, seen_scopes
from tests.runs.test_api_runs import parse_sse

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def glossary_tool() -> Iterator[Tool]:
    tools.registry.register(GLOSSARY_TOOL)
    seen_scopes.clear()
    yield GLOSSARY_TOOL
    tools.registry.unregister(GLOSSARY_TOOL.name)


@pytest.fixture
def cloud(fake_llm: FakeLLMServer, db: None) -> Teacher:
    provider = make_provider(name="fake-cloud", base_url=fake_llm.base_url)
    return make_teacher(tenant_name="云端学校", username="cloud", provider=provider)


def lookup(word: object, call_id: str = "c1") -> ToolCallsReply:
    return ToolCallsReply([FakeToolCall("glossary", {"word": word}, id=call_id)])


def run(teacher: Teacher, text: str, *, stream: bool) -> dict[str, Any]:
    """POST a run; the finished run as the API shows it (for a stream: done's or error's
    run, with the stream's events under ``_events``)."""
    url = f"/api/agents/{teacher.agent.pk}/run" + ("/stream" if stream else "")
    response = teacher.client.post(url, {"input": text}, format="json")
    assert response.status_code == 200, response.content
    if not stream:
        body: dict[str, Any] = response.json()
        return body
    events = parse_sse(b"".join(response.streaming_content).decode())
    name, last = events[-1]
    assert name in ("done", "error")
    body = dict(last["run"])
    body["_events"] = events
    return body


def chat_bodies(fake: FakeLLMServer) -> list[dict[str, Any]]:
    """The bodies of the run's chat calls (memory jobs do not run in these tests)."""
    return [r.body for r in fake.chat_requests if r.body is not None]


# -- the round trip ----------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_a_tool_round_trip_answers_with_the_result_and_records_the_call(
    cloud: Teacher, fake_llm: FakeLLMServer, stream: bool
) -> None:
    answer = "二叉树是每个结点最多有两个子结点的树。"
    fake_llm.set_mode("ok", script=[lookup("二叉树"), answer])
    body = run(cloud, "什么是二叉树？", stream=stream)

    assert body["status"] == "completed"
    assert body["output"] == answer
    first, second = chat_bodies(fake_llm)
    assert [t["function"]["name"] for t in first["tools"]] == ["kb_search", "glossary"]
    assert first["tool_choice"] == second["tool_choice"] == "auto"
    assert "glossary" in first["messages"][0]["content"]  # the system prompt's tool note
    result = glossary_result("二叉树")
    assert second["messages"][-2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "glossary", "arguments": '{"word": "二叉树"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]

    # Every provider call is charged to the run.
    spent = [fake_llm.usage_for(first, lookup("二叉树")), fake_llm.usage_for(second, answer)]
    assert body["usage"]["input_tokens"] == sum(u["prompt_tokens"] for u in spent)
    assert body["usage"]["output_tokens"] == sum(u["completion_tokens"] for u in spent)
    expected_cost = (body["usage"]["input_tokens"] * 2 + body["usage"]["output_tokens"] * 8) / 1e6
    assert body["usage"]["cost"] == pytest.approx(expected_cost, abs=1e-6)

    [record] = body["tool_calls"]
    assert record["duration_ms"] >= 0
    assert {k: v for k, v in record.items() if k != "duration_ms"} == {
        "id": "c1",
        "name": "glossary",
        "arguments": {"word": "二叉树"},
        "status": "ok",
        "error": "",
        "chunk_ids": [101],
        "tokens": count_tokens(result),
    }
    assert cloud.client.get(f"/api/runs/{body['id']}").json()["tool_calls"] == [record]
    context = cloud.client.get(f"/api/runs/{body['id']}/context").json()
    assert context["manifest"]["tools"] == {
        "offered": ["kb_search", "glossary"],
        "max_calls": 3,
        "calls": [record],
    }
    assert context["messages"][-1] == {"role": "tool", "content": result, "tool_call_id": "c1"}
    assert context["messages"][-2]["tool_calls"] == [
        {"id": "c1", "name": "glossary", "arguments": '{"word": "二叉树"}'}
    ]
    assert seen_scopes == [Scope.for_agent(cloud.agent, cloud.user.pk)]

    if stream:
        events = body["_events"]
        names = [name for name, _ in events]
        assert names[0] == "started" and names[-1] == "done"
        assert names.count("tool") == 1 and names.index("tool") < names.index("delta")
        assert dict(events[names.index("tool")][1]) == record
        deltas = "".join(data["text"] for name, data in events if name == "delta")
        assert deltas == body["output"]


@pytest.mark.parametrize("stream", [False, True])
def test_text_said_before_a_call_stays_in_the_output_as_streamed(
    cloud: Teacher, fake_llm: FakeLLMServer, stream: bool
) -> None:
    before = ToolCallsReply([FakeToolCall("glossary", {"word": "栈"})], content="我查一下词典。")
    fake_llm.set_mode("ok", script=[before, "栈是后进先出的线性表。"])
    body = run(cloud, "栈是什么？", stream=stream)
    assert body["output"] == "我查一下词典。\n\n栈是后进先出的线性表。"
    assert chat_bodies(fake_llm)[1]["messages"][-2]["content"] == "我查一下词典。"
    if stream:
        deltas = "".join(d["text"] for name, d in body["_events"] if name == "delta")
        assert deltas == body["output"]


# -- the bound ---------------------------------------------------------------------------


def _always_calls(body: dict[str, Any]) -> ToolCallsReply | str:
    """A model that calls the tool whenever it may, and answers when told not to."""
    if body.get("tool_choice") == "none":
        return "根据查到的资料，回答如下。"
    turn = sum(1 for m in body["messages"] if m["role"] == "tool")
    return lookup("栈", call_id=f"c{turn}")


@pytest.mark.parametrize("stream", [False, True])
def test_after_three_calls_the_model_must_answer_without_tools(
    cloud: Teacher, fake_llm: FakeLLMServer, stream: bool
) -> None:
    fake_llm.set_mode("ok", reply=_always_calls)
    body = run(cloud, "栈是什么？", stream=stream)
    assert body["status"] == "completed"
    assert body["output"] == "根据查到的资料，回答如下。"
    bodies = chat_bodies(fake_llm)
    assert [b["tool_choice"] for b in bodies] == ["auto", "auto", "auto", "none"]
    # The tools stay declared: the history refers to them.
    assert all(len(b["tools"]) == 2 for b in bodies)
    assert [r["id"] for r in body["tool_calls"]] == ["c0", "c1", "c2"]
    assert body["usage"]["input_tokens"] == sum(
        fake_llm.usage_for(b, _always_calls(b))["prompt_tokens"] for b in bodies
    )


@pytest.mark.parametrize("stream", [False, True])
def test_a_model_that_ignores_the_bound_and_says_nothing_fails_the_run(
    cloud: Teacher, fake_llm: FakeLLMServer, stream: bool
) -> None:
    fake_llm.set_mode("ok", reply=lambda body: lookup("栈"))
    body = run(cloud, "栈是什么？", stream=stream)
    assert body["status"] == "failed"
    assert body["error_code"] == "tool_limit_exceeded"
    assert "工具" in body["error_message"]
    assert len(body["tool_calls"]) == 3
    assert len(chat_bodies(fake_llm)) == 4
    assert body["usage"]["input_tokens"] > 0  # what the four calls cost is still charged
    assert Run.objects.get(pk=body["id"]).output == ""


def test_a_model_that_ignores_the_bound_but_answers_keeps_its_answer(
    cloud: Teacher, fake_llm: FakeLLMServer
) -> None:
    def reply(body: dict[str, Any]) -> ToolCallsReply:
        if body["tool_choice"] == "none":
            return ToolCallsReply([FakeToolCall("glossary", {"word": "栈"})], content="答案。")
        return lookup("栈")

    fake_llm.set_mode("ok", reply=reply)
    body = run(cloud, "栈是什么？", stream=False)
    assert body["status"] == "completed"
    assert body["output"] == "答案。"
    assert len(body["tool_calls"]) == 3  # the fourth call was not run


def test_parallel_calls_past_the_bound_are_answered_but_not_run(
    cloud: Teacher, fake_llm: FakeLLMServer
) -> None:
    five = ToolCallsReply([FakeToolCall("glossary", {"word": "栈"}, id=f"p{i}") for i in range(5)])
    fake_llm.set_mode("ok", script=[five, "好的。"])
    body = run(cloud, "栈是什么？", stream=False)
    assert body["status"] == "completed"
    assert [r["id"] for r in body["tool_calls"]] == ["p0", "p1", "p2"]
    assert len(seen_scopes) == 3
    second = chat_bodies(fake_llm)[1]
    answers = [m for m in second["messages"] if m["role"] == "tool"]
    # Every call gets its answer (the protocol requires it); the last two say why not.
    assert [m["tool_call_id"] for m in answers] == [f"p{i}" for i in range(5)]
    assert all("上限" in m["content"] for m in answers[3:])
    assert not any("上限" in m["content"] for m in answers[:3])
    assert second["tool_choice"] == "none"


# -- what goes wrong inside a tool is a result the model reads ---------------------------


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("call", "error", "says"),
    [
        (FakeToolCall("glossary", "{'word': 二叉树"), "bad_arguments", "JSON"),
        (FakeToolCall("glossary", "[1, 2]"), "bad_arguments", "JSON"),
        (FakeToolCall("glossary", {"word": 5}), "bad_arguments", "word"),
        (FakeToolCall("glossary", {"word": "栈", "more": 1}), "bad_arguments", "more"),
        (FakeToolCall("glossary", {}), "bad_arguments", "word"),
        (FakeToolCall("glossary", {"word": "长" * 21}), "bad_arguments", "word"),
        (FakeToolCall("glossary", {"word": "  \u3000"}), "rejected", "不能为空"),
        (FakeToolCall("kb_search", {"query": "   "}), "rejected", "不能为空"),
        (FakeToolCall("kb_search", {"q": "校规"}), "bad_arguments", "query"),
        (FakeToolCall("delete_facts", {"all": True}), "unknown_tool", "delete_facts"),
        (FakeToolCall("", {}), "unknown_tool", "可用"),
        (FakeToolCall("glossary", {"word": "崩溃"}), "tool_failed", "不可用"),
        (FakeToolCall("glossary", {"word": "超长"}), "tool_failed", "过长"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_failing_call_is_an_error_result_and_the_run_still_answers(
    cloud: Teacher,
    fake_llm: FakeLLMServer,
    stream: bool,
    call: FakeToolCall,
    error: str,
    says: str,
) -> None:
    fake_llm.set_mode("ok", script=[ToolCallsReply([call]), "抱歉，我直接回答。"])
    body = run(cloud, "栈是什么？", stream=stream)
    assert body["status"] == "completed"
    assert body["output"] == "抱歉，我直接回答。"
    [record] = body["tool_calls"]
    assert (record["status"], record["error"], record["chunk_ids"]) == ("error", error, [])
    assert record["name"] == call.name
    told = chat_bodies(fake_llm)[1]["messages"][-1]
    assert told["role"] == "tool" and says in told["content"]
    assert record["tokens"] == count_tokens(told["content"])
    if isinstance(call.arguments, str):
        assert record["arguments"] is None
        assert record["arguments_raw"] == call.arguments
    else:
        assert record["arguments"] == call.arguments


def test_a_provider_failure_mid_loop_keeps_the_calls_and_charges_what_was_spent(
    cloud: Teacher, fake_llm: FakeLLMServer
) -> None:
    def first_then_down(body: dict[str, Any]) -> ToolCallsReply:
        fake_llm.mode = "http_500"  # the next call fails
        return lookup("栈")

    fake_llm.set_mode("ok", reply=first_then_down)
    body = run(cloud, "栈是什么？", stream=False)
    assert body["status"] == "failed"
    assert body["error_code"] == "provider_http_error"
    assert [r["status"] for r in body["tool_calls"]] == ["ok"]
    first = chat_bodies(fake_llm)[0]
    assert body["usage"]["input_tokens"] == fake_llm.usage_for(first, lookup("栈"))["prompt_tokens"]
    assert body["usage"]["cost"] > 0
    assert body["output"] == ""


def test_a_stream_left_after_a_tool_call_ends_interrupted_with_the_call_recorded(
    cloud: Teacher, fake_llm: FakeLLMServer
) -> None:
    fake_llm.set_mode("ok", script=[lookup("二叉树"), "答案"])
    started = run_start(agent=cloud.agent, owner_id=cloud.user.pk, user_input="什么是二叉树？")
    events = run_stream(started=started)
    for event in events:
        if isinstance(event, ToolUsed):
            break
    events.close()  # the teacher closed the page
    settled = Run.objects.get(pk=started.run.pk)
    assert settled.status == Run.Status.FAILED
    assert settled.error_code == "run_interrupted"
    assert [r["name"] for r in settled.tool_calls] == ["glossary"]


# -- when there are no tools -------------------------------------------------------------


def test_a_provider_without_tool_support_is_offered_none(
    cloud: Teacher, fake_llm: FakeLLMServer
) -> None:
    cloud.agent.provider.supports_tools = False
    cloud.agent.provider.save()
    fake_llm.set_mode("ok", reply="直接回答。")
    body = run(cloud, "根据知识库回答：栈是什么？", stream=True)
    assert body["status"] == "completed" and body["tool_calls"] == []
    [sent] = chat_bodies(fake_llm)
    assert "tools" not in sent
    assert "kb_search" not in sent["messages"][0]["content"]
    context = cloud.client.get(f"/api/runs/{body['id']}/context").json()
    assert context["manifest"]["tools"] == {"offered": [], "max_calls": 0, "calls": []}


@override_settings(RUN_TOOL_CALLS_MAX=0)
def test_no_tools_when_the_bound_is_zero(cloud: Teacher, fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("ok", reply="直接回答。")
    run(cloud, "栈是什么？", stream=False)
    assert "tools" not in chat_bodies(fake_llm)[0]


def test_tool_calls_nobody_offered_are_not_run(cloud: Teacher, fake_llm: FakeLLMServer) -> None:
    cloud.agent.provider.supports_tools = False
    cloud.agent.provider.save()
    chatty = ToolCallsReply([FakeToolCall("glossary", {"word": "栈"})], content="栈是……")
    fake_llm.set_mode("ok", script=[chatty])
    body = run(cloud, "栈是什么？", stream=False)
    assert body["output"] == "栈是……" and body["tool_calls"] == []
    assert seen_scopes == []


def test_memory_jobs_never_get_tools(cloud: Teacher, fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("ok", script=[lookup("栈"), "栈是后进先出的线性表。我以后都用中文出题。"])
    body = run(cloud, "栈是什么？我以后都用中文出题。", stream=False)
    chat_calls = len(fake_llm.chat_requests)
    fake_llm.set_mode("ok", reply="NONE")
    after_run_process(run_id=body["id"])
    memory_calls = fake_llm.chat_requests[chat_calls:]
    assert memory_calls, "the memory job called the model"
    for request in memory_calls:
        assert request.body is not None
        assert "tools" not in request.body and "tool_choice" not in request.body
        assert all(m["role"] in ("system", "user") for m in request.body["messages"])


# -- budgets and the window --------------------------------------------------------------


@override_settings(RUN_TOOL_RESULT_MAX_TOKENS=321)
def test_a_tool_gets_its_result_cap_as_budget(cloud: Teacher, fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("ok", script=[lookup("预算"), "好。"])
    run(cloud, "预算", stream=False)
    assert chat_bodies(fake_llm)[1]["messages"][-1]["content"] == "budget=321"


def test_a_nearly_full_window_leaves_no_room_for_a_result(
    cloud: Teacher, fake_llm: FakeLLMServer
) -> None:
    fake_llm.set_mode("ok", script=[lookup("栈"), "好。"])
    started = run_start(agent=cloud.agent, owner_id=cloud.user.pk, user_input="栈" * 1500)
    window = run_prepare(started=started, tools_offered=tools.registry.specs()).tokens
    with override_settings(WINDOW_MAX_TOKENS=window + 70):
        body = run(cloud, "栈" * 1500, stream=False)
    [record] = body["tool_calls"]
    assert record["error"] == "no_room"
    assert "上下文已满" in chat_bodies(fake_llm)[-1]["messages"][-1]["content"]


# -- the offline demo model ----------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_the_offline_demo_searches_the_knowledge_base_when_asked_to(
    teacher: Teacher, stream: bool
) -> None:
    body = run(teacher, "请查一下知识库：期末考试考哪几章？", stream=stream)
    assert body["status"] == "completed"
    [record] = body["tool_calls"]
    assert record["name"] == "kb_search"
    assert record["arguments"] == {"query": "期末考试考哪几章"}
    assert "我检索了知识库（kb_search）" in body["output"]
    if stream:
        assert "tool" in [name for name, _ in body["_events"]]


def test_the_offline_demo_does_not_search_unasked(teacher: Teacher) -> None:
    body = run(teacher, "出一份数据结构试卷", stream=False)
    assert body["tool_calls"] == []
    assert "kb_search" not in body["output"]


# -- the engine around the loop ------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_a_provider_the_client_refuses_fails_the_run_not_the_request(
    db: None, stream: bool
) -> None:
    provider = make_provider(name="ftp", base_url="ftp://127.0.0.1/v1")
    teacher = make_teacher(tenant_name="配置错误学校", username="ftp", provider=provider)
    body = run(teacher, "你好", stream=stream)
    assert body["status"] == "failed"
    assert body["error_code"] == "internal_error"
    assert not Run.objects.filter(status=Run.Status.RUNNING).exists()
