"""The tool registry and one call's execution, without a run around them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema.exceptions import SchemaError

from agents.providers.base import ToolCall
from agents.tokens import count_tokens
from memory.scope import Scope
from runs import tools
from runs.tools import Tool, ToolContext, ToolRegistry, ToolResult, tool_call_run, tools_note

CONTEXT = ToolContext(scope=Scope(tenant_id=1, agent_id=2, owner_id=3), run_id=9, budget=500)


def _echo(context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
    text = f"echo:{arguments.get('text', '')}"
    return ToolResult(text=text, tokens=count_tokens(text), ids=(1,))


ECHO = Tool(
    name="echo",
    description="回声",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    call=_echo,
)


def test_the_default_registry_offers_kb_search_with_a_query_parameter() -> None:
    [spec] = [s for s in tools.registry.specs() if s.name == "kb_search"]
    assert spec.parameters["required"] == ["query"]
    assert spec.parameters["additionalProperties"] is False
    assert "知识库" in spec.description


def test_a_name_is_registered_once_and_a_broken_schema_never() -> None:
    registry = ToolRegistry()
    registry.register(ECHO)
    with pytest.raises(ValueError, match="already registered"):
        registry.register(ECHO)
    broken = Tool(name="broken", description="", parameters={"type": "nonsense"}, call=_echo)
    with pytest.raises(SchemaError):
        registry.register(broken)
    assert registry.names() == ["echo"]
    registry.unregister("echo")
    assert registry.specs() == ()


def test_the_note_names_the_tools_and_says_results_are_data() -> None:
    assert tools_note(()) == ""
    note = tools_note(tools.registry.specs())
    assert "kb_search" in note and "数据" in note and "指令" in note


def test_a_call_without_arguments_is_an_empty_object() -> None:
    registry = ToolRegistry()
    registry.register(ECHO)
    result, record = tool_call_run(
        registry=registry, call=ToolCall(id="a", name="echo", arguments=""), context=CONTEXT
    )
    assert result.text == "echo:"
    assert (record.status, record.arguments, record.chunk_ids) == ("ok", {}, (1,))


@settings(max_examples=300, deadline=None)
@given(name=st.text(max_size=30), arguments=st.text(max_size=200))
def test_no_call_the_model_can_make_raises(name: str, arguments: str) -> None:
    """Whatever name and argument text a model sends, the result is something to read."""
    registry = ToolRegistry()
    registry.register(ECHO)
    result, record = tool_call_run(
        registry=registry, call=ToolCall(id="x", name=name, arguments=arguments), context=CONTEXT
    )
    assert result.text
    assert record.status in ("ok", "error")
    assert (record.status == "ok") == (record.error == "")
    assert len(record.arguments_raw) <= 500
    assert record.as_json()["name"] == name
