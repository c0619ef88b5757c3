"""The one small interface every LLM provider implements.

``complete`` returns a :class:`Completion`; ``stream`` yields :class:`Delta` pieces and
ends with exactly one :class:`Completion` holding the whole text and the usage. Failures
raise :class:`ProviderError` with a stable ``code``; its message is for operators' logs
and never contains a key. What a user sees is derived from the code only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

Role = Literal["system", "user", "assistant"]
# What a call is for. Real providers ignore it; the offline provider uses it to pick its
# deterministic behaviour (a chat reply, an extractive summary, rule-based facts).
Purpose = Literal["chat", "compress", "extract"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int


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
    """What the run engine and the memory jobs call."""

    name: str

    def complete(self, messages: list[Message], *, purpose: Purpose = "chat") -> Completion: ...

    def stream(
        self, messages: list[Message], *, purpose: Purpose = "chat"
    ) -> Iterator[StreamEvent]: ...
