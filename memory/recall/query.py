"""The recall query: the current message plus the conversation it belongs to.

One builder, used by the read path (``context_assemble``), the recall API
(``?thread_id=``) and ``benchmarks/recall_eval.py``, so that what is measured is what
ships. A follow-up such as "像上次那样出一份单元测验" says little by itself; in a thread
that has been about 光合作用 the thread's words find the biology quiz.

Weights, newest first: the current message counts 1; the thread's recent turns
(oldest first, as the read path holds them) count :data:`TURN_DECAY` per turn of age
(the latest finished turn 0.6, the one before 0.36, ...), the assistant's side of a turn
:data:`ASSISTANT_WEIGHT` of that and only its head (:data:`ASSISTANT_CHARS`: a long
artifact must not outweigh the request); the rolling summary counts
:data:`SUMMARY_WEIGHT` (it names the thread's topics, but also everything else). Term
weights and their saturation are :func:`memory.recall.tokenize.query_weights`; the
query keeps its :data:`MAX_TERMS` strongest terms (search time grows with the number of
terms; the message's terms weigh most). Only the head of each text is read
(:data:`MESSAGE_CHARS`, :data:`USER_CHARS`): tokenising costs about 1 µs a character.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.recall.tokenize import name_terms, query_weights

__all__ = [
    "ASSISTANT_CHARS",
    "ASSISTANT_WEIGHT",
    "ENTRY_INPUT_CHARS",
    "ENTRY_OUTPUT_CHARS",
    "MAX_TERMS",
    "MESSAGE_CHARS",
    "SUMMARY_CHARS",
    "SUMMARY_WEIGHT",
    "TURN_DECAY",
    "USER_CHARS",
    "ConversationTurn",
    "QueryTerms",
    "build_query",
    "entry_text",
]

#: Weight ratio between a turn and the next more recent one (the message counts 1).
TURN_DECAY = 0.6
#: The assistant's side of a turn, relative to the user's side.
ASSISTANT_WEIGHT = 0.25
#: The rolling summary's weight.
SUMMARY_WEIGHT = 0.3
#: Characters of an assistant's answer that enter the query (the head, like an entry).
ASSISTANT_CHARS = 300
#: Characters of an earlier user turn, and of the message, that enter the query.
USER_CHARS = 400
MESSAGE_CHARS = 2000
#: Characters of the rolling summary that enter the query (its newest end).
SUMMARY_CHARS = 400
#: The query keeps its strongest terms only: a search costs about linearly in the number
#: of terms, and the message's own terms (weight 1) always rank first.
MAX_TERMS = 32
#: What an entry (one finished run) holds: the head of the request and of the answer.
ENTRY_INPUT_CHARS = 400
ENTRY_OUTPUT_CHARS = 300


class QueryTerms(dict[str, float]):
    """Query term weights (``term -> weight``), with the terms of the names the message
    mentions (:func:`memory.recall.tokenize.name_terms`): whether the memory searched
    knows the person asked about is part of the gate's evidence."""

    __slots__ = ("names",)

    def __init__(self, weights: dict[str, float], names: frozenset[str] = frozenset()) -> None:
        super().__init__(weights)
        self.names = names


@dataclass(frozen=True, slots=True)
class ConversationTurn:
    """One earlier turn of the thread: the user's text and the answer (None if failed)."""

    user: str
    assistant: str | None = None


def build_query(
    *,
    message: str,
    turns: Sequence[ConversationTurn] = (),
    summary: str = "",
) -> QueryTerms:
    """Query term weights for ``message`` said after ``turns`` (oldest first), with the
    names the message mentions."""
    texts: list[str] = []
    weights: list[float] = []
    if summary.strip():
        texts.append(summary[-SUMMARY_CHARS:])
        weights.append(SUMMARY_WEIGHT)
    for age, turn in zip(range(len(turns), 0, -1), turns, strict=True):
        weight = TURN_DECAY**age
        texts.append(turn.user[:USER_CHARS])
        weights.append(weight)
        if turn.assistant:
            texts.append(turn.assistant[:ASSISTANT_CHARS])
            weights.append(weight * ASSISTANT_WEIGHT)
    texts.append(message[:MESSAGE_CHARS])
    weights.append(1.0)
    query = query_weights(texts, decay=1.0, turn_weights=weights)
    names = name_terms(message[:MESSAGE_CHARS])
    if len(query) <= MAX_TERMS:
        return QueryTerms(query, names)
    strongest = sorted(query.items(), key=lambda item: (-item[1], item[0]))[:MAX_TERMS]
    return QueryTerms(dict(strongest), names)


def entry_text(*, user_input: str, output: str) -> str:
    """The compact text of a recall entry: the request's head, then the answer's head."""
    head = " ".join(user_input.split())[:ENTRY_INPUT_CHARS]
    answer = " ".join(output.split())[:ENTRY_OUTPUT_CHARS]
    return f"{head}\n→ {answer}" if answer else head
