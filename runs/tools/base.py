"""Function tools a chat run may call: what a tool is, the registry, one call's execution.

A :class:`Tool` has a name, a description and JSON-Schema parameters (what the model is
shown) and a body that takes the run's :class:`ToolContext` and the validated arguments
and returns a :class:`ToolResult` (the text the model reads, the ids behind it, its
tokens). :func:`tool_call_run` executes one call the model asked for and never raises:
an unknown tool, arguments that are not JSON or do not fit the schema, a tool that
rejects its input and a tool that crashes all become an error result the model can read
(and a record saying so), never a failed run or a 500.

Tools only read. None of them may reach the confirm path or any write of memory (the
promotion-path test walks the imports of this package too).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from django.utils.translation import gettext as _
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from agents.providers.base import ToolCall, ToolSpec
from agents.tokens import count_tokens
from memory.scope import Scope

logger = logging.getLogger(__name__)

# Stable codes of a failed tool call (ToolCallRecord.error).
TOOL_UNKNOWN: Final = "unknown_tool"
TOOL_BAD_ARGUMENTS: Final = "bad_arguments"
TOOL_REJECTED: Final = "rejected"  # the tool refused its input (an empty query)
TOOL_FAILED: Final = "tool_failed"  # the tool crashed (a search error)
TOOL_NO_ROOM: Final = "no_room"  # the run's window has no room for another result

# How much of a model's unparsable arguments a record keeps, and of a schema error.
_RAW_ARGUMENTS_CHARS: Final = 500
_SCHEMA_MESSAGE_CHARS: Final = 200


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool body may use: the run's scope (whose data it may read), its id, and
    the tokens its result may take."""

    scope: Scope
    run_id: int
    budget: int


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What the model reads back (``text``) and the ids behind it (for ``kb_search``:
    the knowledge-base chunks shown). Retrieved text is inside an untrusted boundary."""

    text: str
    tokens: int
    ids: tuple[int, ...] = ()


class ToolRejected(ValueError):
    """Raised by a tool body for input it refuses; ``message`` is for the model."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]  # a JSON Schema object; arguments are validated against it
    call: Callable[[ToolContext, dict[str, Any]], ToolResult]

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One executed call, as stored on the run (``Run.tool_calls``) and its manifest."""

    call_id: str
    name: str
    arguments: dict[str, Any] | None  # None when the model's arguments were not an object
    status: Literal["ok", "error"]
    error: str = ""  # one of the TOOL_* codes when status is "error"
    chunk_ids: tuple[int, ...] = ()
    tokens: int = 0  # tokens of the result the model read (charged to the next call)
    duration_ms: float = 0.0
    arguments_raw: str = ""  # the model's text, kept (cut) only when it was not an object

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.call_id,
            "name": self.name,
            "arguments": self.arguments,
            "status": self.status,
            "error": self.error,
            "chunk_ids": list(self.chunk_ids),
            "tokens": self.tokens,
            "duration_ms": round(self.duration_ms, 2),
        }
        if self.arguments_raw:
            data["arguments_raw"] = self.arguments_raw
        return data


@dataclass
class ToolRegistry:
    """The tools a chat run is offered, by name, in registration order."""

    _tools: dict[str, Tool] = field(default_factory=dict)

    def register(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        Draft202012Validator.check_schema(tool.parameters)
        self._tools[tool.name] = tool
        return tool

    def unregister(self, name: str) -> None:
        del self._tools[name]

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(tool.spec for tool in self._tools.values())


def _error(text: str) -> ToolResult:
    return ToolResult(text=text, tokens=count_tokens(text))


def _parse_arguments(raw: str) -> dict[str, Any] | None:
    """The arguments as an object; ``None`` when they are not a JSON object."""
    if not raw.strip():
        return {}  # servers send "" for a call without arguments
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _schema_problem(tool: Tool, arguments: dict[str, Any]) -> str:
    """The most relevant schema violation, or "" when the arguments fit."""
    error = best_match(Draft202012Validator(tool.parameters).iter_errors(arguments))
    if error is None:
        return ""
    where = ".".join(str(part) for part in error.absolute_path)
    message = error.message[:_SCHEMA_MESSAGE_CHARS]
    return f"{where}: {message}" if where else message


def tool_call_run(
    *, registry: ToolRegistry, call: ToolCall, context: ToolContext
) -> tuple[ToolResult, ToolCallRecord]:
    """Execute one call; never raises. The result's text is what the model reads next."""
    started = time.perf_counter()

    def record(result: ToolResult, status: Literal["ok", "error"], **extra: Any) -> ToolCallRecord:
        return ToolCallRecord(
            call_id=call.id,
            name=call.name,
            status=status,
            tokens=result.tokens,
            chunk_ids=result.ids,
            duration_ms=(time.perf_counter() - started) * 1000,
            **extra,
        )

    arguments = _parse_arguments(call.arguments)
    raw = "" if arguments is not None else call.arguments[:_RAW_ARGUMENTS_CHARS]
    tool = registry.get(call.name)
    if tool is None:
        available = "、".join(registry.names()) or "—"
        result = _error(
            _("工具调用失败：没有名为「%(name)s」的工具（可用：%(available)s）。")
            % {"name": call.name[:50], "available": available}
        )
        return result, record(result, "error", error=TOOL_UNKNOWN, arguments=arguments)
    if arguments is None:
        result = _error(_("工具调用失败：参数不是 JSON 对象。请按参数说明重新调用，或直接回答。"))
        return result, record(
            result, "error", error=TOOL_BAD_ARGUMENTS, arguments=None, arguments_raw=raw
        )
    if problem := _schema_problem(tool, arguments):
        result = _error(
            _("工具调用失败：参数不符合要求（%(problem)s）。请按参数说明重新调用，或直接回答。")
            % {"problem": problem}
        )
        return result, record(result, "error", error=TOOL_BAD_ARGUMENTS, arguments=arguments)
    if context.budget <= 0:
        result = _error(_("工具调用失败：本轮上下文已满，无法再返回结果。请根据已有信息直接回答。"))
        return result, record(result, "error", error=TOOL_NO_ROOM, arguments=arguments)
    try:
        result = tool.call(context, arguments)
    except ToolRejected as exc:
        result = _error(_("工具调用失败：%(reason)s") % {"reason": exc.message})
        return result, record(result, "error", error=TOOL_REJECTED, arguments=arguments)
    except Exception:
        # A tool's crash (a search error, a database hiccup) is the model's problem to
        # answer around, not the teacher's failed run; the operator gets the trace.
        logger.exception("run %s: tool %s crashed", context.run_id, tool.name)
        result = _error(_("工具暂时不可用（执行出错）。请不要重试，根据已有信息直接回答。"))
        return result, record(result, "error", error=TOOL_FAILED, arguments=arguments)
    if result.tokens > context.budget:
        # A tool must respect its budget. Cutting its text would cut a boundary's footer
        # off, so the result is dropped instead: the window holds.
        logger.error("run %s: tool %s overran its budget", context.run_id, tool.name)
        result = _error(_("工具暂时不可用（结果过长）。请根据已有信息直接回答。"))
        return result, record(result, "error", error=TOOL_FAILED, arguments=arguments)
    return result, record(result, "ok", arguments=arguments)


def records_json(records: Iterable[ToolCallRecord]) -> list[dict[str, Any]]:
    return [r.as_json() for r in records]
