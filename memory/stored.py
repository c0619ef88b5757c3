"""The red line of stored texts re-checked at injection, memoised per process.

Every injected memory was filtered when it was stored and is re-checked when injected
(the rules may have grown since: a new term list, a new recogniser). The rules are
fixed for the life of a process, so the verdict on a text is too: the read path asks
once per text and process (:class:`memory.memo.TextMemo`), not on every run.
"""

from __future__ import annotations

from memory.memo import TextMemo
from memory.redline import Hit, Redaction, redact, scan

__all__ = ["red_line_hits", "redacted"]


def _hits(text: str) -> tuple[Hit, ...]:
    return tuple(scan(text))


#: :func:`memory.redline.scan` of a stored text, as a tuple.
red_line_hits: TextMemo[tuple[Hit, ...]] = TextMemo(_hits, max_chars=1_000_000, max_text=20_000)
#: :func:`memory.redline.redact` of a stored text (do not mutate ``counts``).
redacted: TextMemo[Redaction] = TextMemo(redact, max_chars=2_000_000, max_text=20_000)
