"""The offline demo model's knowledge-base chain: it calls kb_search, then quotes it."""

from __future__ import annotations

import json

import pytest

from agents.providers.base import Completion, Delta, Message, ToolCall, ToolSpec
from agents.providers.offline import OfflineClient, kb_tool_quote
from memory import boundary

KB = ToolSpec(name="kb_search", description="检索知识库", parameters={"type": "object"})
OTHER = ToolSpec(name="glossary", description="词典", parameters={"type": "object"})
SYSTEM = Message(role="system", content="你是教学助手。")


def ask(text: str) -> list[Message]:
    return [SYSTEM, Message(role="user", content=text)]


def injected(request: str) -> str:
    """A user message as the read path renders it: a section, then the request."""
    return (
        f"{boundary.RECALL_HEADER}\n上次讲到知识库的用法\n{boundary.RECALL_FOOTER}\n\n"
        f"{boundary.USER_TITLE}\n{request}"
    )


@pytest.mark.parametrize(
    ("request_text", "query"),
    [
        ("请查一下知识库：期末考试考哪几章？", "期末考试考哪几章"),
        ("根据知识库，校规里关于手机的规定是什么", "校规里关于手机的规定是什么"),
        ("知识库里有没有二次函数的教案", "有没有二次函数的教案"),
        ("在我们的知识库中找一下 2023 年期中试卷", "2023 年期中试卷"),
        ("知识库", "知识库"),  # nothing but the pointer: the request itself
    ],
)
def test_a_request_mentioning_the_knowledge_base_calls_kb_search(
    request_text: str, query: str
) -> None:
    result = OfflineClient().complete(ask(injected(request_text)), tools=[OTHER, KB])
    assert result.text == ""
    assert result.finish_reason == "tool_calls"
    [call] = result.tool_calls
    assert call.name == "kb_search"
    assert json.loads(call.arguments) == {"query": query}
    assert result.output_tokens > 0


@pytest.mark.parametrize(
    ("messages", "tools", "purpose", "choice"),
    [
        (ask("出一份数据结构试卷"), [KB], "chat", "auto"),  # no mention
        (ask(injected("出一份试卷")), [KB], "chat", "auto"),  # only the injected text says it
        (ask("查一下知识库"), [], "chat", "auto"),  # not offered
        (ask("查一下知识库"), [OTHER], "chat", "auto"),
        (ask("查一下知识库"), [KB], "chat", "none"),  # told to answer
        (ask("查一下知识库"), [KB], "compress", "auto"),  # memory jobs never call tools
    ],
)
def test_no_call_otherwise(
    messages: list[Message], tools: list[ToolSpec], purpose: str, choice: str
) -> None:
    result = OfflineClient().complete(
        messages,
        tools=tools,
        purpose=purpose,  # type: ignore[arg-type]
        tool_choice=choice,  # type: ignore[arg-type]
    )
    assert result.tool_calls == ()


def test_after_the_result_it_quotes_the_best_hit_and_does_not_call_again() -> None:
    call = ToolCall(id="offline_call_1", name="kb_search", arguments='{"query": "期末考试"}')
    result = (
        f"{boundary.KB_HEADER}\n- 《期末考试说明》 › 考试范围\n第三章、第五章，闭卷 90 分钟。\n"
        f"《校规》 › 考试纪律\n不得携带手机。\n{boundary.KB_FOOTER}"
    )
    messages = [
        *ask("请查一下知识库：期末考试考哪几章？"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content=result, tool_call_id=call.id),
    ]
    reply = OfflineClient().complete(messages, tools=[KB])
    assert reply.tool_calls == ()
    assert "我检索了知识库（kb_search），最相关的资料是" in reply.text
    assert "> 《期末考试说明》 › 考试范围 第三章、第五章" in reply.text  # the list mark dropped
    assert boundary.KB_HEADER not in reply.text and boundary.KB_FOOTER not in reply.text


def test_an_empty_result_is_reported_as_it_is() -> None:
    call = ToolCall(id="c", name="kb_search", arguments='{"query": "x"}')
    messages = [
        *ask("查一下知识库"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content="知识库中没有找到与「x」相关的资料。", tool_call_id="c"),
    ]
    text = OfflineClient().complete(messages, tools=[KB]).text
    assert "结果：知识库中没有找到与「x」相关的资料。" in text


def test_the_stream_of_a_call_is_the_call_alone() -> None:
    events = list(OfflineClient().stream(ask("查一下知识库：校规"), tools=[KB]))
    assert len(events) == 1
    [only] = events
    assert isinstance(only, Completion) and only.tool_calls
    assert not any(isinstance(e, Delta) for e in events)


def test_quote_is_short_and_single_line() -> None:
    body = "第一段。\n\n" + "很长的内容" * 100
    quote = kb_tool_quote(f"{boundary.KB_HEADER}\n{body}\n{boundary.KB_FOOTER}")
    assert "\n" not in quote and len(quote) <= 160
    assert quote.startswith("第一段。")
