"""Rendering of the injected sections within token budgets: pure, Django-free.

Every history text is sanitised (``memory.sanitizer``) before it is placed inside its
boundary. Budgets are tokens counted with ``agents.tokens``; a rendered section never
exceeds the budget it was granted, header and footer included.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agents.tokens import (
    count_tokens,
    count_tokens_many,
    map_encoded,
    truncate_tokens,
)
from memory import boundary
from memory.sanitizer import sanitize_history

ELLIPSIS = "…"
# Below this many tokens a text slot is not worth rendering (a marker with one word).
_MIN_SLOT = 4


# A token is rarely longer than this many characters; texts are cut to cap x this before
# sanitising, so a 20,000-character turn does not cost a full sanitiser pass.
_CHARS_PER_TOKEN_BOUND = 8


def _prepared(text: str, cap: int, *, keep: str = "head") -> str:
    limit = max(cap, 0) * _CHARS_PER_TOKEN_BOUND
    if len(text) > limit:
        text = text[:limit] if keep == "head" else text[-limit:]
    return sanitize_history(text).strip()


@dataclass(frozen=True, slots=True)
class Turn:
    """One finished run of the thread, oldest first. ``assistant`` is None if it failed."""

    run_id: int
    user: str
    assistant: str | None


@dataclass(frozen=True, slots=True)
class Rendered:
    text: str
    tokens: int
    ids: tuple[int, ...] = ()
    truncated: bool = False
    parts: dict[str, int] = field(default_factory=dict)


EMPTY = Rendered(text="", tokens=0)


@dataclass
class _Slot:
    key: str
    text: str
    cap_group: str
    keep: str  # which end survives truncation: "head" or "tail"
    priority: int  # 0 is filled first and cut last
    granted: int = 0
    tokens: int = -1
    _cache: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tokens = count_tokens(self.text)

    def render(self) -> str:
        """The text cut to ``granted`` tokens (memoised: assembling re-renders often)."""
        if self.granted <= 0:
            return ""
        if self.tokens <= self.granted:
            return self.text
        if self.granted not in self._cache:
            room = self.granted - count_tokens(ELLIPSIS)
            cut = truncate_tokens(self.text, room, keep=self.keep) if room > 0 else ""
            if cut:
                cut = cut + ELLIPSIS if self.keep == "head" else ELLIPSIS + cut
            self._cache[self.granted] = cut
        return self._cache[self.granted]


def render_thread(
    *,
    summary: str,
    turns: list[Turn],
    budget: int,
    summary_cap: int,
    recent_cap: int,
) -> Rendered:
    """The ``[本会话前情]`` section of design v2 §2.2, within ``budget`` tokens.

    Fill priority when short: the latest user turn, the latest assistant turn, older
    turns, then the summary; older text is cut first. The header and footer are never
    cut: if they do not fit with the latest user turn, the section is omitted.
    """
    summary = _prepared(summary, summary_cap, keep="tail")
    if not summary and not turns:
        return EMPTY

    slots: list[_Slot] = []
    order: list[tuple[str, str]] = []  # (kind, slot key or literal) in reading order
    for position, turn in enumerate(turns):
        age = len(turns) - 1 - position  # 0 = latest
        user_key = f"u{age}"
        user_text = _prepared(turn.user, recent_cap)
        slots.append(_Slot(user_key, user_text, "recent", "head", priority=2 * age))
        order.append(("user", user_key))
        if turn.assistant is None:
            order.append(("failed", ""))
        else:
            key = f"a{age}"
            text = _prepared(turn.assistant, recent_cap)
            slots.append(_Slot(key, text, "recent", "head", priority=2 * age + 1))
            order.append(("assistant", key))
    if summary:
        # The summary is older than every verbatim turn: it is cut first.
        slots.append(_Slot("summary", summary, "summary", "tail", priority=10_000))
    # Newest first, a turn's user text before its reply.
    slots.sort(key=lambda slot: slot.priority)
    by_key = {slot.key: slot for slot in slots}

    def assemble() -> list[str]:
        # Every line starts with a label, a mark or "[" (never whitespace): counted line
        # by line (count_lines), a re-assembly re-counts only the lines that changed.
        lines = [boundary.THREAD_HEADER]
        summary_slot = by_key.get("summary")
        if summary_slot is not None and summary_slot.render():
            lines.append(boundary.SUMMARY_LABEL + summary_slot.render())
        if turns:
            lines.append(boundary.RECENT_LABEL)
        for kind, key in order:
            if kind == "failed":
                lines.append(f"{boundary.ASSISTANT_MARK} {boundary.FAILED_TURN}")
                continue
            mark = boundary.USER_MARK if kind == "user" else boundary.ASSISTANT_MARK
            body = by_key[key].render()
            if body or kind == "user":
                lines.append(f"{mark} {body}".rstrip())
        lines.append(boundary.THREAD_FOOTER)
        return lines

    frame_tokens = count_lines(assemble())  # every slot at zero: the fixed cost
    available = budget - frame_tokens
    if available < _MIN_SLOT and turns:
        return EMPTY
    caps = {"recent": recent_cap, "summary": summary_cap}
    for slot in slots:
        want = slot.tokens
        grant = min(want, available, caps[slot.cap_group])
        if grant < min(want, _MIN_SLOT):
            grant = 0
        slot.granted = grant
        available -= grant
        caps[slot.cap_group] -= grant

    # Joining pieces can shift a token or two at the seams; shave the lowest priority.
    lines = assemble()
    tokens = count_lines(lines)
    while tokens > budget:
        victim = next((s for s in reversed(slots) if s.granted > 0), None)
        if victim is None:
            return EMPTY
        victim.granted = max(0, victim.granted - (tokens - budget) - 1)
        if victim.granted < _MIN_SLOT:
            victim.granted = 0
        lines = assemble()
        tokens = count_lines(lines)
    text = "\n".join(lines)
    if not any(s.granted for s in slots) and not any(k == "failed" for k, _ in order):
        return EMPTY

    truncated = any(s.granted < s.tokens for s in slots)
    summary_slot = by_key.get("summary")
    parts = {
        "summary": count_tokens(summary_slot.render()) if summary_slot else 0,
        "recent": sum(count_tokens(s.render()) for s in slots if s.cap_group == "recent"),
    }
    return Rendered(
        text=text,
        tokens=tokens,
        ids=tuple(t.run_id for t in turns),
        truncated=truncated,
        parts=parts,
    )


@dataclass(frozen=True, slots=True)
class Item:
    """One line of a list section (a fact, a recall hit), most important first."""

    id: int
    text: str


@dataclass(frozen=True, slots=True)
class Line:
    """A rendered line of a list section: ``- <text>``, sanitised and cut to its cap;
    ``tokens`` is what it adds to a section, the line break after it included
    (:func:`count_line`)."""

    id: int
    text: str
    tokens: int
    cut: bool = False


def count_line(line: str) -> int:
    """The tokens ``line`` adds to a text, with the line break after it.

    A text of lines that each start with a non-whitespace character counts exactly as
    the sum of its lines' ``count_line`` (the last line's ``count_tokens``): the encoder
    splits its input into pieces before merging bytes, and no piece runs from a line
    break into the non-whitespace text after it (cl100k's and o200k's patterns), so a
    section is counted line by line, never as a whole
    (``tests/memory/test_render_budget.py`` holds the property).
    """
    return count_tokens(line + "\n")


def count_lines(lines: Sequence[str]) -> int:
    """``count_tokens("\\n".join(lines))`` from the lines' own (memoised) counts; every
    line after the first starts with a non-whitespace character (:func:`count_line`)."""
    if not lines:
        return 0
    return sum(count_line(line) for line in lines[:-1]) + count_tokens(lines[-1])


def _line(text: str, item_cap: int | None) -> tuple[str, int, bool]:
    line = list_lines([Item(id=0, text=text)], item_cap=item_cap)[0]
    return line.text, line.tokens, line.cut


# The same stored texts (facts, recalled entries) become the same lines on every run:
# memoised per process, by text and cap (the result depends on nothing else).
_MEMO_LINE_CHARS = 4000
_line_memo = functools.lru_cache(maxsize=4096)(_line)


def list_line(item: Item, *, item_cap: int | None = None) -> Line:
    """One item as a list section shows it (its text sanitised, cut to ``item_cap``)."""
    if len(item.text) <= _MEMO_LINE_CHARS:
        text, tokens, cut = _line_memo(item.text, item_cap)
    else:
        text, tokens, cut = _line(item.text, item_cap)
    return Line(id=item.id, text=text, tokens=tokens, cut=cut)


def list_lines(items: Sequence[Item], *, item_cap: int | None = None) -> list[Line]:
    """``[list_line(item, item_cap=item_cap) for item in items]``, the texts encoded in
    batches (in parallel threads, ``agents.tokens.map_encoded``): the write path's many
    new lines at once, not memoised."""
    bodies = [sanitize_history(item.text).strip() for item in items]
    cut = [False] * len(bodies)
    if item_cap is not None:
        cap = item_cap

        # Each body is counted, and cut if need be, from one encoding.
        def over_cap(tokens: list[int]) -> list[int] | None:
            return tokens if len(tokens) > cap else None

        for i, tokens in enumerate(map_encoded(bodies, over_cap)):
            if tokens is not None:
                bodies[i] = truncate_tokens(bodies[i], cap - 1, tokens=tokens) + ELLIPSIS
                cut[i] = True
    texts = [f"- {body}" for body in bodies]
    counts = count_tokens_many([f"{text}\n" for text in texts])  # count_line, in a batch
    return [
        Line(id=item.id, text=text, tokens=tokens, cut=was_cut)
        for item, text, tokens, was_cut in zip(items, texts, counts, cut, strict=True)
    ]


def render_lines(*, header: str, footer: str, lines: Iterable[Line], budget: int) -> Rendered:
    """Whole lines in priority order while they fit, between ``header`` and ``footer``.

    The section's count is the sum of its lines' (:func:`count_line`; lines and footer
    start with a non-whitespace character), exact without counting the whole again.
    """
    base = count_line(header) + count_tokens(footer)
    if base >= budget:
        return EMPTY
    texts = [header]
    ids: list[int] = []
    truncated = False
    used = base
    for line in lines:
        truncated |= line.cut
        if used + line.tokens > budget:
            truncated = True
            continue
        texts.append(line.text)
        ids.append(line.id)
        used += line.tokens
    if not ids:
        return Rendered(text="", tokens=0, truncated=True)
    texts.append(footer)
    return Rendered(text="\n".join(texts), tokens=used, ids=tuple(ids), truncated=truncated)


def render_list(
    *, header: str, footer: str, items: list[Item], budget: int, item_cap: int | None = None
) -> Rendered:
    """Whole items in priority order while they fit; each item's text is sanitised."""
    if not items or count_tokens(f"{header}\n{footer}") >= budget:
        return EMPTY
    return render_lines(
        header=header,
        footer=footer,
        lines=[list_line(item, item_cap=item_cap) for item in items],
        budget=budget,
    )
