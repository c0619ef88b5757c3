"""Cutting a document into passages: headings and paragraphs first, then tokens.

A passage (:class:`Chunk`) is what search finds and what is injected, so it should be
one coherent piece of a section and small enough that three of them fit the KB budget.

1. Blocks are grouped into sections by heading; every passage keeps the path of
   headings above it (``第一章 总则 > 一、作息``), because a paragraph such as "迟到三次
   记警告" means little without it.
2. A section's paragraphs are packed whole into passages of at most :data:`MAX_TOKENS`
   tokens. A section shorter than :data:`MIN_TOKENS` runs on into its first subsection
   (the subheading becomes a line of the text), so a chapter's one-line introduction is
   not a passage of its own; a heading alone is never one.
3. A paragraph longer than :data:`MAX_TOKENS` is cut at sentence ends (Chinese and
   Latin punctuation) into groups of about :data:`TARGET_TOKENS`, and a sentence longer
   than that at token boundaries.
4. Consecutive passages of one section share :data:`OVERLAP_TOKENS` tokens (whole
   sentences from the end of the previous passage), so a statement cut at a boundary is
   still found whole in one of them.

Tokens are those of the budget (``agents.tokens``): a passage's size is what it costs
when injected.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from agents.tokens import count_tokens, count_tokens_many, truncate_tokens
from memory.kb.parse import Block

__all__ = [
    "MAX_TOKENS",
    "MIN_TOKENS",
    "OVERLAP_TOKENS",
    "PATH_SEPARATOR",
    "TARGET_TOKENS",
    "Chunk",
    "chunk_blocks",
    "split_sentences",
]

TARGET_TOKENS = 300
MAX_TOKENS = 500
MIN_TOKENS = 60
OVERLAP_TOKENS = 40
PATH_SEPARATOR = " > "
_MAX_PATH_CHARS = 480

# A sentence ends after 。！？；… or Latin .!? followed by a space, or at a line break;
# closing quotes and brackets stay with their sentence.
_SENTENCE = re.compile(r"[^。！？；!?…\n]*(?:[。！？；!?…]+[」』”’）)\]]*|\n|$)|[^\n]+")


@dataclass(frozen=True, slots=True)
class Chunk:
    heading_path: str
    text: str
    tokens: int  # at least the text's token count, at most MAX_TOKENS


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order; joined they give ``text`` back."""
    return [piece for piece in _SENTENCE.findall(text) if piece]


@dataclass
class _Piece:
    text: str
    tokens: int


class _Packer:
    """Packs pieces (paragraphs, sentence groups) into passages of one section."""

    def __init__(self, count: Callable[[str], int], max_tokens: int, overlap: int) -> None:
        self.count = count
        self.max_tokens = max_tokens
        self.overlap = overlap
        self.out: list[Chunk] = []
        self.pieces: list[_Piece] = []
        self.tokens = 0
        self.heading_path = ""  # the headings above the block being read
        self.path = ""  # the headings above the passage being packed

    def _emit(self) -> None:
        text = "\n".join(p.text for p in self.pieces).strip()
        if text:
            # The pieces' counts plus one per line break, not a second pass of the
            # tokenizer: tiktoken's pre-tokenizer never joins across a line break, so
            # this is exact, or one more where two line breaks meet (an upper bound).
            self.out.append(Chunk(self.path, text, self.tokens))

    def add(self, piece: _Piece) -> None:
        if not self.pieces:
            self.path = self.heading_path
        # +1: the line break that joins it to the passage.
        elif self.tokens + piece.tokens + 1 > self.max_tokens:
            self._emit()
            self._carry_overlap(piece.tokens)
            self.path = self.heading_path
        self.tokens += piece.tokens + (1 if self.pieces else 0)
        self.pieces.append(piece)

    def _carry_overlap(self, incoming: int) -> None:
        """Start the next passage with the previous one's last sentences."""
        room = min(self.overlap, self.max_tokens - incoming - 1)
        tail = ""
        if room > 0 and self.pieces:
            used = 0
            for sentence in reversed(split_sentences(self.pieces[-1].text)):
                cost = self.count(sentence)
                if used + cost > room:
                    break
                tail = sentence + tail
                used += cost
        tail = tail.strip()
        self.pieces = [_Piece(tail, self.count(tail))] if tail else []
        self.tokens = self.pieces[0].tokens if self.pieces else 0

    def close_section(self) -> None:
        if self.pieces:
            self._emit()
        self.pieces = []
        self.tokens = 0


def _long_paragraph(text: str, count: Callable[[str], int], size: int) -> Iterable[_Piece]:
    """A paragraph too long for one passage, as sentence groups of about ``size`` tokens."""
    group = ""
    estimate = 0  # the sentences' own counts summed (a group is counted once, when done)
    for sentence in split_sentences(text):
        tokens = count(sentence)
        if tokens > size:
            if group.strip():
                yield _Piece(group, count(group))
            group, estimate = "", 0
            rest = sentence
            while rest:
                head = truncate_tokens(rest, size) or rest[:1]
                yield _Piece(head, count(head))
                rest = rest[len(head) :]
            continue
        if group and estimate + tokens > size:
            yield _Piece(group, count(group))
            group, estimate = "", 0
        group += sentence
        estimate += tokens
    if group.strip():
        yield _Piece(group, count(group))


def _path(stack: list[str]) -> str:
    path = PATH_SEPARATOR.join(stack)
    return path if len(path) <= _MAX_PATH_CHARS else "…" + path[-(_MAX_PATH_CHARS - 1) :]


def _batch_counter(texts: list[str]) -> Callable[[str], int]:
    """``count_tokens`` with ``texts`` counted in one batch (in parallel threads)."""
    counted = dict(zip(texts, count_tokens_many(texts), strict=True))

    def count(text: str) -> int:
        known = counted.get(text)
        return count_tokens(text) if known is None else known

    return count


def chunk_blocks(
    blocks: Iterable[Block],
    *,
    target: int = TARGET_TOKENS,
    max_tokens: int = MAX_TOKENS,
    min_tokens: int = MIN_TOKENS,
    overlap: int = OVERLAP_TOKENS,
    count: Callable[[str], int] = count_tokens,
) -> list[Chunk]:
    """The passages of a document's blocks, in document order (see the module docstring)."""
    if not 0 < target <= max_tokens or overlap < 0 or overlap >= target:
        raise ValueError("need 0 < target <= max_tokens and 0 <= overlap < target")
    stripped = [(block, block.text.strip()) for block in blocks]
    if count is count_tokens:
        count = _batch_counter([text for _, text in stripped])

    packer = _Packer(count, max_tokens, overlap)
    stack: list[tuple[int, str]] = []  # (level, heading text)
    for block, text in stripped:
        if not text:
            continue
        if block.level:
            deeper = bool(stack) and block.level > stack[-1][0]
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, text))
            packer.heading_path = _path([heading for _, heading in stack])
            if packer.pieces and deeper and packer.tokens < min_tokens:
                # A short section runs on into its first subsection: the subheading
                # becomes a line of the passage.
                packer.add(_Piece(text, count(text)))
            else:
                packer.close_section()
            continue
        tokens = count(text)
        if tokens > max_tokens:
            for piece in _long_paragraph(text, count, target):
                packer.add(piece)
        else:
            packer.add(_Piece(text, tokens))
    packer.close_section()
    return packer.out
