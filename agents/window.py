"""The L0 working window: a hard cap on what one provider call is sent.

Pure. The oldest non-system content is dropped first; system messages and the current
(last) user message are never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.providers.base import Message
from agents.tokens import count_tokens


class WindowOverflow(ValueError):
    """The protected messages alone exceed the window; the run cannot be sent."""


@dataclass(frozen=True, slots=True)
class Window:
    messages: list[Message]
    tokens: int
    chars: int
    dropped: int


def fit_window(messages: list[Message], *, max_tokens: int, max_chars: int) -> Window:
    """Drop the oldest unprotected messages until both caps hold.

    Protected: every ``system`` message and the last ``user`` message. Raises
    :class:`WindowOverflow` if the protected messages alone exceed a cap.
    """
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    protected = {i for i, m in enumerate(messages) if m.role == "system" or i == last_user}
    tokens = [count_tokens(m.content) for m in messages]
    chars = [len(m.content) for m in messages]
    keep = [True] * len(messages)
    total_tokens, total_chars = sum(tokens), sum(chars)
    dropped = 0
    for i in range(len(messages)):
        if total_tokens <= max_tokens and total_chars <= max_chars:
            break
        if i in protected:
            continue
        keep[i] = False
        total_tokens -= tokens[i]
        total_chars -= chars[i]
        dropped += 1
    if total_tokens > max_tokens or total_chars > max_chars:
        raise WindowOverflow(
            f"protected messages need {total_tokens} tokens / {total_chars} chars; "
            f"cap is {max_tokens} / {max_chars}"
        )
    kept = [m for m, k in zip(messages, keep, strict=True) if k]
    return Window(messages=kept, tokens=total_tokens, chars=total_chars, dropped=dropped)
