"""An :class:`LLMClient` for any OpenAI-compatible ``/chat/completions`` endpoint.

Works with Ollama (``http://host:11434/v1``), Qwen DashScope compatible mode, DeepSeek,
vLLM and llama.cpp. Standard library only (``http.client``): one connection per call,
no proxy support, the ``timeout`` applies to the connect and to every blocking read
(so a stream may last longer than ``timeout`` as long as chunks keep arriving).

Every failure becomes a :class:`ProviderError` with a stable code. Error details are
meant for operators' logs: they may carry the HTTP status and a short body excerpt but
never the API key or the ``Authorization`` header (both are redacted defensively).
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.parse
from collections.abc import Iterator
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

    def complete(self, messages: list[Message], *, purpose: Purpose = "chat") -> Completion:
        del purpose  # real providers ignore it
        conn, response = self._open(messages, stream=False)
        try:
            body = self._read_body(response)
        finally:
            conn.close()
        return self._parse_completion(body, messages)

    def stream(
        self, messages: list[Message], *, purpose: Purpose = "chat"
    ) -> Iterator[StreamEvent]:
        del purpose
        conn, response = self._open(messages, stream=True)
        try:
            content_type = (response.getheader("Content-Type") or "").lower()
            if "json" in content_type and "event-stream" not in content_type:
                # The endpoint ignored "stream": true and answered in one piece.
                completion = self._parse_completion(self._read_body(response), messages)
                if completion.text:
                    yield Delta(completion.text)
                yield completion
                return
            yield from self._read_stream(response, messages)
        finally:
            conn.close()

    # -- request --------------------------------------------------------------------

    def _payload(self, messages: list[Message], *, stream: bool) -> bytes:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": stream,
        }
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
        self, messages: list[Message], *, stream: bool
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        body = self._payload(messages, stream=stream)
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

    def _parse_completion(self, body: bytes, messages: list[Message]) -> Completion:
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
        input_tokens, output_tokens = self._usage(data.get("usage"), messages, text)
        return Completion(text=text, input_tokens=input_tokens, output_tokens=output_tokens)

    def _read_stream(
        self, response: http.client.HTTPResponse, messages: list[Message]
    ) -> Iterator[StreamEvent]:
        decoder = SSEDecoder()
        parts: list[str] = []
        usage: object = None
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
                    piece, chunk_usage = self._parse_chunk(item)
                    if chunk_usage is not None:
                        usage = chunk_usage
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
        input_tokens, output_tokens = self._usage(usage, messages, text)
        yield Completion(text=text, input_tokens=input_tokens, output_tokens=output_tokens)

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

    def _parse_chunk(self, chunk: dict[str, Any]) -> tuple[str, object]:
        if chunk.get("error") is not None:
            raise self._error(ERROR_BAD_RESPONSE, f"error in stream: {self._dumps(chunk['error'])}")
        usage = chunk.get("usage")
        choices = chunk.get("choices")
        if choices is None or choices == []:
            return "", usage
        if not isinstance(choices, list):
            raise self._error(ERROR_BAD_RESPONSE, "stream chunk has invalid choices")
        first = choices[0]
        delta = first.get("delta") if isinstance(first, dict) else None
        if not isinstance(delta, dict):
            return "", usage
        return self._content_text(delta.get("content")), usage

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
    def _usage(usage: object, messages: list[Message], text: str) -> tuple[int, int]:
        def field(name: str) -> int | None:
            value = usage.get(name) if isinstance(usage, dict) else None
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
            return None

        input_tokens = field("prompt_tokens")
        if input_tokens is None:
            input_tokens = sum(count_tokens(m.content) for m in messages)
        output_tokens = field("completion_tokens")
        if output_tokens is None:
            output_tokens = count_tokens(text)
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
