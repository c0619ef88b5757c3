"""A per-process memo of pure text functions, bounded by the characters it holds.

The read path passes the same stored texts (confirmed facts, a thread's turns and
summary, recalled entries) through the same pure functions (the sanitiser, the red
line, the query tokenizer) on every run; their results depend on the text alone (the
rules are code, fixed for the life of a process). :class:`TextMemo` keeps the results
of the most recently used texts, least recently used dropped first once the texts held
pass ``max_chars`` in all; a text longer than ``max_text`` is never kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable


class TextMemo[T]:
    """``fn(text)`` memoised by text; thread-safe; the results must not be mutated."""

    def __init__(self, fn: Callable[[str], T], *, max_chars: int, max_text: int) -> None:
        self._fn = fn
        self._max_chars = max_chars
        self._max_text = max_text
        self._held: OrderedDict[str, T] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def __call__(self, text: str) -> T:
        if len(text) > self._max_text:
            return self._fn(text)
        with self._lock:
            try:
                value = self._held[text]
            except KeyError:
                pass
            else:
                self._held.move_to_end(text)
                return value
        value = self._fn(text)
        with self._lock:
            if text not in self._held:
                self._held[text] = value
                self._chars += len(text)
                while self._chars > self._max_chars and self._held:
                    dropped, _ = self._held.popitem(last=False)
                    self._chars -= len(dropped)
        return value

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._chars = 0
