"""A real HTTP fake of an OpenAI-compatible ``/v1/chat/completions`` endpoint.

Usage::

    with FakeLLMServer(reply="Hello!") as fake:
        client = OpenAICompatClient(name="fake", base_url=fake.base_url, ...)
        fake.set_mode("http_500")
        ...
        fake.requests[-1].body["messages"]

The server binds 127.0.0.1 on a free port and serves each request in a daemon thread.
Its behaviour is read from public attributes at request time (change them directly or
with :meth:`FakeLLMServer.set_mode`); :meth:`FakeLLMServer.reset` restores the defaults
and forgets recorded requests.

Modes:

``ok``                  a normal answer (JSON, or SSE when the request has ``stream``).
``no_usage``            like ``ok`` but without any ``usage`` object.
``slow_stream``         like ``ok``, sleeping ``stream_delay`` seconds between stream
                        pieces (once before a non-streamed answer).
``timeout``             sleeps ``timeout_delay`` seconds before answering normally.
``http_401`` / ``http_403`` / ``http_429`` / ``http_500``  that status, JSON error body.
``malformed_json``      200 with a truncated JSON body (streamed or not).
``missing_choices``     200 with a JSON object without ``choices``.
``malformed_stream``    SSE with garbage lines and a truncated JSON ``data`` line.
``stream_no_done``      SSE cut off mid-stream (no terminating chunk, no ``[DONE]``)
                        after a role chunk and ``no_done_content_chunks`` content chunks.
``stream_error_object`` SSE with one content chunk, then ``data: {"error": ...}``.
``malformed_tool_calls`` 200 whose ``tool_calls`` break the protocol: not a list in a
                        whole answer; a fragment with a text ``index`` and a numeric
                        name in a stream.

With ``echo_auth_in_error`` every error body (HTTP errors and the stream error object)
repeats the received key and ``Authorization`` header, as a careless server might.

Tool calls: a reply may be a :class:`ToolCallsReply` (calls, optional text before them),
answered as ``message.tool_calls`` with ``finish_reason: "tool_calls"``, or streamed as
OpenAI does: the text first, then per call a fragment with ``index``, ``id`` and name,
then its arguments in ``chunk_size``-character fragments (``tool_call_style``:
``fragments``; ``interleave`` alternates the fragments of parallel calls; ``whole`` sends
each call in one fragment; ``no_index`` also leaves ``index`` out, as some servers do).
``script`` is a list of replies answered in order, one per chat request (then ``reply``
again), so a test scripts a tool round trip: ``script=[ToolCallsReply(...), "answer"]``.
A reply may also be a callable of the request body (it sees the ``tools`` offered and the
``tool`` messages sent back). ``latency`` (seconds, or a (low, high) range drawn from a
seeded generator) delays every chat answer, for benchmarks at a real model's pace.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, get_args

from agents.tokens import count_tokens

Mode = Literal[
    "ok",
    "no_usage",
    "slow_stream",
    "timeout",
    "http_401",
    "http_403",
    "http_429",
    "http_500",
    "malformed_json",
    "missing_choices",
    "malformed_stream",
    "stream_no_done",
    "stream_error_object",
    "malformed_tool_calls",
]
MODES: tuple[str, ...] = get_args(Mode)
ToolCallStyle = Literal["fragments", "interleave", "whole", "no_index"]


@dataclass(frozen=True)
class FakeToolCall:
    """A call the fake model makes. ``arguments`` as text is sent as it is (so a test
    can send broken JSON); an object is JSON-encoded. ``id`` None: ``call_<n>``."""

    name: str
    arguments: str | dict[str, Any] = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class ToolCallsReply:
    """An answer that calls tools (``content``: text the model says before the calls)."""

    calls: Sequence[FakeToolCall]
    content: str = ""


Answer = str | ToolCallsReply
Reply = Answer | Callable[[dict[str, Any]], Answer]

DEFAULT_REPLY = "Hello from the fake LLM. 你好，同学！"
FAKE_MODEL_ID = "fake-model"

__all__ = [
    "DEFAULT_REPLY",
    "MODES",
    "FakeLLMServer",
    "FakeToolCall",
    "Mode",
    "RecordedRequest",
    "ToolCallsReply",
    "completion_tokens_for",
    "prompt_tokens_for",
    "unused_port",
]


class Headers(dict[str, str]):
    """A dict of request headers with case-insensitive lookups (keys stored lower-case)."""

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key.lower() if isinstance(key, str) else key)

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: Headers
    body: dict[str, Any] | None  # parsed JSON; None if the body was not a JSON object
    raw_body: bytes = field(repr=False)


def unused_port() -> int:
    """A loopback port nothing listens on (bound then closed): connecting is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prompt_tokens_for(body: dict[str, Any]) -> int:
    """The fake's deterministic ``prompt_tokens``: tokens of every message plus the
    OpenAI-style overhead (4 per message, 3 for the reply priming). Deliberately
    differs from the client's fallback (plain sum) so tests can tell which was used."""
    messages = body.get("messages") or []
    total = 3
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        total += 4 + count_tokens(content if isinstance(content, str) else "")
    return total


def completion_tokens_for(reply: Answer) -> int:
    """The fake's ``completion_tokens`` for ``reply``: the tokens of its text (and of its
    calls' names and arguments)."""
    if isinstance(reply, ToolCallsReply):
        return count_tokens(reply.content) + sum(
            count_tokens(c.name) + count_tokens(c.arguments_text()) for c in reply.calls
        )
    return count_tokens(reply)


def _call_ids(reply: ToolCallsReply) -> list[str]:
    return [call.id if call.id is not None else f"call_{i}" for i, call in enumerate(reply.calls)]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (timeouts, cut streams) are expected; keep stderr quiet.
        self.fake._record_error()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    server_version = "FakeLLM/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        return

    # -- routing ----------------------------------------------------------------------

    def do_GET(self) -> None:
        fake = self.server.fake
        fake._record(self._recorded(b""))
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": FAKE_MODEL_ID}]})
        else:
            self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        request = self._recorded(raw)
        fake._record(request)
        if not self.path.split("?", 1)[0].endswith("/v1/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        if request.body is None:
            self._send_json(400, {"error": {"message": "body is not a JSON object"}})
            return
        self._answer(fake, request)

    def _recorded(self, raw: bytes) -> RecordedRequest:
        headers = Headers({k.lower(): v for k, v in self.headers.items()})
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        body = parsed if isinstance(parsed, dict) else None
        return RecordedRequest(self.command, self.path, headers, body, raw)

    # -- behaviour ----------------------------------------------------------------------

    def _answer(self, fake: FakeLLMServer, request: RecordedRequest) -> None:
        body = request.body or {}
        mode = fake.mode
        stream = body.get("stream") is True
        if fake._sleep(fake._latency()):
            return  # server stopping
        if mode == "timeout":
            if fake._sleep(fake.timeout_delay):
                return  # server stopping
            mode = "ok"
        elif mode == "slow_stream" and not stream and fake._sleep(fake.stream_delay):
            return
        if mode in ("http_401", "http_403", "http_429", "http_500"):
            self._send_http_error(fake, request, int(mode.removeprefix("http_")))
        elif mode == "malformed_json":
            self._send_raw(200, "application/json", b'{"id": "chatcmpl-fake", "choices": [{"mes')
        elif mode == "missing_choices":
            self._send_json(200, {"id": "chatcmpl-fake", "object": "chat.completion"})
        elif mode == "malformed_tool_calls" and not stream:
            broken = {"role": "assistant", "content": None, "tool_calls": {"not": "a list"}}
            choice = {"index": 0, "message": broken, "finish_reason": "tool_calls"}
            self._send_json(200, {"id": "chatcmpl-fake", "choices": [choice]})
        elif stream:
            self._send_stream(fake, request, mode)
        elif mode == "malformed_stream":
            self._send_raw(200, "application/json", b"data: {not json\n\n")
        else:
            reply = fake._reply_for(body)
            message: dict[str, Any] = {"role": "assistant", "content": reply}
            finish = "stop"
            if isinstance(reply, ToolCallsReply):
                finish = "tool_calls"
                message = {
                    "role": "assistant",
                    "content": reply.content or None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments_text()},
                        }
                        for call_id, call in zip(_call_ids(reply), reply.calls, strict=True)
                    ],
                }
            payload: dict[str, Any] = {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", FAKE_MODEL_ID),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            }
            if mode != "no_usage":
                payload["usage"] = fake._usage(body, reply)
            self._send_json(200, payload)

    def _error_message(self, fake: FakeLLMServer, request: RecordedRequest, text: str) -> str:
        if not fake.echo_auth_in_error:
            return text
        auth = request.headers.get("authorization", "")
        key = auth.removeprefix("Bearer ").strip()
        return f"{text}. Incorrect API key provided: {key}. Authorization header was: {auth}"

    def _send_http_error(self, fake: FakeLLMServer, request: RecordedRequest, status: int) -> None:
        kinds = {
            401: ("invalid_api_key", "Invalid authentication"),
            403: ("permission_denied", "Access denied"),
            429: ("rate_limit_exceeded", "Rate limit reached"),
            500: ("server_error", "Internal server error"),
        }
        kind, text = kinds[status]
        message = self._error_message(fake, request, text)
        extra = {"Retry-After": "1"} if status == 429 else {}
        self._send_json(status, {"error": {"message": message, "type": kind, "code": kind}}, extra)

    def _send_stream(self, fake: FakeLLMServer, request: RecordedRequest, mode: str) -> None:
        body = request.body or {}
        reply = fake._reply_for(body)
        model = body.get("model", FAKE_MODEL_ID)
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        size = max(1, fake.chunk_size)
        text = reply.content if isinstance(reply, ToolCallsReply) else reply
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        nl = "\r\n" if fake.crlf else "\n"

        def data(obj: object) -> str:
            return f"data: {json.dumps(obj, ensure_ascii=False)}{nl}{nl}"

        # The answer's body: content pieces, then the tool-call fragments.
        body_chunks = [chunk({"content": p}) for p in pieces]
        finish = "stop"
        if isinstance(reply, ToolCallsReply):
            finish = "tool_calls"
            body_chunks += [
                chunk({"tool_calls": [fragment]})
                for fragment in self._tool_fragments(reply, size, fake.tool_call_style)
            ]
        events = [f": keep-alive{nl}{nl}", data(chunk({"role": "assistant", "content": ""}))]
        terminate = True
        if mode == "malformed_stream":
            events += [
                f"this is not an SSE line{nl}",
                f"event: garbage{nl}{nl}",
                f'data: {{"choices": [{{"delta": {{"content": "Hel{nl}{nl}',
                f"data: [DONE]{nl}{nl}",
            ]
        elif mode == "stream_no_done":
            events += [data(c) for c in body_chunks[: fake.no_done_content_chunks]]
            terminate = False
        elif mode == "malformed_tool_calls":
            events += [
                data(chunk({"tool_calls": [{"index": "first", "function": {"name": 7}}]})),
                data(chunk({}, "tool_calls")),
                f"data: [DONE]{nl}{nl}",
            ]
        elif mode == "stream_error_object":
            message = self._error_message(fake, request, "The model is overloaded")
            events += [
                data(chunk({"content": pieces[0] if pieces else "x"})),
                data({"error": {"message": message, "type": "server_error", "code": 500}}),
                f"data: [DONE]{nl}{nl}",
            ]
        else:
            events += [data(c) for c in body_chunks]
            events.append(data(chunk({"content": None})))  # content may be null
            events.append(data(chunk({}, finish)))  # ... or absent
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and options.get("include_usage") is True
            if mode != "no_usage" and include_usage:
                usage_chunk = chunk({})
                usage_chunk["choices"] = []
                usage_chunk["usage"] = fake._usage(body, reply)
                events.append(data(usage_chunk))
            events.append(f"data: [DONE]{nl}{nl}")

        encoded = [e.encode("utf-8") for e in events]
        if fake.fragment_size:
            joined = b"".join(encoded)
            step = fake.fragment_size
            encoded = [joined[i : i + step] for i in range(0, len(joined), step)]

        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        for index, piece in enumerate(encoded):
            if index and mode == "slow_stream" and fake._sleep(fake.stream_delay):
                return
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        if terminate:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        else:
            # Cut the connection without the terminating chunk.
            self.connection.shutdown(socket.SHUT_RDWR)

    @staticmethod
    def _tool_fragments(
        reply: ToolCallsReply, size: int, style: ToolCallStyle
    ) -> list[dict[str, Any]]:
        """The ``delta.tool_calls`` items of a streamed tool-call answer."""
        calls = list(zip(_call_ids(reply), reply.calls, strict=True))
        if style in ("whole", "no_index"):
            fragments = []
            for index, (call_id, call) in enumerate(calls):
                item: dict[str, Any] = {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                }
                if style == "whole":
                    item["index"] = index
                fragments.append(item)
            return fragments
        per_call: list[list[dict[str, Any]]] = []
        for index, (call_id, call) in enumerate(calls):
            head = {
                "index": index,
                "id": call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            arguments = call.arguments_text()
            tail = [
                {"index": index, "function": {"arguments": arguments[i : i + size]}}
                for i in range(0, len(arguments), size)
            ]
            per_call.append([head, *tail])
        if style == "fragments":
            return [fragment for fragments in per_call for fragment in fragments]
        interleaved = []  # "interleave": round-robin over the calls' fragments
        for position in range(max((len(f) for f in per_call), default=0)):
            interleaved += [f[position] for f in per_call if position < len(f)]
        return interleaved

    # -- low level --------------------------------------------------------------------

    def _send_json(self, status: int, payload: object, extra: dict[str, str] | None = None) -> None:
        raw = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self._send_raw(status, "application/json", raw, extra)

    def _send_raw(
        self, status: int, content_type: str, raw: bytes, extra: dict[str, str] | None = None
    ) -> None:
        self.close_connection = True
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("Connection", "close")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)
        self.wfile.flush()


class FakeLLMServer:
    """A threaded fake OpenAI-compatible server on 127.0.0.1 (see the module doc)."""

    def __init__(
        self,
        *,
        reply: Reply = DEFAULT_REPLY,
        mode: Mode = "ok",
        chunk_size: int = 3,
        stream_delay: float = 0.2,
        timeout_delay: float = 5.0,
        echo_auth_in_error: bool = False,
        no_done_content_chunks: int = 0,
        fragment_size: int | None = None,
        crlf: bool = False,
        usage: tuple[int, int] | None = None,
        script: Sequence[Reply] = (),
        tool_call_style: ToolCallStyle = "fragments",
        latency: float | tuple[float, float] = 0.0,
        seed: int = 0,
    ) -> None:
        self._defaults: dict[str, Any] = {
            "reply": reply,
            "mode": mode,
            "chunk_size": chunk_size,
            "stream_delay": stream_delay,
            "timeout_delay": timeout_delay,
            "echo_auth_in_error": echo_auth_in_error,
            "no_done_content_chunks": no_done_content_chunks,
            "fragment_size": fragment_size,
            "crlf": crlf,
            "usage": usage,
            "script": list(script),
            "tool_call_style": tool_call_style,
            "latency": latency,
        }
        # Behaviour, read by the handler threads at request time.
        self.reply: Reply = reply
        self.mode: Mode = mode
        self.chunk_size = chunk_size  # reply characters per stream chunk
        self.stream_delay = stream_delay  # seconds between pieces in "slow_stream"
        self.timeout_delay = timeout_delay  # seconds of silence in "timeout"
        self.echo_auth_in_error = echo_auth_in_error
        self.no_done_content_chunks = no_done_content_chunks  # for "stream_no_done"
        self.fragment_size = fragment_size  # re-split the SSE bytes into N-byte writes
        self.crlf = crlf  # CRLF line endings in the SSE stream
        self.usage = usage  # fixed (prompt_tokens, completion_tokens) instead of computed
        self.script: list[Reply] = list(script)  # replies answered in order, then `reply`
        self.tool_call_style: ToolCallStyle = tool_call_style
        self.latency = latency  # seconds before every chat answer, or a (low, high) range
        self._random = random.Random(seed)

        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._errors = 0
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        if self._server is not None:
            return self
        self._stopping.clear()
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-llm-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()  # wakes handlers sleeping in "timeout" / "slow_stream"
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- addresses ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeLLMServer is not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (no trailing slash)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- configuration ------------------------------------------------------------------

    def set_mode(self, mode: Mode, **options: Any) -> None:
        """Switch behaviour; ``options`` set attributes (``reply``, ``stream_delay``...)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        for name in options:
            if name not in self._defaults or name == "mode":
                raise TypeError(f"unknown FakeLLMServer option {name!r}")
        self.mode = mode
        for name, value in options.items():
            setattr(self, name, value)

    def reset(self) -> None:
        """Forget recorded requests and restore the constructor's behaviour."""
        for name, value in self._defaults.items():
            setattr(self, name, list(value) if isinstance(value, list) else value)
        with self._lock:
            self._requests.clear()
            self._errors = 0

    # -- recorded traffic -------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the requests received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            if not self._requests:
                raise AssertionError("the fake LLM server received no request")
            return self._requests[-1]

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The chat-completion requests received so far, oldest first."""
        return [r for r in self.requests if r.method == "POST" and r.body is not None]

    @property
    def handler_errors(self) -> int:
        """How many handler calls ended in an exception (mostly clients hanging up)."""
        with self._lock:
            return self._errors

    def usage_for(self, body: dict[str, Any], reply: Answer) -> dict[str, int]:
        """The ``usage`` object the fake sends for this request body and reply."""
        return self._usage(body, reply)

    # -- used by the handler ------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _record_error(self) -> None:
        with self._lock:
            self._errors += 1

    def _reply_for(self, body: dict[str, Any]) -> Answer:
        with self._lock:
            reply = self.script.pop(0) if self.script else self.reply
        return reply(body) if callable(reply) else reply

    def _latency(self) -> float:
        latency = self.latency
        if isinstance(latency, tuple):
            with self._lock:
                return self._random.uniform(*latency)
        return latency

    def _usage(self, body: dict[str, Any], reply: Answer) -> dict[str, int]:
        if self.usage is not None:
            prompt, completion = self.usage
        else:
            prompt, completion = prompt_tokens_for(body), completion_tokens_for(reply)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    def _sleep(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless the server stops first; True when stopping."""
        return self._stopping.wait(seconds)
