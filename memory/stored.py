"""The red line of stored texts re-checked at injection, memoised per process; and the
stamp under which a text prepared for injection at write time may be used as it is.

Every injected memory was filtered when it was stored and is re-checked when injected
(the rules may have grown since: a new term list, a new recogniser). The rules are
fixed for the life of a process, so the verdict on a text is too: the read path asks
once per text and process (:class:`memory.memo.TextMemo`), not on every run.

A text may also be prepared for injection when it is written (re-checked, sanitised,
cut to its cap and counted, as the read path would), and stored with
:func:`prepared_stamp` of its inputs. The stamp digests the rules that made it: the
source and data of the red line, the sanitiser, the token counter and the list-line
renderer (:data:`RULES_DIGEST`). The read path uses the stored result only when the
stamp of the inputs it holds now is the stored one; after any change to those rules or
to the inputs it takes the live path, so text prepared under old rules is never
injected unchecked.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import agents.tokens as tokens
from memory import redline, render, sanitizer
from memory.memo import TextMemo
from memory.redline import Hit, Redaction, redact, scan

__all__ = ["RULES_DIGEST", "prepared_stamp", "red_line_hits", "redacted"]


def _hits(text: str) -> tuple[Hit, ...]:
    return tuple(scan(text))


#: :func:`memory.redline.scan` of a stored text, as a tuple.
red_line_hits: TextMemo[tuple[Hit, ...]] = TextMemo(_hits, max_chars=1_000_000, max_text=20_000)
#: :func:`memory.redline.redact` of a stored text (do not mutate ``counts``).
redacted: TextMemo[Redaction] = TextMemo(redact, max_chars=2_000_000, max_text=20_000)


def _rules_digest() -> str:
    """SHA-256 of every file that decides what a prepared text becomes (packages whole,
    data files included), and of the token encoding in use."""
    files: list[Path] = []
    for package in (redline, sanitizer):
        files.extend(
            path
            for path in sorted(Path(package.__path__[0]).rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts
        )
    files.extend(Path(str(module.__file__)) for module in (tokens, render))
    digest = hashlib.sha256(tokens.encoding().name.encode())
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


#: The rules' digest in this process (computed once at import).
RULES_DIGEST = _rules_digest()


def prepared_stamp(*parts: str) -> str:
    """The stamp of a text prepared for injection from ``parts`` (its inputs and the
    format's own version) under this process's rules; 32 hex digits."""
    digest = hashlib.blake2b(RULES_DIGEST.encode(), digest_size=16)
    for part in parts:
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()
