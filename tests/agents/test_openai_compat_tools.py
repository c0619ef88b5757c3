"""Tool calling in OpenAICompatClient, against the real loopback fake (tests/fakellm.py).

The protocol both ways: tools offered as OpenAI ``tools``, the model's ``tool_calls``
read from a whole answer and assembled from streamed fragments, the calls and their
results sent back; every broken shape a ``provider_bad_response`` without the key.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.providers.base import (
    ERROR_BAD_RESPONSE,
    Completion,
    Delta,
    Message,
    ProviderError,
    ToolCall,
    ToolSpec,
)
from agents.providers.openai_compat import OpenAICompatClient, ToolCallAssembler
from agents.tokens import count_tokens
from tests import fakellm_fixtures
from tests.fakellm import (
    FakeLLMServer,
    FakeToolCall,
    ToolCallsReply,
    completion_tokens_for,
    prompt_tokens_for,
)

fake_llm = fakellm_fixtures.fake_llm

KEY = "sk-test-SECRET-77aa01"
SEARCH = ToolSpec(
    name="kb_search",
    description="检索知识库",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
)
LOOKUP = ToolSpec(
    name="lookup",
    description="查词典",
    parameters={"type": "object", "properties": {"word": {"type": "string"}}},
)
MESSAGES = [
    Message(role="system", content="你是教学助手。"),
    Message(role="user", content="根据知识库，期末考试考哪几章？"),
]
TWO_CALLS = ToolCallsReply(
    content="我查一下。",
    calls=[
        FakeToolCall("kb_search", {"query": "期末考试 范围 章节"}, id="call_a"),
        FakeToolCall("lookup", {"word": "二叉树"}, id="call_b"),
    ],
)


def client(base_url: str, *, api_key: str | None = None) -> OpenAICompatClient:
    return OpenAICompatClient(
        name="fake", base_url=base_url, model="qwen2.5:7b", api_key=api_key, timeout=2.0
    )


def streamed(events: list[Delta | Completion]) -> tuple[str, Completion]:
    *deltas, last = events
    assert isinstance(last, Completion)
    assert all(isinstance(d, Delta) for d in deltas)
    return "".join(d.text for d in deltas if isinstance(d, Delta)), last


EXPECTED_CALLS = (
    ToolCall(id="call_a", name="kb_search", arguments='{"query": "期末考试 范围 章节"}'),
    ToolCall(id="call_b", name="lookup", arguments='{"word": "二叉树"}'),
)


# -- the request -----------------------------------------------------------------------


def test_offered_tools_are_sent_as_openai_functions(fake_llm: FakeLLMServer) -> None:
    client(fake_llm.base_url).complete(MESSAGES, tools=[SEARCH, LOOKUP])
    body = fake_llm.last_request.body
    assert body is not None
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "kb_search",
                "description": "检索知识库",
                "parameters": SEARCH.parameters,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "查词典",
                "parameters": LOOKUP.parameters,
            },
        },
    ]
    assert body["tool_choice"] == "auto"

    list(client(fake_llm.base_url).stream(MESSAGES, tools=[SEARCH], tool_choice="none"))
    body = fake_llm.last_request.body
    assert body is not None
    assert [t["function"]["name"] for t in body["tools"]] == ["kb_search"]
    assert body["tool_choice"] == "none"


def test_no_tools_offered_sends_neither_tools_nor_tool_choice(fake_llm: FakeLLMServer) -> None:
    client(fake_llm.base_url).complete(MESSAGES)
    list(client(fake_llm.base_url).stream(MESSAGES))
    for request in fake_llm.chat_requests:
        assert request.body is not None
        assert "tools" not in request.body and "tool_choice" not in request.body


def test_calls_and_results_are_sent_back_in_the_protocols_shape(fake_llm: FakeLLMServer) -> None:
    history = [
        *MESSAGES,
        Message(role="assistant", content="", tool_calls=EXPECTED_CALLS),
        Message(role="tool", content="[知识库检索结果]第三章、第五章", tool_call_id="call_a"),
        Message(role="tool", content="二叉树：每个结点至多两个子结点", tool_call_id="call_b"),
    ]
    client(fake_llm.base_url).complete(history, tools=[SEARCH, LOOKUP])
    body = fake_llm.last_request.body
    assert body is not None
    assert body["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "kb_search", "arguments": EXPECTED_CALLS[0].arguments},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": EXPECTED_CALLS[1].arguments},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "[知识库检索结果]第三章、第五章"},
        {"role": "tool", "tool_call_id": "call_b", "content": "二叉树：每个结点至多两个子结点"},
    ]


# -- whole answers -----------------------------------------------------------------------


def test_complete_reads_tool_calls_finish_reason_and_usage(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("ok", script=[TWO_CALLS])
    result = client(fake_llm.base_url).complete(MESSAGES, tools=[SEARCH, LOOKUP])
    body = fake_llm.last_request.body
    assert body is not None
    assert result == Completion(
        text="我查一下。",
        input_tokens=prompt_tokens_for(body),
        output_tokens=completion_tokens_for(TWO_CALLS),
        tool_calls=EXPECTED_CALLS,
        finish_reason="tool_calls",
    )


def test_a_plain_answer_has_no_tool_calls(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("ok", reply="第三章和第五章。")
    result = client(fake_llm.base_url).complete(MESSAGES, tools=[SEARCH])
    assert result.tool_calls == ()
    assert result.finish_reason == "stop"
    assert result.text == "第三章和第五章。"


def test_usage_fallback_counts_the_calls_and_the_declarations(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("no_usage", script=[TWO_CALLS])
    history = [*MESSAGES, Message(role="assistant", content="", tool_calls=EXPECTED_CALLS)]
    result = client(fake_llm.base_url).complete(history, tools=[SEARCH, LOOKUP])
    declared = json.dumps(fake_llm.last_request.body["tools"], ensure_ascii=False)  # type: ignore[index]
    sent_calls = sum(count_tokens(c.name) + count_tokens(c.arguments) for c in EXPECTED_CALLS)
    assert result.input_tokens == (
        sum(count_tokens(m.content) for m in MESSAGES) + sent_calls + count_tokens(declared)
    )
    assert result.output_tokens == count_tokens("我查一下。") + sent_calls


def test_arguments_that_are_not_json_are_passed_on_untouched(fake_llm: FakeLLMServer) -> None:
    """Broken arguments are the model's mistake for the caller to answer, not a failure."""
    broken = "{'query': 期末考试"
    fake_llm.set_mode("ok", script=[ToolCallsReply([FakeToolCall("kb_search", broken)])] * 2)
    assert client(fake_llm.base_url).complete(MESSAGES, tools=[SEARCH]).tool_calls == (
        ToolCall(id="call_0", name="kb_search", arguments=broken),
    )
    _, last = streamed(list(client(fake_llm.base_url).stream(MESSAGES, tools=[SEARCH])))
    assert last.tool_calls == (ToolCall(id="call_0", name="kb_search", arguments=broken),)


# -- streams ---------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["fragments", "interleave", "whole", "no_index"])
@pytest.mark.parametrize("fragment_size", [None, 1, 7])
@pytest.mark.parametrize("chunk_size", [1, 4])
def test_stream_assembles_tool_calls_however_they_are_split(
    fake_llm: FakeLLMServer, style: str, fragment_size: int | None, chunk_size: int
) -> None:
    fake_llm.set_mode(
        "ok",
        script=[TWO_CALLS],
        tool_call_style=style,
        fragment_size=fragment_size,
        chunk_size=chunk_size,
    )
    text, last = streamed(list(client(fake_llm.base_url).stream(MESSAGES, tools=[SEARCH, LOOKUP])))
    assert text == last.text == "我查一下。"
    assert last.tool_calls == EXPECTED_CALLS
    assert last.finish_reason == "tool_calls"
    body = fake_llm.last_request.body
    assert body is not None
    assert (last.input_tokens, last.output_tokens) == (
        prompt_tokens_for(body),
        completion_tokens_for(TWO_CALLS),
    )


def test_stream_without_ids_gets_ids_of_its_own(fake_llm: FakeLLMServer) -> None:
    reply = ToolCallsReply([FakeToolCall("kb_search", {"query": "校规"}, id="")])
    fake_llm.set_mode("ok", script=[reply])
    _, last = streamed(list(client(fake_llm.base_url).stream(MESSAGES, tools=[SEARCH])))
    assert last.tool_calls == (
        ToolCall(id="call_0", name="kb_search", arguments='{"query": "校规"}'),
    )


def test_a_stream_cut_inside_the_arguments_is_a_bad_response(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("stream_no_done", script=[TWO_CALLS], no_done_content_chunks=4)
    with pytest.raises(ProviderError) as caught:
        list(client(fake_llm.base_url).stream(MESSAGES, tools=[SEARCH]))
    assert caught.value.code == ERROR_BAD_RESPONSE


@pytest.mark.parametrize("stream", [False, True])
def test_malformed_tool_calls_are_a_bad_response_without_the_key(
    fake_llm: FakeLLMServer, stream: bool
) -> None:
    fake_llm.set_mode("malformed_tool_calls")
    c = client(fake_llm.base_url, api_key=KEY)
    with pytest.raises(ProviderError) as caught:
        if stream:
            list(c.stream(MESSAGES, tools=[SEARCH]))
        else:
            c.complete(MESSAGES, tools=[SEARCH])
    assert caught.value.code == ERROR_BAD_RESPONSE
    assert "tool_calls" in caught.value.detail
    assert KEY not in str(caught.value) and KEY not in caught.value.detail


def test_the_endpoint_answering_a_stream_in_one_piece_keeps_its_calls(
    fake_llm: FakeLLMServer,
) -> None:
    """Some servers ignore "stream": true; their whole answer's calls still count."""

    class OnePiece(OpenAICompatClient):
        def _payload(self, request: Any, *, stream: bool) -> bytes:
            return super()._payload(request, stream=False)

    fake_llm.set_mode("ok", script=[TWO_CALLS])
    one = OnePiece(name="fake", base_url=fake_llm.base_url, model="m", api_key=None, timeout=2)
    text, last = streamed(list(one.stream(MESSAGES, tools=[SEARCH, LOOKUP])))
    assert text == "我查一下。"
    assert last.tool_calls == EXPECTED_CALLS


# -- the assembler on its own: table and property --------------------------------------


@pytest.mark.parametrize(
    ("fragments", "expected"),
    [
        pytest.param(
            [
                [{"index": 0, "id": "a", "function": {"name": "kb_search", "arguments": ""}}],
                [{"index": 0, "function": {"arguments": '{"query"'}}],
                [{"index": 0, "function": {"arguments": ': "校规"}'}}],
            ],
            [ToolCall("a", "kb_search", '{"query": "校规"}')],
            id="openai",
        ),
        pytest.param(
            [
                [{"index": 0, "id": "a", "function": {"name": "kb_search", "arguments": "{"}}],
                [{"index": 0, "id": "a", "function": {"name": "kb_search", "arguments": "}"}}],
            ],
            [ToolCall("a", "kb_search", "{}")],
            id="id-and-name-repeated",
        ),
        pytest.param(
            [[{"id": "a", "function": {"name": "kb_search", "arguments": {"query": "校规"}}}]],
            [ToolCall("a", "kb_search", '{"query": "校规"}')],
            id="arguments-as-an-object",
        ),
        pytest.param(
            [
                [{"index": 1, "id": "b", "function": {"name": "lookup"}}],
                [{"index": 0, "id": "a", "function": {"name": "kb_search"}}],
            ],
            [ToolCall("a", "kb_search", ""), ToolCall("b", "lookup", "")],
            id="ordered-by-index",
        ),
        pytest.param(
            [
                [{"id": "a", "function": {"name": "kb_search", "arguments": '{"q"'}}],
                [{"function": {"arguments": ":1}"}}],
                [{"id": "b", "function": {"name": "lookup", "arguments": "{}"}}],
            ],
            [ToolCall("a", "kb_search", '{"q":1}'), ToolCall("b", "lookup", "{}")],
            id="no-index",
        ),
        pytest.param(
            [[{"index": 0, "function": {"name": "kb_search"}}]],
            [ToolCall("call_0", "kb_search", "")],
            id="no-id",
        ),
    ],
)
def test_assembler_table(fragments: list[list[dict[str, Any]]], expected: list[ToolCall]) -> None:
    assembler = ToolCallAssembler()
    for delta in fragments:
        assembler.feed(delta)
    assert list(assembler.result()) == expected


@pytest.mark.parametrize(
    "delta",
    [
        {"index": 0},
        [1],
        [{"index": "0", "function": {"name": "kb_search"}}],
        [{"index": -1, "function": {"name": "kb_search"}}],
        [{"index": True, "function": {"name": "kb_search"}}],
        [{"index": 0, "function": "kb_search"}],
        [{"index": 0, "function": {"name": ["kb_search"]}}],
        [{"index": 0, "function": {"arguments": 3}}],
        [{"index": 0, "id": 5}],
    ],
)
def test_assembler_refuses_what_is_not_the_protocol(delta: object) -> None:
    with pytest.raises(ValueError):
        ToolCallAssembler().feed(delta)


@settings(max_examples=200, deadline=None)
@given(
    calls=st.lists(
        st.tuples(
            st.sampled_from(["kb_search", "lookup", "查询"]),
            st.text(min_size=0, max_size=60),
        ),
        min_size=1,
        max_size=3,
    ),
    cuts=st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=20),
    interleave=st.booleans(),
)
def test_any_fragmentation_reassembles_every_call_exactly(
    calls: list[tuple[str, str]], cuts: list[int], interleave: bool
) -> None:
    per_call: list[list[dict[str, Any]]] = []
    for index, (name, arguments) in enumerate(calls):
        fragments: list[dict[str, Any]] = [
            {"index": index, "id": f"id{index}", "function": {"name": name, "arguments": ""}}
        ]
        position, step = 0, 0
        while position < len(arguments):
            size = cuts[step % len(cuts)]
            piece = arguments[position : position + size]
            fragments.append({"index": index, "function": {"arguments": piece}})
            position += size
            step += 1
        per_call.append(fragments)
    if interleave:
        order = [f[i] for i in range(max(len(f) for f in per_call)) for f in per_call if i < len(f)]
    else:
        order = [fragment for fragments in per_call for fragment in fragments]
    assembler = ToolCallAssembler()
    for fragment in order:
        assembler.feed([fragment])
    assert list(assembler.result()) == [
        ToolCall(id=f"id{i}", name=name, arguments=arguments)
        for i, (name, arguments) in enumerate(calls)
    ]
