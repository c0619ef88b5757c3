"""Finding a text a teacher asked to forget, as every other module sees text. Pure.

"Forget 王小明" must also find ``王\u200b小明`` (a zero-width space), ``Ｗａｎｇ`` for
``wang`` (full-width, any case) and the name split by a line break the model inserted:
the needle and each haystack are compared in the shared text view
(:mod:`memory.textview`: NFKC per character, invisible characters removed, case
folded), with runs of whitespace taken as one space and whitespace between two
ideographs ignored. A hit is mapped back to the smallest original span, which is what
:meth:`TextMatcher.redact` replaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from memory.textview import text_view

# The shortest needle (in view characters, spaces aside): forgetting "的" or "a" would
# erase everything. The API refuses shorter texts with this in its message.
MIN_NEEDLE_CHARS = 2
MAX_NEEDLE_CHARS = 200
PLACEHOLDER = "（已遗忘）"

_SPACE = re.compile(r"\s+")


def _needle_pattern(needle: str) -> re.Pattern[str]:
    """A pattern over the view: the needle's characters, any whitespace between them."""
    chars = [ch for ch in text_view(needle, fold_case=True).text if not ch.isspace()]
    gap = r"\s*"
    return re.compile(gap.join(re.escape(ch) for ch in chars))


def needle_length(needle: str) -> int:
    """How many view characters (whitespace aside) ``needle`` has."""
    return len(_SPACE.sub("", text_view(needle, fold_case=True).text))


@dataclass(frozen=True)
class TextMatcher:
    needle: str

    def __post_init__(self) -> None:
        if not MIN_NEEDLE_CHARS <= needle_length(self.needle) <= MAX_NEEDLE_CHARS:
            raise ValueError("needle length out of range")

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return _needle_pattern(self.needle)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The original spans of every occurrence, in order, not overlapping."""
        if not text:
            return []
        view = text_view(text, fold_case=True)
        return [view.span(m.start(), m.end()) for m in self.pattern.finditer(view.text)]

    def matches(self, text: str) -> bool:
        return bool(text) and self.pattern.search(text_view(text, fold_case=True).text) is not None

    def redact(self, text: str, placeholder: str = PLACEHOLDER) -> tuple[str, int]:
        """``text`` with every occurrence replaced by ``placeholder``; and how many."""
        spans = self.spans(text)
        if not spans:
            return text, 0
        parts: list[str] = []
        last = 0
        for start, end in spans:
            parts.append(text[last:start])
            parts.append(placeholder)
            last = end
        parts.append(text[last:])
        return "".join(parts), len(spans)
