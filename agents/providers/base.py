"""The one small interface every LLM provider implements.

``complete`` returns a :class:`Completion`; ``stream`` yields :class:`Delta` pieces and
ends with exactly one :class:`Completion` holding the whole text and the usage. Failures
raise :class:`ProviderError` with a stable ``code``; its message is for operators' logs
and never contains a key. What a user sees is derived from the code only.

Function tools (the OpenAI ``tools`` / ``tool_calls`` protocol): a caller may offer
:class:`ToolSpec` s; the model may then answer with :class:`ToolCall` s instead of (or
besides) text (``Completion.tool_calls``, ``finish_reason == "tool_calls"``). The caller
runs them and sends the results back as ``tool`` messages. Providers only speak the
protocol: which tools exist, how often they may be called and what they do belongs to the
run engine (``runs``). A call's ``arguments`` are the model's raw JSON text, unparsed —
a model's malformed arguments are for the caller to answer, not a provider failure.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["system", "user", "assistant", "tool"]
# What a call is for. Real providers ignore it; the offline provider uses it to pick its
# deterministic behaviour (a chat reply, an extractive summary, rule-based facts).
Purpose = Literal["chat", "compress", "extract"]
# "auto": the model may call an offered tool; "none": it must answer in text.
ToolChoice = Literal["auto", "none"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the model asked for. ``arguments`` is its raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A function tool offered to the model: ``parameters`` is a JSON Schema object."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Message:
    """A chat message. An ``assistant`` message may carry the ``tool_calls`` it made; a
    ``tool`` message answers one of them (``tool_call_id``) with ``content``."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int
    # Calls the model asked for (only when tools were offered); empty for a plain answer.
    tool_calls: tuple[ToolCall, ...] = field(default=())
    # The endpoint's finish_reason ("stop", "length", "tool_calls"...); "" if not given.
    finish_reason: str = ""


@dataclass(frozen=True, slots=True)
class Delta:
    text: str


StreamEvent = Delta | Completion


# Stable error codes: stored on failed runs and shown to users through a fixed message.
ERROR_UNREACHABLE = "provider_unreachable"  # refused connection, DNS, reset
ERROR_TIMEOUT = "provider_timeout"
ERROR_HTTP = "provider_http_error"  # 4xx / 5xx from the endpoint
ERROR_AUTH = "provider_auth_error"  # 401 / 403: key missing or rejected
ERROR_BAD_RESPONSE = "provider_bad_response"  # malformed JSON or stream
ERROR_INTERNAL = "internal_error"

ERROR_CODES = (
    ERROR_UNREACHABLE,
    ERROR_TIMEOUT,
    ERROR_HTTP,
    ERROR_AUTH,
    ERROR_BAD_RESPONSE,
    ERROR_INTERNAL,
)

# Codes after which the provider may work again later: memory jobs fall back or wait.
RETRYABLE_CODES = frozenset({ERROR_UNREACHABLE, ERROR_TIMEOUT, ERROR_HTTP})


class ProviderError(Exception):
    """A provider call failed. ``code`` is one of ``ERROR_CODES``."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail

    @property
    def retryable(self) -> bool:
        return self.code in RETRYABLE_CODES


class LLMClient(Protocol):
    """What the run engine and the memory jobs call.

    ``supports_tools``: whether ``tools`` may be offered to this client (a configured
    endpoint whose model does not speak the protocol answers them with an HTTP 400).
    ``tool_choice="none"`` keeps the tools declared (the history may reference them) but
    asks the model to answer in text.
    """

    name: str
    supports_tools: bool

    def complete(
        self,
        messages: list[Message],
        *,
        purpose: Purpose = "chat",
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
    ) -> Completion: ...

    def stream(
        self,
        messages: list[Message],
        *,
        purpose: Purpose = "chat",
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
    ) -> Iterator[StreamEvent]: ...
