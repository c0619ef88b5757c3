"""The compiled inner loop of a BM25 search: every entry's score, then the top k.

Pure and Django-free; :class:`memory.recall.index.RecallIndex` prepares the query (the
terms' postings ranges and masses) and turns slots back into entries. The functions are
compiled by numba (nopython, without holding the GIL, so the threads of one web process
search in parallel). A search adds hundreds of thousands of postings at 100k entries. As
numpy calls, several per term, the calls' overhead and temporary arrays cost more than the
arithmetic, and MaxScore pruning (tried, both in numpy and compiled) saved less than its
bookkeeping cost on the benchmark's queries, whose informative terms are many and of
similar weight: a plain pass over every posting of the query's terms, a span of slots at
a time (:data:`SPAN`), is about 2 ns a posting here, most of it the scattered add.

A term ``t`` adds ``mass_t * tf / (tf + norm_slot)`` to an entry, in float32, in the
order the terms are given, so a search's scores do not depend on how postings are split
between the bulk block and the tails.

The top k: the k-th largest of the maxima of the blocks of :data:`BLOCK` slots is a lower
bound of the k-th best score (k blocks each hold an entry at least that good), so only the
few entries that reach it are compared exactly. The result holds every entry that ties with
or beats the k-th best; the caller orders them and breaks ties by ``doc_id``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

__all__ = ["BLOCK", "SPAN", "holds", "top_k"]

#: Slots per block of the block maxima (a power of two).
BLOCK = 64
_BLOCK_SHIFT = 6
#: Slots whose scores are added at a time, every term's postings in that span together:
#: the span's scores and length normalisers (128 KB) stay in the core's cache while the
#: postings stream past, about a fifth faster than a term at a time over all slots.
SPAN = 16384


def _compiled[F: Callable[..., Any]](fn: F) -> F:
    """``fn`` compiled on its first call, the machine code cached on disk for the next
    processes (next to this file, in the user's cache directory, or in ``NUMBA_CACHE_DIR``):
    compiling takes seconds, loading it a fraction of one. Where none of those places is
    writable, every process compiles for itself rather than failing to start.
    """
    flags: dict[str, Any] = {"nogil": True, "boundscheck": False, "error_model": "numpy"}
    try:
        return njit(cache=True, **flags)(fn)  # type: ignore[no-any-return]
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return njit(cache=False, **flags)(fn)  # type: ignore[no-any-return]


@_compiled
def _sift_down(heap: npt.NDArray[np.float32], i: int, k: int) -> None:
    """Restore the min-heap ``heap[:k]`` below position ``i``."""
    while True:
        child = 2 * i + 1
        if child >= k:
            return
        if child + 1 < k and heap[child + 1] < heap[child]:
            child += 1
        if heap[i] <= heap[child]:
            return
        heap[i], heap[child] = heap[child], heap[i]
        i = child


@_compiled
def _kth_largest(values: npt.NDArray[np.float32], count: int, k: int) -> np.float32:
    """The k-th largest of ``values[:count]`` (0 when there are fewer than ``k``)."""
    if count < k:
        return np.float32(0.0)
    heap = values[:k].copy()
    for i in range(k // 2 - 1, -1, -1):
        _sift_down(heap, i, k)
    for j in range(k, count):
        value = values[j]
        if value > heap[0]:
            heap[0] = value
            _sift_down(heap, 0, k)
    return heap[0]


@_compiled
def _block_maxima(scores: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The largest score of each block of :data:`BLOCK` slots, in one pass (keeping them
    up to date while adding costs more: a store per posting that depends on the last)."""
    n = scores.shape[0]
    maxima = np.zeros((n + BLOCK - 1) >> _BLOCK_SHIFT, np.float32)
    for slot in range(n):
        block = slot >> _BLOCK_SHIFT
        maxima[block] = max(maxima[block], scores[slot])
    return maxima


@_compiled
def _add_block(
    scores: npt.NDArray[np.float32],
    end: int,
    masses: npt.NDArray[np.float32],
    slots: npt.NDArray[np.int32],
    tfs: npt.NDArray[np.uint16],
    cursors: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    norms: npt.NDArray[np.float32],
) -> None:
    """Add every term's postings below slot ``end``, from its cursor on (each term's
    ``slots[cursors[i]:ends[i]]`` is sorted), and move the cursors past them."""
    for i in range(masses.shape[0]):
        mass = masses[i]
        p = cursors[i]
        stop = ends[i]
        while p < stop:
            slot = slots[p]
            if slot >= end:
                break
            tf = np.float32(tfs[p])
            scores[slot] += mass * (tf / (tf + norms[slot]))
            p += 1
        cursors[i] = p


@_compiled
def top_k(
    csr_lo: npt.NDArray[np.int64],
    csr_hi: npt.NDArray[np.int64],
    tail_lo: npt.NDArray[np.int64],
    tail_hi: npt.NDArray[np.int64],
    masses: npt.NDArray[np.float32],
    csr_slots: npt.NDArray[np.int32],
    csr_tfs: npt.NDArray[np.uint16],
    tail_slots: npt.NDArray[np.int32],
    tail_tfs: npt.NDArray[np.uint16],
    norms: npt.NDArray[np.float32],
    blocked: npt.NDArray[np.int64],
    k: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Slots and scores of the entries that tie with or beat the k-th best (positive
    scores only), by slot.

    Term ``i``'s postings are ``csr_slots[csr_lo[i]:csr_hi[i]]`` and
    ``tail_slots[tail_lo[i]:tail_hi[i]]``, with their tfs; its contribution is scaled by
    ``masses[i]`` (weight x IDF x (k1 + 1)). ``norms`` is the per-slot length normaliser,
    ``k1 (1 - b + b dl / avgdl)``; ``blocked`` slots are never returned.
    """
    n = norms.shape[0]
    scores = np.zeros(n, np.float32)
    csr_at = csr_lo.copy()
    tail_at = tail_lo.copy()
    for start in range(0, n, SPAN):
        end = start + SPAN
        _add_block(scores, end, masses, csr_slots, csr_tfs, csr_at, csr_hi, norms)
        _add_block(scores, end, masses, tail_slots, tail_tfs, tail_at, tail_hi, norms)
    for slot in blocked:
        scores[slot] = 0.0
    maxima = _block_maxima(scores)
    bound = _kth_largest(maxima, maxima.shape[0], k)
    count = 0
    for slot in range(n):
        if scores[slot] > 0.0 and scores[slot] >= bound:
            count += 1
    slots = np.empty(count, np.int64)
    values = np.empty(count, np.float32)
    count = 0
    for slot in range(n):
        if scores[slot] > 0.0 and scores[slot] >= bound:
            slots[count] = slot
            values[count] = scores[slot]
            count += 1
    kth = _kth_largest(values, count, k)
    kept = 0
    for j in range(count):
        if values[j] >= kth:
            slots[kept] = slots[j]
            values[kept] = values[j]
            kept += 1
    return slots[:kept], values[:kept]


@_compiled
def _contains(sorted_slots: npt.NDArray[np.int32], lo: int, hi: int, slot: int) -> bool:
    """Whether ``sorted_slots[lo:hi]`` holds ``slot`` (a binary search)."""
    end = hi
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_slots[mid] < slot:
            lo = mid + 1
        else:
            hi = mid
    return lo < end and sorted_slots[lo] == slot


@_compiled
def holds(
    csr_lo: npt.NDArray[np.int64],
    csr_hi: npt.NDArray[np.int64],
    tail_lo: npt.NDArray[np.int64],
    tail_hi: npt.NDArray[np.int64],
    csr_slots: npt.NDArray[np.int32],
    tail_slots: npt.NDArray[np.int32],
    slots: npt.NDArray[np.int64],
) -> npt.NDArray[np.bool_]:
    """Which terms each of a few ``slots`` holds: a ``len(slots) x len(csr_lo)`` matrix
    (term ``i``'s postings as in :func:`top_k`, each range sorted by slot)."""
    out = np.zeros((slots.shape[0], csr_lo.shape[0]), np.bool_)
    for i in range(csr_lo.shape[0]):
        for r in range(slots.shape[0]):
            slot = slots[r]
            out[r, i] = _contains(csr_slots, csr_lo[i], csr_hi[i], slot) or _contains(
                tail_slots, tail_lo[i], tail_hi[i], slot
            )
    return out
