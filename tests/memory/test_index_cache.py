"""The per-process index cache's bounds: keys, entries in all, and keys never written.

The cache is given a plain dict as its "database" (version rows and rows per key), so
what it keeps can be read off exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.services.index_cache import IndexCache, IndexState, Loaded


class Source:
    """Version rows and rows per key, as the database would hold them."""

    def __init__(self) -> None:
        self.rows: dict[str, list[tuple[int, list[str]]]] = {}
        self.loads: list[str] = []

    def write(self, key: str, n: int) -> None:
        rows = self.rows.setdefault(key, [])
        start = max((pk for pk, _ in rows), default=0)
        rows.extend((start + i + 1, ["词", key]) for i in range(n))

    def state(self, key: str) -> IndexState:
        rows = self.rows.get(key)
        if rows is None:
            return IndexState()
        return IndexState(row_id=1, version=len(rows), count=len(rows), max_id=rows[-1][0])

    def load(self, key: str, after: int) -> Loaded:
        self.loads.append(key)
        rows: list[tuple[int, Sequence[str]]] = [
            row for row in self.rows.get(key, []) if row[0] > after
        ]
        return rows, (rows[-1][0] if rows else after)


def cache(source: Source, *, keys: int = 100, entries: int = 1000) -> IndexCache[str]:
    return IndexCache[str](capacity=keys, max_entries=entries, state=source.state, load=source.load)


def test_a_key_never_written_is_answered_empty_and_not_kept() -> None:
    source = Source()
    source.write("a", 3)
    indexes = cache(source, keys=2)
    assert len(indexes.get("a").index) == 3
    for key in ("x", "y", "z"):
        assert len(indexes.get(key).index) == 0
    assert len(indexes) == 1
    assert source.loads == ["a"]  # no load for the unwritten keys, and "a" stayed cached
    indexes.get("a")
    assert source.loads == ["a"]


def test_a_key_written_after_an_empty_answer_is_found() -> None:
    source = Source()
    indexes = cache(source)
    assert len(indexes.get("a").index) == 0
    source.write("a", 2)
    assert len(indexes.get("a").index) == 2
    nothing = indexes.get("b")
    assert nothing is indexes.get("c")  # one shared empty answer
    assert len(nothing.index) == 0  # which the write to "a" did not touch


@pytest.mark.parametrize(
    ("sizes", "entries", "kept"),
    [
        ([10, 10, 10], 30, ["a", "b", "c"]),
        ([10, 10, 10], 25, ["b", "c"]),
        ([10, 10, 10], 10, ["c"]),
        ([50, 10], 20, ["b"]),
        ([10, 50], 20, ["b"]),  # the most recent key is kept, however large
    ],
)
def test_entries_in_all_are_bounded(sizes: list[int], entries: int, kept: list[str]) -> None:
    source = Source()
    indexes = cache(source, entries=entries)
    for key, size in zip("abc", sizes, strict=False):
        source.write(key, size)
        indexes.get(key)
    assert sorted(key for key in "abc" if key in indexes._cache) == kept
    assert indexes.entries <= max(entries, sizes[-1])


def test_growth_by_incremental_loads_is_bounded_too() -> None:
    source = Source()
    indexes = cache(source, entries=30)
    for key in "ab":
        source.write(key, 10)
        indexes.get(key)
    source.write("b", 15)
    assert len(indexes.get("b").index) == 25
    assert list(indexes._cache) == ["b"]


def test_keys_are_bounded_least_recently_used_first() -> None:
    source = Source()
    indexes = cache(source, keys=2)
    for key in "abc":
        source.write(key, 1)
    indexes.get("a")
    indexes.get("b")
    indexes.get("a")
    indexes.get("c")
    assert list(indexes._cache) == ["a", "c"]


@settings(max_examples=200, deadline=None)
@given(
    ops=st.lists(st.tuples(st.sampled_from("abcde"), st.integers(0, 12)), max_size=40),
    keys=st.integers(1, 4),
    entries=st.integers(1, 40),
)
def test_the_running_total_is_the_sum_and_the_bounds_hold(
    ops: list[tuple[str, int]], keys: int, entries: int
) -> None:
    """Any sequence of writes and searches: the total kept is the sum of the cached
    indexes' sizes, every answer is current, and the bounds hold (but for the newest key)."""
    source = Source()
    indexes = cache(source, keys=keys, entries=entries)
    for key, n in ops:
        if n:
            source.write(key, n)
        assert len(indexes.get(key).index) == len(source.rows.get(key, []))
        cached = indexes._cache.values()
        assert indexes.entries == sum(len(c.index) for c in cached)
        assert len(indexes) <= keys
        assert len(indexes) <= 1 or indexes.entries <= entries
