"""Per-process caches of the in-memory BM25 indexes, kept current by a version row.

Recall (one index per memory scope) and the knowledge base (one per agent for shared
documents, one per teacher and agent for private ones) keep their terms in the database
and an index per key in each process. Before every search one indexed read of the key's
version row (``version``, live ``count``, ``max_id`` of the rows written) says whether
the cached index is current. If not, rows past the cached ``max_id`` are loaded and
added; where the key has an ``epoch`` (bumped with the version whenever a row is removed,
by any path) and a ``present`` reader, a process whose index is of another epoch drops
the documents no longer present; if the live count then differs from the index's (rows
were removed, or one committed out of id order), the index is rebuilt from the database.
So every process answers the same as the database, and a removed row is never found
again.

A cache holds at most ``capacity`` keys and ``max_entries`` indexed documents in all
(``MEMORY_INDEX_CACHE_KEYS`` and ``MEMORY_INDEX_CACHE_ENTRIES``), least recently used
dropped first; the most recent key is always kept, however large. A key with no version
row (nothing ever written under it) is answered with an empty index and not cached: many
teachers without private documents must not push real indexes out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from memory.recall import RecallIndex

#: ``(doc_id, terms)`` pairs, and the largest row id read (the next load starts after it).
Loaded = tuple[list[tuple[int, Sequence[str]]], int]


@dataclass(frozen=True, slots=True)
class IndexState:
    """A key's version row; ``row_id`` tells a row deleted and created again apart."""

    row_id: int = 0
    version: int = 0
    count: int = 0
    max_id: int = 0
    epoch: int = 0

    @property
    def stamp(self) -> tuple[int, int]:
        return (self.row_id, self.version)


@dataclass
class CachedIndex:
    index: RecallIndex
    stamp: tuple[int, int]
    max_id: int
    epoch: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Documents of ``index`` as last counted in the cache's total.
    counted: int = 0


#: The answer for every key with no version row: one empty index, never added to (only
#: indexes in the cache are brought up to date), so it can be shared.
_NOTHING = CachedIndex(index=RecallIndex.from_documents([]), stamp=IndexState().stamp, max_id=0)


class IndexCache[K: Hashable]:
    """Up to ``capacity`` indexes and ``max_entries`` documents in all, least recently
    used dropped first."""

    def __init__(
        self,
        *,
        capacity: int,
        max_entries: int,
        state: Callable[[K], IndexState],
        load: Callable[[K, int], Loaded],
        present: Callable[[K], set[int]] | None = None,
    ) -> None:
        self.capacity = capacity
        self.max_entries = max_entries
        self._state = state
        self._load = load
        self._present = present
        self._cache: OrderedDict[K, CachedIndex] = OrderedDict()
        self._entries = 0
        self._lock = threading.Lock()

    def get(self, key: K, *, state: IndexState | None = None) -> CachedIndex:
        """The index of ``key``, brought up to date with the database.

        ``state`` is the key's version row if the caller has just read it (several keys
        in one query); else it is read here. Searching the index needs ``lock`` held (an
        incremental load mutates it in place).
        """
        if state is None:
            state = self._state(key)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
        if cached is not None and cached.stamp == state.stamp:
            return cached
        if cached is not None and cached.stamp[0] == state.row_id:
            with cached.lock:
                documents, last = self._load(key, cached.max_id)
                for doc_id, doc_terms in documents:
                    cached.index.add(doc_id, doc_terms)
                cached.max_id = last
                if self._present is not None and cached.epoch != state.epoch:
                    present = self._present(key)
                    for doc_id in list(cached.index.doc_ids):
                        if doc_id not in present:
                            cached.index.remove(doc_id)
                    cached.epoch = state.epoch
                cached.stamp = state.stamp
                current = len(cached.index) == state.count
            if current:
                if len(cached.index) != cached.counted:  # added to, or removed from
                    self._recount(key, cached)
                return cached
            # Rows were removed, or one committed out of id order: rebuild below (as
            # when the version row itself was deleted and created again).
        if not state.row_id:
            # No version row: nothing was ever written under this key (no query needed).
            if cached is not None:
                self._recount(key, None)
            return _NOTHING
        documents, last = self._load(key, 0)
        fresh = CachedIndex(
            index=RecallIndex.from_documents(documents),
            stamp=state.stamp,
            max_id=last,
            epoch=state.epoch,
        )
        self._recount(key, fresh)
        return fresh

    def __len__(self) -> int:
        return len(self._cache)

    @property
    def entries(self) -> int:
        """Documents indexed in all the cached indexes (as last counted)."""
        return self._entries

    def _recount(self, key: K, cached: CachedIndex | None) -> None:
        """``key`` now holds ``cached`` (None: nothing): the total follows, and the least
        recently used keys go while a bound is passed (the most recent one stays)."""
        with self._lock:
            old = self._cache.pop(key, None)
            if old is not None:
                self._entries -= old.counted
            if cached is not None:
                cached.counted = len(cached.index)
                self._entries += cached.counted
                self._cache[key] = cached
            while len(self._cache) > 1 and (
                len(self._cache) > self.capacity or self._entries > self.max_entries
            ):
                _, dropped = self._cache.popitem(last=False)
                self._entries -= dropped.counted

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()
            self._entries = 0
