"""The token module and the L0 window: pure properties."""

from __future__ import annotations

import pytest
from django.test import override_settings
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.providers.base import Message
from agents.tokens import count_tokens, encode_tokens, truncate_tokens
from agents.window import WindowOverflow, fit_window

ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)


@settings(max_examples=300)
@given(text=ANY_TEXT, limit=st.integers(0, 120), keep=st.sampled_from(["head", "tail"]))
def test_truncation_fits_and_never_splits_a_character(text: str, limit: int, keep: str) -> None:
    cut = truncate_tokens(text, limit, keep=keep)
    assert count_tokens(cut) <= limit
    assert text.startswith(cut) if keep == "head" else text.endswith(cut)
    cut.encode("utf-8")  # a lone surrogate or half character would fail here
    if count_tokens(text) <= limit:
        assert cut == text


@settings(max_examples=200)
@given(text=ANY_TEXT, limit=st.integers(0, 120), keep=st.sampled_from(["head", "tail"]))
def test_a_text_encoded_once_is_counted_and_cut_as_before(text: str, limit: int, keep: str) -> None:
    tokens = encode_tokens(text)
    assert len(tokens) == count_tokens(text)
    assert truncate_tokens(text, limit, keep=keep, tokens=tokens) == truncate_tokens(
        text, limit, keep=keep
    )


def test_truncation_keeps_as_much_as_fits() -> None:
    text = "出一份数据结构试卷" * 50
    cut = truncate_tokens(text, 40)
    assert 35 <= count_tokens(cut) <= 40
    emoji = "👩‍🏫" * 30  # multi-code-point graphemes, 4-byte characters
    assert count_tokens(truncate_tokens(emoji, 7)) <= 7


def test_an_overridden_encoding_is_used_at_once() -> None:
    # Only cl100k ships offline: an unknown name shows the override is read.
    text = "出一份数据结构试卷，共 3 题 🙂"
    default = count_tokens(text)
    with override_settings(TOKEN_ENCODING="no_such_encoding"), pytest.raises(ValueError):
        count_tokens(text)
    assert count_tokens(text) == default


def test_special_token_text_is_counted_as_plain_text() -> None:
    assert count_tokens("<|endoftext|>") > 1


MESSAGES = st.lists(
    st.tuples(st.sampled_from(["system", "user", "assistant"]), st.text(max_size=400)),
    min_size=1,
    max_size=12,
)


@settings(max_examples=200)
@given(raw=MESSAGES, max_tokens=st.integers(1, 600), max_chars=st.integers(1, 1500))
def test_window_caps_and_protects(
    raw: list[tuple[str, str]], max_tokens: int, max_chars: int
) -> None:
    messages = [Message(role=role, content=text) for role, text in raw]  # type: ignore[arg-type]
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    try:
        window = fit_window(messages, max_tokens=max_tokens, max_chars=max_chars)
    except WindowOverflow:
        protected = [m for i, m in enumerate(messages) if m.role == "system" or i == last_user]
        assert (
            sum(count_tokens(m.content) for m in protected) > max_tokens
            or sum(len(m.content) for m in protected) > max_chars
        )
        return
    assert window.tokens <= max_tokens and window.chars <= max_chars
    assert window.tokens == sum(count_tokens(m.content) for m in window.messages)
    kept = window.messages
    # System messages and the current user message are never dropped.
    assert [m for m in messages if m.role == "system"] == [m for m in kept if m.role == "system"]
    if last_user >= 0:
        assert any(m is messages[last_user] for m in kept)
    # What was dropped is the oldest: kept unprotected messages are a suffix.
    unprotected = [i for i, m in enumerate(messages) if m.role != "system" and i != last_user]
    kept_ids = {id(m) for m in kept}
    flags = [id(messages[i]) in kept_ids for i in unprotected]
    assert flags == sorted(flags)


def test_window_drops_oldest_history_first() -> None:
    history = [Message("user", f"第{i}轮问题" * 50) for i in range(10)]
    messages = [Message("system", "系统"), *history, Message("user", "当前问题")]
    window = fit_window(messages, max_tokens=400, max_chars=100_000)
    assert window.messages[0].content == "系统"
    assert window.messages[-1].content == "当前问题"
    assert window.dropped > 0
    assert window.messages[1] == history[window.dropped]


def test_window_overflow_when_the_protected_part_is_too_big() -> None:
    with pytest.raises(WindowOverflow):
        fit_window(
            [Message("system", "x" * 50), Message("user", "y" * 50)], max_tokens=1000, max_chars=60
        )
