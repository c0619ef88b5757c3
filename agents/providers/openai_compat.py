"""An :class:`LLMClient` for any OpenAI-compatible ``/chat/completions`` endpoint.

Works with Ollama (``http://host:11434/v1``), Qwen DashScope compatible mode, DeepSeek,
vLLM and llama.cpp. Standard library only (``http.client``): one connection per call,
no proxy support, the ``timeout`` applies to the connect and to every blocking read
(so a stream may last longer than ``timeout`` as long as chunks keep arriving).

Every failure becomes a :class:`ProviderError` with a stable code. Error details are
meant for operators' logs: they may carry the HTTP status and a short body excerpt but
never the API key or the ``Authorization`` header (both are redacted defensively).

Function tools: offered ``tools`` are sent as OpenAI ``tools`` (``type: function``);
``message.tool_calls`` of an answer, or the ``delta.tool_calls`` fragments of a stream
(assembled by ``index``: the first fragment of a call carries its id and name, the
following ones pieces of its arguments), become ``Completion.tool_calls``. A structurally
broken ``tool_calls`` (not a list, a call without a ``function`` object, a name or
arguments that are not text) is a ``provider_bad_response``; arguments that are not valid
JSON are passed on as they are, for the caller to answer.
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from agents.providers.base import (
    ERROR_AUTH,
    ERROR_BAD_RESPONSE,
    ERROR_HTTP,
    ERROR_TIMEOUT,
    ERROR_UNREACHABLE,
    Completion,
    Delta,
    Message,
    ProviderError,
    Purpose,
    StreamEvent,
    ToolCall,
    ToolChoice,
    ToolSpec,
)
from agents.tokens import count_tokens

__all__ = ["OpenAICompatClient", "SSEDecoder", "redact"]

# Largest non-streamed response body we accept, and largest single SSE line.
MAX_BODY_BYTES: Final = 16 * 1024 * 1024
MAX_LINE_BYTES: Final = 1024 * 1024
# How much of an error body is read, and how much of it ends up in a detail.
ERROR_BODY_READ_BYTES: Final = 4096
SNIPPET_CHARS: Final = 300
DETAIL_CHARS: Final = 600
READ_SIZE: Final = 65536

_REDACTED: Final = "***"
_BEARER_RE: Final = re.compile(r"(?i)\bbearer\s+[^\s\"',;}\]]+")
_AUTH_HEADER_RE: Final = re.compile(
    r"(?i)(authorization\"?\s*[:=]\s*\"?)(?!bearer\s)[^\s\"',;}\]]+"
)
_CONTROL_RE: Final = re.compile(r"[\x00-\x1f\x7f]+")
# Header values http.client would reject (and echo back in its ValueError).
_BAD_HEADER_CHARS_RE: Final = re.compile(r"[\x00-\x20\x7f]")

_DONE: Final = "[DONE]"


def redact(text: str, secret: str | None) -> str:
    """``text`` without ``secret`` (in raw, JSON-escaped and URL-quoted forms) and
    without anything that looks like a bearer token or an Authorization value."""
    if secret:
        variants = {
            secret,
            json.dumps(secret)[1:-1],
            urllib.parse.quote(secret, safe=""),
            urllib.parse.quote_plus(secret),
        }
        for variant in sorted(variants, key=len, reverse=True):
            if variant:
                text = text.replace(variant, _REDACTED)
        # A body cut at a read boundary may end with the first part of the key.
        for n in range(len(secret) - 1, 3, -1):
            if text.endswith(secret[:n]):
                text = text[:-n] + _REDACTED
                break
    text = _BEARER_RE.sub("Bearer " + _REDACTED, text)
    return _AUTH_HEADER_RE.sub(lambda m: m.group(1) + _REDACTED, text)


def _shorten(text: str, limit: int) -> str:
    text = _CONTROL_RE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class SSEDecoder:
    """Incremental server-sent-events decoder.

    ``feed`` takes bytes split anywhere (inside a line, a UTF-8 sequence or a CRLF) and
    returns the ``data`` payloads of the events completed so far; ``close`` flushes what
    is left at end of stream. Comment lines (``:keep-alive``) and fields other than
    ``data`` are ignored; several ``data`` lines of one event are joined with ``\\n``.
    Lines end with LF or CRLF. Raises ``ValueError`` for a line over ``max_line`` bytes.
    """

    def __init__(self, *, max_line: int = MAX_LINE_BYTES) -> None:
        self._buffer = bytearray()
        self._data: list[str] = []
        self._max_line = max_line

    def feed(self, chunk: bytes) -> list[str]:
        self._buffer += chunk
        out: list[str] = []
        start = 0
        while True:
            end = self._buffer.find(b"\n", start)
            if end < 0:
                break
            self._line(bytes(self._buffer[start:end]), out)
            start = end + 1
        del self._buffer[:start]
        if len(self._buffer) > self._max_line:
            raise ValueError(f"SSE line longer than {self._max_line} bytes")
        return out

    def close(self) -> list[str]:
        out: list[str] = []
        if self._buffer:
            self._line(bytes(self._buffer), out)
            self._buffer.clear()
        self._dispatch(out)
        return out

    def _line(self, raw: bytes, out: list[str]) -> None:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw:
            self._dispatch(out)
            return
        line = raw.decode("utf-8", errors="replace")
        if line.startswith(":"):
            return  # comment / keep-alive
        field, _, value = line.partition(":")
        if field == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)

    def _dispatch(self, out: list[str]) -> None:
        if self._data:
            out.append("\n".join(self._data))
            self._data = []


class OpenAICompatClient:
    """``LLMClient`` speaking the OpenAI chat-completions protocol over HTTP(S)."""

    def __init__(
        self,
        *,
        name: str,
        base_url: str,
        model: str,
        api_key: str | None,
        timeout: float,
        max_output_tokens: int | None = None,
        supports_tools: bool = True,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("base_url must be an absolute http(s) URL")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if max_output_tokens is not None and max_output_tokens <= 0:
            raise ValueError("max_output_tokens must be positive")
        key = (api_key or "").strip() or None
        if key is not None and _BAD_HEADER_CHARS_RE.search(key):
            # Never echo the key: http.client's own error message would.
            raise ValueError("api_key contains characters not allowed in an HTTP header")

        self.name = name
        self.model = model
        self.timeout = float(timeout)
        self.max_output_tokens = max_output_tokens
        self.supports_tools = supports_tools
        self._api_key = key
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        try:
            self._port = parts.port
        except ValueError as exc:
            raise ValueError("base_url has an invalid port") from exc
        path = parts.path.rstrip("/") + "/chat/completions"
        self._path = f"{path}?{parts.query}" if parts.query else path
        # For logs and repr: never the key, never userinfo from the URL.
        netloc = f"[{self._host}]" if ":" in self._host else self._host
        if self._port is not None:
            netloc = f"{netloc}:{self._port}"
        self.endpoint = f"{parts.scheme}://{netloc}{path}"

    def __repr__(self) -> str:
        return (
            f"OpenAICompatClient(name={self.name!r}, endpoint={self.endpoint!r}, "
            f"model={self.model!r}, api_key={'set' if self._api_key else 'unset'})"
        )

    # -- public API -----------------------------------------------------------------

    def complete(
        self,
        messages: list[Message],
        *,
        purpose: Purpose = "chat",
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
    ) -> Completion:
        del purpose  # real providers ignore it
        request = _Request(messages=messages, tools=tuple(tools), tool_choice=tool_choice)
        conn, response = self._open(request, stream=False)
        try:
            body = self._read_body(response)
        finally:
            conn.close()
        return self._parse_completion(body, request)

    def stream(
        self,
        messages: list[Message],
        *,
        purpose: Purpose = "chat",
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
    ) -> Iterator[StreamEvent]:
        del purpose
        request = _Request(messages=messages, tools=tuple(tools), tool_choice=tool_choice)
        conn, response = self._open(request, stream=True)
        try:
            content_type = (response.getheader("Content-Type") or "").lower()
            if "json" in content_type and "event-stream" not in content_type:
                # The endpoint ignored "stream": true and answered in one piece.
                completion = self._parse_completion(self._read_body(response), request)
                if completion.text:
                    yield Delta(completion.text)
                yield completion
                return
            yield from self._read_stream(response, request)
        finally:
            conn.close()

    # -- request --------------------------------------------------------------------

    def _payload(self, request: _Request, *, stream: bool) -> bytes:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [_message_json(m) for m in request.messages],
            "stream": stream,
        }
        if request.tools:
            payload["tools"] = [_tool_json(tool) for tool in request.tools]
            payload["tool_choice"] = request.tool_choice
        if stream:
            payload["stream_options"] = {"include_usage": True}
        if self.max_output_tokens is not None:
            payload["max_tokens"] = self.max_output_tokens
        return json.dumps(payload, ensure_ascii=False).encode("utf-8")

    def _headers(self, *, stream: bool) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "Accept": "text/event-stream" if stream else "application/json",
            "User-Agent": "agent-memory/openai-compat",
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _connection(self) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout)
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)

    def _open(
        self, request: _Request, *, stream: bool
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        body = self._payload(request, stream=stream)
        conn = self._connection()
        try:
            conn.request("POST", self._path, body=body, headers=self._headers(stream=stream))
            response = conn.getresponse()
        except Exception as exc:
            conn.close()
            raise self._map_exception(exc) from exc
        if 200 <= response.status < 300:
            return conn, response
        try:
            raw = response.read(ERROR_BODY_READ_BYTES)
        except Exception:
            raw = b""
        finally:
            conn.close()
        code = ERROR_AUTH if response.status in (401, 403) else ERROR_HTTP
        snippet = self._snippet(raw)
        detail = f"HTTP {response.status} {response.reason}".strip()
        raise self._error(code, f"{detail}; body: {snippet}" if snippet else detail)

    # -- response -------------------------------------------------------------------

    def _read_body(self, response: http.client.HTTPResponse) -> bytes:
        try:
            body = response.read(MAX_BODY_BYTES + 1)
        except Exception as exc:
            raise self._map_exception(exc) from exc
        if len(body) > MAX_BODY_BYTES:
            raise self._error(ERROR_BAD_RESPONSE, f"response larger than {MAX_BODY_BYTES} bytes")
        return body

    def _parse_completion(self, body: bytes, request: _Request) -> Completion:
        try:
            data = json.loads(body)
        except ValueError:
            raise self._error(ERROR_BAD_RESPONSE, f"invalid JSON: {self._snippet(body)}") from None
        if not isinstance(data, dict):
            raise self._error(ERROR_BAD_RESPONSE, "response is not a JSON object")
        if data.get("error") is not None:
            raise self._error(ERROR_BAD_RESPONSE, f"error object: {self._dumps(data['error'])}")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            raise self._error(ERROR_BAD_RESPONSE, "response has no choices")
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise self._error(ERROR_BAD_RESPONSE, "choices[0].message missing")
        text = self._content_text(message.get("content"))
        try:
            tool_calls = _tool_calls_of(message.get("tool_calls"))
        except ValueError as exc:
            raise self._error(ERROR_BAD_RESPONSE, f"invalid tool_calls: {exc}") from None
        finish = first.get("finish_reason")
        input_tokens, output_tokens = self._usage(data.get("usage"), request, text, tool_calls)
        return Completion(
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            tool_calls=tool_calls,
            finish_reason=finish if isinstance(finish, str) else "",
        )

    def _read_stream(
        self, response: http.client.HTTPResponse, request: _Request
    ) -> Iterator[StreamEvent]:
        decoder = SSEDecoder()
        parts: list[str] = []
        calls = ToolCallAssembler()
        usage: object = None
        finish_reason = ""
        done = False
        eof = False
        while not done and not eof:
            chunk = self._read_chunk(response)
            eof = not chunk
            try:
                payloads = decoder.close() if eof else decoder.feed(chunk)
            except ValueError as exc:
                raise self._error(ERROR_BAD_RESPONSE, str(exc)) from None
            for payload in payloads:
                for item in self._decode_payload(payload):
                    if item is None:
                        done = True
                        break
                    parsed = self._parse_chunk(item)
                    if parsed.usage is not None:
                        usage = parsed.usage
                    if parsed.finish_reason:
                        finish_reason = parsed.finish_reason
                    if parsed.tool_calls is not None:
                        try:
                            calls.feed(parsed.tool_calls)
                        except ValueError as exc:
                            raise self._error(
                                ERROR_BAD_RESPONSE, f"invalid tool_calls in stream: {exc}"
                            ) from None
                    piece = parsed.text
                    if piece:
                        parts.append(piece)
                        yield Delta(piece)
                if done:
                    break
        if not done:
            # A stream cut off mid-answer is not an answer: the run fails rather than
            # storing a truncated text as if it were complete.
            raise self._error(ERROR_BAD_RESPONSE, "stream ended without [DONE]")
        text = "".join(parts)
        tool_calls = calls.result()
        input_tokens, output_tokens = self._usage(usage, request, text, tool_calls)
        yield Completion(
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            tool_calls=tool_calls,
            finish_reason=finish_reason,
        )

    def _read_chunk(self, response: http.client.HTTPResponse) -> bytes:
        """The next bytes of the stream; ``b""`` at its end (clean or cut off)."""
        try:
            return response.read1(READ_SIZE)
        except http.client.IncompleteRead as exc:
            # A chunked body cut off mid-way: treat as end of stream; what was received
            # is kept (the caller decides whether it is enough).
            return bytes(exc.partial)
        except Exception as exc:
            raise self._map_exception(exc) from exc

    def _decode_payload(self, payload: str) -> list[dict[str, Any] | None]:
        """JSON objects in one event's data (``None`` marks ``[DONE]``)."""
        if payload.strip() == _DONE:
            return [None]
        try:
            return [self._as_object(json.loads(payload))]
        except ValueError:
            pass
        lines = [line for line in payload.split("\n") if line.strip()]
        if len(lines) > 1:
            # Some servers send one JSON per data line without blank separators.
            items: list[dict[str, Any] | None] = []
            for line in lines:
                if line.strip() == _DONE:
                    items.append(None)
                    break
                try:
                    items.append(self._as_object(json.loads(line)))
                except ValueError:
                    break
            else:
                return items
        raise self._error(ERROR_BAD_RESPONSE, f"invalid JSON in stream: {self._snippet(payload)}")

    def _as_object(self, value: object) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self._error(ERROR_BAD_RESPONSE, "stream chunk is not a JSON object")
        return value

    def _parse_chunk(self, chunk: dict[str, Any]) -> _Chunk:
        if chunk.get("error") is not None:
            raise self._error(ERROR_BAD_RESPONSE, f"error in stream: {self._dumps(chunk['error'])}")
        usage = chunk.get("usage")
        choices = chunk.get("choices")
        if choices is None or choices == []:
            return _Chunk(usage=usage)
        if not isinstance(choices, list):
            raise self._error(ERROR_BAD_RESPONSE, "stream chunk has invalid choices")
        first = choices[0]
        if not isinstance(first, dict):
            return _Chunk(usage=usage)
        finish = first.get("finish_reason")
        finish_reason = finish if isinstance(finish, str) else ""
        delta = first.get("delta")
        if not isinstance(delta, dict):
            return _Chunk(usage=usage, finish_reason=finish_reason)
        return _Chunk(
            text=self._content_text(delta.get("content")),
            usage=usage,
            tool_calls=delta.get("tool_calls"),
            finish_reason=finish_reason,
        )

    def _content_text(self, content: object) -> str:
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
            return "".join(
                part["text"]
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        raise self._error(ERROR_BAD_RESPONSE, "message content is not text")

    @staticmethod
    def _usage(
        usage: object, request: _Request, text: str, tool_calls: tuple[ToolCall, ...]
    ) -> tuple[int, int]:
        """The endpoint's counts; where it gives none, our own count of what was sent
        (messages, the calls they carry, the tool declarations) and received."""

        def field(name: str) -> int | None:
            value = usage.get(name) if isinstance(usage, dict) else None
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
            return None

        input_tokens = field("prompt_tokens")
        if input_tokens is None:
            input_tokens = sum(_message_tokens(m) for m in request.messages)
            if request.tools:
                input_tokens += count_tokens(
                    json.dumps([_tool_json(t) for t in request.tools], ensure_ascii=False)
                )
        output_tokens = field("completion_tokens")
        if output_tokens is None:
            output_tokens = count_tokens(text) + _calls_tokens(tool_calls)
        return input_tokens, output_tokens

    # -- errors ---------------------------------------------------------------------

    def _snippet(self, raw: bytes | str) -> str:
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        # Redact before cutting so that no part of a key survives the cut.
        return _shorten(redact(text, self._api_key), SNIPPET_CHARS)

    @staticmethod
    def _dumps(value: object) -> str:
        try:
            return json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            return repr(value)

    def _error(self, code: str, detail: str) -> ProviderError:
        text = _shorten(redact(f"{self.name}: {detail}", self._api_key), DETAIL_CHARS)
        return ProviderError(code, text)

    def _map_exception(self, exc: BaseException) -> ProviderError:
        if isinstance(exc, ProviderError):
            return exc
        reason = f"{type(exc).__name__}: {exc}".rstrip(": ")
        where = f"{self._host}:{self._port}" if self._port else self._host
        if isinstance(exc, TimeoutError):
            return self._error(ERROR_TIMEOUT, f"no answer from {where} within {self.timeout}s")
        if isinstance(exc, http.client.IncompleteRead):
            return self._error(ERROR_BAD_RESPONSE, f"truncated response ({reason})")
        if isinstance(exc, OSError):  # refused, reset, DNS, TLS, unreachable network
            return self._error(ERROR_UNREACHABLE, f"{where}: {reason}")
        # Protocol errors (bad status line, oversized headers) and anything unexpected.
        return self._error(ERROR_BAD_RESPONSE, reason)


# -- tool calling: the wire format ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Request:
    messages: list[Message]
    tools: tuple[ToolSpec, ...]
    tool_choice: ToolChoice


@dataclass(frozen=True, slots=True)
class _Chunk:
    """What one stream chunk carries."""

    text: str = ""
    usage: object = None
    tool_calls: object = None  # the raw ``delta.tool_calls``, checked by the assembler
    finish_reason: str = ""


def _tool_json(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def _message_json(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.tool_calls:
        # The model's own turn echoed back: content null when it said nothing (the
        # protocol's shape for a pure tool-call turn).
        return {
            "role": message.role,
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def _calls_tokens(calls: Sequence[ToolCall]) -> int:
    return sum(count_tokens(call.name) + count_tokens(call.arguments) for call in calls)


def _message_tokens(message: Message) -> int:
    return count_tokens(message.content) + _calls_tokens(message.tool_calls)


def _arguments_text(value: object) -> str:
    """A call's arguments as text: servers send a JSON string (the protocol), some an
    object, some nothing for a call without parameters."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    raise ValueError("function.arguments is not text")


def _optional_text(item: dict[str, Any], key: str, what: str) -> str:
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{what} is not text")
    return value


def _tool_calls_of(raw: object) -> tuple[ToolCall, ...]:
    """``message.tool_calls`` of a whole answer. Raises ``ValueError`` when broken."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ValueError("tool_calls is not a list")
    calls = []
    for position, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ValueError(f"tool_calls[{position}] is not an object")
        function = item.get("function")
        if not isinstance(function, dict):
            raise ValueError(f"tool_calls[{position}].function is not an object")
        call_id = _optional_text(item, "id", f"tool_calls[{position}].id")
        calls.append(
            ToolCall(
                id=call_id or f"call_{position}",
                name=_optional_text(function, "name", f"tool_calls[{position}].function.name"),
                arguments=_arguments_text(function.get("arguments")),
            )
        )
    return tuple(calls)


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


class ToolCallAssembler:
    """Streamed ``delta.tool_calls`` fragments, assembled into whole calls.

    Fragments of one call share an ``index``; its first carries ``id`` and
    ``function.name``, the following ones pieces of ``function.arguments`` to append.
    Tolerated, because real servers do it: no ``index`` (a fragment with a new id starts
    a call, one without continues the last), the id or the whole name repeated in every
    fragment, arguments sent as an object in one piece. ``feed`` raises ``ValueError``
    on anything else that is not the protocol's shape.
    """

    def __init__(self) -> None:
        self._calls: dict[int, _PartialCall] = {}
        self._last: int | None = None

    def feed(self, raw: object) -> None:
        if not isinstance(raw, list):
            raise ValueError("delta.tool_calls is not a list")
        for item in raw:
            if not isinstance(item, dict):
                raise ValueError("a tool_calls fragment is not an object")
            partial = self._partial(item)
            call_id = _optional_text(item, "id", "tool call id")
            if call_id and not partial.id:
                partial.id = call_id
            function = item.get("function")
            if function is None:
                continue
            if not isinstance(function, dict):
                raise ValueError("a tool_calls fragment's function is not an object")
            name = _optional_text(function, "name", "function.name")
            if name and name != partial.name:
                partial.name += name
            arguments = function.get("arguments")
            if isinstance(arguments, dict | list):
                partial.arguments = _arguments_text(arguments)
            else:
                partial.arguments += _arguments_text(arguments)

    def _partial(self, item: dict[str, Any]) -> _PartialCall:
        index = item.get("index")
        if index is None:
            call_id = item.get("id")
            known = {p.id for p in self._calls.values()}
            if self._last is None or (isinstance(call_id, str) and call_id not in known):
                index = len(self._calls)
                while index in self._calls:
                    index += 1
            else:
                index = self._last
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ValueError("a tool_calls fragment has an invalid index")
        self._last = index
        return self._calls.setdefault(index, _PartialCall())

    def result(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(id=p.id or f"call_{index}", name=p.name, arguments=p.arguments)
            for index, p in sorted(self._calls.items())
        )
