"""OpenAICompatClient against a real loopback HTTP fake (tests/fakellm.py)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from agents.providers.base import (
    ERROR_AUTH,
    ERROR_BAD_RESPONSE,
    ERROR_HTTP,
    ERROR_TIMEOUT,
    ERROR_UNREACHABLE,
    Completion,
    Delta,
    LLMClient,
    Message,
    ProviderError,
    StreamEvent,
)
from agents.providers.openai_compat import OpenAICompatClient, SSEDecoder, redact
from agents.tokens import count_tokens
from tests import fakellm_fixtures
from tests.fakellm import (
    DEFAULT_REPLY,
    FakeLLMServer,
    Mode,
    completion_tokens_for,
    prompt_tokens_for,
    unused_port,
)

fake_llm = fakellm_fixtures.fake_llm

KEY = "sk-test-SECRET-4f9a2c7e1b"
MESSAGES = [
    Message(role="system", content="You are a patient tutor."),
    Message(role="user", content="什么是光合作用？"),
]


def make_client(
    base_url: str,
    *,
    api_key: str | None = None,
    timeout: float = 2.0,
    max_output_tokens: int | None = None,
) -> OpenAICompatClient:
    return OpenAICompatClient(
        name="fake",
        base_url=base_url,
        model="qwen2.5:7b",
        api_key=api_key,
        timeout=timeout,
        max_output_tokens=max_output_tokens,
    )


def collect(events: Iterator[StreamEvent]) -> tuple[list[str], Completion]:
    items = list(events)
    assert items, "the stream yielded nothing"
    *deltas, last = items
    assert isinstance(last, Completion)
    assert all(isinstance(d, Delta) for d in deltas)
    return [d.text for d in deltas if isinstance(d, Delta)], last


def fallback_input_tokens() -> int:
    return sum(count_tokens(m.content) for m in MESSAGES)


# -- happy paths ------------------------------------------------------------------------


def test_complete_returns_text_and_endpoint_usage(fake_llm: FakeLLMServer) -> None:
    client: LLMClient = make_client(fake_llm.base_url)
    result = client.complete(MESSAGES, purpose="compress")

    request = fake_llm.last_request
    assert request.body is not None
    assert result == Completion(
        text=DEFAULT_REPLY,
        input_tokens=prompt_tokens_for(request.body),
        output_tokens=completion_tokens_for(DEFAULT_REPLY),
        finish_reason="stop",
    )
    # The fake's prompt count differs from the fallback: the endpoint's value was used.
    assert result.input_tokens != fallback_input_tokens()

    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "qwen2.5:7b"
    assert request.body["messages"] == [
        {"role": "system", "content": "You are a patient tutor."},
        {"role": "user", "content": "什么是光合作用？"},
    ]
    assert request.body["stream"] is False
    assert "stream_options" not in request.body
    assert "max_tokens" not in request.body
    assert "authorization" not in request.headers
    assert request.headers["Content-Type"].startswith("application/json")


def test_bearer_header_only_with_a_key(fake_llm: FakeLLMServer) -> None:
    make_client(fake_llm.base_url, api_key=KEY).complete(MESSAGES)
    assert fake_llm.last_request.headers["Authorization"] == f"Bearer {KEY}"

    make_client(fake_llm.base_url, api_key="").complete(MESSAGES)
    assert "Authorization" not in fake_llm.last_request.headers

    list(make_client(fake_llm.base_url, api_key=KEY).stream(MESSAGES))
    assert fake_llm.last_request.headers["Authorization"] == f"Bearer {KEY}"


def test_max_output_tokens_is_sent(fake_llm: FakeLLMServer) -> None:
    make_client(fake_llm.base_url, max_output_tokens=256).complete(MESSAGES)
    body = fake_llm.last_request.body
    assert body is not None
    assert body["max_tokens"] == 256


def test_stream_yields_deltas_then_one_completion(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("ok", chunk_size=3)
    pieces, completion = collect(make_client(fake_llm.base_url).stream(MESSAGES))

    assert pieces == [DEFAULT_REPLY[i : i + 3] for i in range(0, len(DEFAULT_REPLY), 3)]
    assert completion.text == DEFAULT_REPLY
    request = fake_llm.last_request
    assert request.body is not None
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.body["messages"][1] == {"role": "user", "content": "什么是光合作用？"}
    assert request.headers["Accept"] == "text/event-stream"
    assert completion.input_tokens == prompt_tokens_for(request.body)
    assert completion.output_tokens == completion_tokens_for(DEFAULT_REPLY)


@pytest.mark.parametrize("crlf", [False, True])
@pytest.mark.parametrize("fragment_size", [None, 1, 5, 64])
def test_stream_survives_any_split(
    fake_llm: FakeLLMServer, crlf: bool, fragment_size: int | None
) -> None:
    reply = "光合作用是植物利用光能，把二氧化碳和水变成有机物。"
    fake_llm.set_mode("ok", reply=reply, crlf=crlf, fragment_size=fragment_size, chunk_size=2)
    pieces, completion = collect(make_client(fake_llm.base_url).stream(MESSAGES))
    assert "".join(pieces) == reply
    assert all(pieces)
    assert completion.text == reply


def test_reply_may_be_computed_from_the_request(fake_llm: FakeLLMServer) -> None:
    fake_llm.reply = lambda body: "echo: " + body["messages"][-1]["content"]
    assert make_client(fake_llm.base_url).complete(MESSAGES).text == "echo: 什么是光合作用？"
    _, completion = collect(make_client(fake_llm.base_url).stream(MESSAGES))
    assert completion.text == "echo: 什么是光合作用？"


def test_fixed_usage_from_the_endpoint(fake_llm: FakeLLMServer) -> None:
    fake_llm.usage = (111, 222)
    result = make_client(fake_llm.base_url).complete(MESSAGES)
    assert (result.input_tokens, result.output_tokens) == (111, 222)
    _, completion = collect(make_client(fake_llm.base_url).stream(MESSAGES))
    assert (completion.input_tokens, completion.output_tokens) == (111, 222)


def test_usage_falls_back_to_local_counting(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("no_usage")
    expected = (fallback_input_tokens(), count_tokens(DEFAULT_REPLY))

    result = make_client(fake_llm.base_url).complete(MESSAGES)
    assert result.text == DEFAULT_REPLY
    assert (result.input_tokens, result.output_tokens) == expected

    _, completion = collect(make_client(fake_llm.base_url).stream(MESSAGES))
    assert completion.text == DEFAULT_REPLY
    assert (completion.input_tokens, completion.output_tokens) == expected


@pytest.mark.parametrize("suffix", ["", "/"])
def test_base_url_with_or_without_trailing_slash(fake_llm: FakeLLMServer, suffix: str) -> None:
    client = make_client(fake_llm.base_url + suffix)
    assert client.complete(MESSAGES).text == DEFAULT_REPLY
    collect(client.stream(MESSAGES))
    assert [r.path for r in fake_llm.requests] == ["/v1/chat/completions"] * 2


def test_stream_tolerates_slow_chunks_within_the_per_read_timeout(
    fake_llm: FakeLLMServer,
) -> None:
    # 8 SSE pieces, 0.12 s apart: ~0.85 s in total, above the 0.5 s timeout, which
    # applies to each read, not to the whole stream.
    fake_llm.set_mode("slow_stream", reply="abcdef", chunk_size=3, stream_delay=0.12)
    started = time.monotonic()
    pieces, completion = collect(make_client(fake_llm.base_url, timeout=0.5).stream(MESSAGES))
    assert time.monotonic() - started > 0.5
    assert pieces == ["abc", "def"]
    assert completion.text == "abcdef"


def test_stream_cut_after_content_is_an_error_not_a_truncated_answer(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.set_mode("stream_no_done", reply="abcdefghi", chunk_size=3, no_done_content_chunks=2)
    pieces: list[str] = []
    with pytest.raises(ProviderError) as caught:
        for event in make_client(fake_llm.base_url).stream(MESSAGES):
            if isinstance(event, Delta):
                pieces.append(event.text)
    assert pieces == ["abc", "def"]
    assert caught.value.code == ERROR_BAD_RESPONSE


# -- errors -------------------------------------------------------------------------------


COMMON_ERRORS: list[tuple[Mode, str]] = [
    ("http_401", ERROR_AUTH),
    ("http_403", ERROR_AUTH),
    ("http_429", ERROR_HTTP),
    ("http_500", ERROR_HTTP),
    ("malformed_json", ERROR_BAD_RESPONSE),
    ("missing_choices", ERROR_BAD_RESPONSE),
    ("malformed_stream", ERROR_BAD_RESPONSE),
]
STREAM_ONLY_ERRORS: list[tuple[Mode, str]] = [
    ("stream_no_done", ERROR_BAD_RESPONSE),
    ("stream_error_object", ERROR_BAD_RESPONSE),
]


@pytest.mark.parametrize(("mode", "code"), COMMON_ERRORS)
def test_complete_error_modes(fake_llm: FakeLLMServer, mode: Mode, code: str) -> None:
    fake_llm.set_mode(mode)
    with pytest.raises(ProviderError) as info:
        make_client(fake_llm.base_url, api_key=KEY).complete(MESSAGES)
    assert info.value.code == code


@pytest.mark.parametrize(("mode", "code"), COMMON_ERRORS + STREAM_ONLY_ERRORS)
def test_stream_error_modes(fake_llm: FakeLLMServer, mode: Mode, code: str) -> None:
    fake_llm.set_mode(mode)
    with pytest.raises(ProviderError) as info:
        list(make_client(fake_llm.base_url, api_key=KEY).stream(MESSAGES))
    assert info.value.code == code


def test_http_error_detail_has_status_and_body(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("http_500")
    with pytest.raises(ProviderError) as info:
        make_client(fake_llm.base_url).complete(MESSAGES)
    assert "HTTP 500" in info.value.detail
    assert "Internal server error" in info.value.detail
    assert info.value.retryable


def test_error_object_after_content_raises_mid_stream(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("stream_error_object", reply="abcdef", chunk_size=3)
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        for event in make_client(fake_llm.base_url).stream(MESSAGES):
            seen.append(event)
    assert info.value.code == ERROR_BAD_RESPONSE
    assert seen == [Delta("abc")]
    assert "overloaded" in info.value.detail


def test_refused_connection_is_unreachable() -> None:
    client = make_client(f"http://127.0.0.1:{unused_port()}/v1")
    with pytest.raises(ProviderError) as info:
        client.complete(MESSAGES)
    assert info.value.code == ERROR_UNREACHABLE
    assert info.value.retryable
    with pytest.raises(ProviderError) as info:
        list(client.stream(MESSAGES))
    assert info.value.code == ERROR_UNREACHABLE


def test_dns_failure_is_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_dns(*args: object, **kwargs: object) -> socket.socket:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "create_connection", no_dns)
    with pytest.raises(ProviderError) as info:
        make_client("http://llm.invalid/v1").complete(MESSAGES)
    assert info.value.code == ERROR_UNREACHABLE


def test_connection_reset_is_unreachable() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def accept_and_hang_up() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.close()

    thread = threading.Thread(target=accept_and_hang_up, daemon=True)
    thread.start()
    try:
        with pytest.raises(ProviderError) as info:
            make_client(f"http://127.0.0.1:{port}/v1").complete(MESSAGES)
        assert info.value.code == ERROR_UNREACHABLE
    finally:
        thread.join(timeout=2)
        listener.close()


def test_timeout_before_the_answer(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("timeout", timeout_delay=5.0)
    client = make_client(fake_llm.base_url, timeout=0.4)
    started = time.monotonic()
    with pytest.raises(ProviderError) as info:
        client.complete(MESSAGES)
    assert info.value.code == ERROR_TIMEOUT
    with pytest.raises(ProviderError) as info:
        list(client.stream(MESSAGES))
    assert info.value.code == ERROR_TIMEOUT
    assert info.value.retryable
    assert time.monotonic() - started < 2.5


def test_timeout_between_stream_chunks(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("slow_stream", stream_delay=3.0)
    started = time.monotonic()
    with pytest.raises(ProviderError) as info:
        list(make_client(fake_llm.base_url, timeout=0.3).stream(MESSAGES))
    assert info.value.code == ERROR_TIMEOUT
    assert time.monotonic() - started < 2.0


# -- the key never leaks ------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["http_401", "http_403", "http_429", "http_500"])
def test_key_never_in_http_error_details(fake_llm: FakeLLMServer, mode: Mode) -> None:
    fake_llm.set_mode(mode, echo_auth_in_error=True)
    client = make_client(fake_llm.base_url, api_key=KEY)
    for call in (lambda: client.complete(MESSAGES), lambda: list(client.stream(MESSAGES))):
        with pytest.raises(ProviderError) as info:
            call()
        exc = info.value
        assert "Incorrect API key" in exc.detail  # the echoed body did reach the detail
        for text in (str(exc), exc.detail, repr(exc), repr(exc.args)):
            assert KEY not in text
            assert "SECRET" not in text
            assert f"Bearer {KEY[:8]}" not in text


def test_key_never_in_stream_error_object(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_mode("stream_error_object", echo_auth_in_error=True)
    with pytest.raises(ProviderError) as info:
        list(make_client(fake_llm.base_url, api_key=KEY).stream(MESSAGES))
    assert info.value.code == ERROR_BAD_RESPONSE
    assert "Authorization header was" in info.value.detail
    assert "SECRET" not in str(info.value)
    assert "SECRET" not in info.value.detail


def test_client_repr_and_constructor_errors_hide_the_key() -> None:
    client = make_client("http://127.0.0.1:1/v1/", api_key=KEY)
    assert KEY not in repr(client)
    assert client.endpoint == "http://127.0.0.1:1/v1/chat/completions"
    with pytest.raises(ValueError) as info:
        make_client("http://127.0.0.1:1/v1", api_key="sk-SECRET\nX-Evil: 1")
    assert "SECRET" not in str(info.value)
    with pytest.raises(ValueError):
        make_client("127.0.0.1:1/v1")


def test_redact() -> None:
    assert redact(f"key={KEY}; again {KEY}", KEY) == "key=***; again ***"
    assert "SECRET" not in redact(f"cut here: {KEY[:12]}", KEY)
    assert redact("Authorization: Bearer abc.def", None) == "Authorization: Bearer ***"
    assert redact('{"authorization": "token-xyz"}', None) == '{"authorization": "***"}'
    key = 'sk-"quoted"/slash'
    assert "quoted" not in redact('{"msg": "sk-\\"quoted\\"/slash"}', key)


# -- SSE decoding -------------------------------------------------------------------------


def test_sse_decoder_handles_splits_anywhere() -> None:
    stream = (
        ": keep-alive\r\n\r\n"
        'data: {"a": "光"}\r\n\r\n'
        "event: ping\n"
        "id: 7\n"
        'data:{"b": 1}\n\n'
        "data: line one\n"
        "data: line two\n\n"
        "data: [DONE]"
    ).encode()
    expected = ['{"a": "光"}', '{"b": 1}', "line one\nline two", "[DONE]"]
    for cut in range(len(stream) + 1):
        decoder = SSEDecoder()
        out = decoder.feed(stream[:cut]) + decoder.feed(stream[cut:]) + decoder.close()
        assert out == expected, cut
    decoder = SSEDecoder()
    out = [p for byte in stream for p in decoder.feed(bytes([byte]))] + decoder.close()
    assert out == expected


def test_sse_decoder_rejects_endless_lines() -> None:
    decoder = SSEDecoder(max_line=16)
    with pytest.raises(ValueError):
        decoder.feed(b"data: " + b"x" * 32)
