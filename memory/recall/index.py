"""In-memory BM25 index for episodic recall, with the evidence the recall gate weighs.

One index holds one memory scope (tenant, agent, owner). Documents are recall entries,
identified by an integer ``doc_id`` and given as pre-tokenised terms (see
:mod:`memory.recall.tokenize`); the index never tokenises anything itself.

Ranking
    Okapi BM25 with ``k1`` and ``b`` (defaults 1.2 and 0.75, the usual values) and the
    Robertson–Spärck Jones IDF floored at zero, computed as if the scope also held
    ``PRIOR_DOCS`` (N0 = 10) entries that contain none of the query's terms::

        idf(t) = max(0, ln((N + N0 - df + 0.5) / (df + 0.5)))

    A term found in about half of the entries or more carries no evidence and is skipped
    (which also keeps the longest postings lists out of every search); the pseudo-entries
    keep a scope of only a few entries usable (with N0 = 0, a term of a one-entry scope
    would weigh nothing). A query is a bag of terms or a mapping ``term -> weight`` w_t;
    the raw score is ``sum_t w_t idf(t) tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))``.

Gate evidence (``Hit.evidence``) and score (``Hit.score``, in [0, 1])
    Query terms that no entry of the scope contains take no part in the ranking (they
    would add nothing to any entry) but are counted: the gate must know how much of the
    question this memory has never seen. Per query the index also reports the scope's
    background: the mean and spread of the raw score a typical entry would get (a few
    vector operations over the query's terms, no pass over the entries). The score is the gate's
    logistic estimate from that evidence (:mod:`memory.recall.gating`); within a query
    it is not a monotone function of ``raw`` in general, so the ranking stays plain BM25
    and the gate only decides which of the top hits to inject.

Data layout and speed
    Postings are stored per term as parallel ``int32`` slot and ``uint16`` tf arrays
    (6 bytes a posting; a tf above 65535 is stored as 65535), slots ascending. A bulk
    build (:meth:`RecallIndex.from_documents`) writes them into one CSR block with one
    sort; entries added later append to a tail per term, a region of one shared arena
    whose capacity doubles when it is full (the old region is left behind until the next
    compaction), so an add costs amortised O(distinct terms). Removal marks the entry's
    slot dead (its postings stay as tombstones, ignored at search) and updates document
    frequencies. The index compacts itself (tails merged into a new block, dead entries
    dropped) when the tails reach a quarter of the block or dead slots a quarter of all
    slots, which keeps both the extra memory and the amortised cost bounded.

    A search is exact top-k BM25, compiled (:mod:`memory.recall.kernel`): every posting
    of the query's informative terms is added into a per-slot score, a span of slots at a
    time, and only the entries that reach the k-th largest block maximum are compared
    exactly. Ties at the k-th place go to the lower ``doc_id``, as everywhere else.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory.recall.gating import Evidence, QueryEvidence, relevance_many
from memory.recall.kernel import holds, top_k
from memory.recall.tokenize import is_cjk_term

__all__ = [
    "BACKGROUND_RANK",
    "DEFAULT_B",
    "DEFAULT_K1",
    "PRIOR_DOCS",
    "Hit",
    "RecallIndex",
    "brute_force_raw",
    "warm",
]

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75
#: Pseudo-entries added to N in the IDF (they contain none of the query's terms).
PRIOR_DOCS = 10
#: ``QueryEvidence.tenth`` is the raw score at this rank (when the search asks for as many).
BACKGROUND_RANK = 10

_COMPACT_DEAD_SHARE = 0.25
# Merge the tails into the CSR block when they hold this share of its postings (or more
# than _TAIL_MIN postings when the block is small): amortised O(1) work per posting.
_TAIL_SHARE = 0.25
_TAIL_MIN = 1 << 16
_MIN_CAPACITY = 8
# Postings are stored compactly: 6 bytes each.
_SLOT = np.int32
_TF = np.uint16
_TF_MAX = int(np.iinfo(_TF).max)  # a larger tf is stored as this (BM25 saturates long before)
IntArray = npt.NDArray[np.int32]
TfArray = npt.NDArray[np.uint16]
FloatArray = npt.NDArray[np.float32]
_NO_SLOTS: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the entry, the gate's relevance score in [0, 1], its raw BM25
    and the evidence the score was computed from."""

    doc_id: int
    score: float
    raw: float
    evidence: Evidence


@dataclass(frozen=True, slots=True)
class _Ranked:
    """The best slots of a query, with their raw scores, and its known terms (in query
    order): weights, document frequencies, masses (weight x IDF), which are CJK."""

    slots: npt.NDArray[np.int64]
    raws: npt.NDArray[np.float64]
    term_weights: npt.NDArray[np.float64]
    term_df: npt.NDArray[np.int64]
    masses: npt.NDArray[np.float64]
    known_cjk: npt.NDArray[np.bool_]
    unknown_weight: float
    unknown_cjk: float


class _Vocab(dict[str, int]):
    """Term -> term id; looking up an unknown term assigns the next id."""

    def __missing__(self, term: str) -> int:
        tid = self[term] = len(self)
        return tid


def _grow[T: np.generic](array: npt.NDArray[T], size: int, fill: float = 0) -> npt.NDArray[T]:
    """``array`` with room for at least ``size`` items (doubling), new items ``fill``."""
    if size <= len(array):
        return array
    grown = np.full(max(size, 2 * len(array), _MIN_CAPACITY), fill, dtype=array.dtype)
    grown[: len(array)] = array
    return grown


class RecallIndex:
    """A BM25 index over one memory scope; see the module docstring for the scoring."""

    def __init__(
        self,
        *,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        prior_docs: int = PRIOR_DOCS,
    ) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0 or prior_docs < 0:
            raise ValueError("k1 and prior_docs must be >= 0 and b within [0, 1]")
        self.k1 = float(k1)
        self.b = float(b)
        self.prior_docs = int(prior_docs)
        self._vocab = _Vocab()
        # Per term id: live document frequency.
        self._df: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        # Bulk-built postings (CSR by term id); terms past len(_ptr) - 1 have none there.
        self._ptr: npt.NDArray[np.int64] = np.zeros(1, dtype=np.int64)
        self._csr_slots: IntArray = np.zeros(0, dtype=_SLOT)
        self._csr_tfs: TfArray = np.zeros(0, dtype=_TF)
        # Postings added one by one since the last bulk build: per term id, a region
        # [start, start + capacity) of the arena, of which the first `length` are used.
        self._tail_start: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._tail_len: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._tail_cap: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._arena_slots: IntArray = np.zeros(0, dtype=_SLOT)
        self._arena_tfs: TfArray = np.zeros(0, dtype=_TF)
        self._arena_used = 0
        self._n_tail_postings = 0
        # Entries by slot.
        self._slot_of: dict[int, int] = {}
        self._doc_ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._dl: FloatArray = np.zeros(0, dtype=np.float32)
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)
        self._n_slots = 0
        self._fwd: dict[int, IntArray] = {}  # slot -> term ids, for entries added one by one
        self._dead: list[int] = []
        self._dead_cache: npt.NDArray[np.int64] | None = None
        self._n_live = 0
        self._total_len = 0.0
        self._n_postings = 0  # distinct (entry, term) pairs over live entries
        self._norm_cache: tuple[float, int, FloatArray] | None = None

    # ------------------------------------------------------------------ building
    @classmethod
    def from_documents(
        cls,
        documents: Iterable[tuple[int, Sequence[str]]],
        *,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        prior_docs: int = PRIOR_DOCS,
    ) -> RecallIndex:
        """Build an index from ``(doc_id, terms)`` pairs (vectorised: one sort in all).

        A ``doc_id`` given twice keeps its last terms.
        """
        index = cls(k1=k1, b=b, prior_docs=prior_docs)
        by_id: dict[int, Sequence[str]] = {}
        for doc_id, doc_terms in documents:
            by_id.pop(int(doc_id), None)  # re-insert: the last version keeps its place
            by_id[int(doc_id)] = doc_terms
        docs = list(by_id.values())
        n_docs = len(docs)
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=n_docs)
        n_tokens = int(lengths.sum())
        tokens = np.fromiter(
            map(index._vocab.__getitem__, itertools.chain.from_iterable(docs)),
            dtype=np.int64,
            count=n_tokens,
        )
        shift = _slot_bits(n_docs)
        tokens <<= shift
        tokens |= np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        tokens.sort()
        index._install(
            doc_ids=np.fromiter(by_id.keys(), dtype=np.int64, count=n_docs),
            lengths=lengths.astype(np.float32),
            sorted_keys=tokens,
        )
        return index

    def _install(
        self,
        *,
        doc_ids: npt.NDArray[np.int64],
        lengths: FloatArray,
        sorted_keys: npt.NDArray[np.int64],
        tfs: TfArray | None = None,
    ) -> None:
        """Install postings from sorted ``term_id << _slot_bits(n_docs) | slot`` keys.

        With ``tfs`` the keys are distinct and carry those term frequencies; without,
        each key is one occurrence and repeated keys are counted.
        """
        n_docs = len(doc_ids)
        n_terms = len(self._vocab)
        if tfs is None:
            starts = np.flatnonzero(np.diff(sorted_keys, prepend=-1))
            counts = np.diff(np.append(starts, len(sorted_keys)))
            keys = sorted_keys[starts]
            tfs = np.minimum(counts, _TF_MAX).astype(_TF)
        else:
            keys = sorted_keys
        shift = _slot_bits(n_docs)
        term_ids = keys >> shift
        slots = (keys & ((1 << shift) - 1)).astype(_SLOT)
        df = np.bincount(term_ids, minlength=n_terms).astype(np.int64)
        ptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df, out=ptr[1:])
        self._ptr = ptr
        self._csr_slots = slots
        self._csr_tfs = tfs
        self._df = df
        self._tail_start = np.zeros(n_terms, dtype=np.int64)
        self._tail_len = np.zeros(n_terms, dtype=np.int64)
        self._tail_cap = np.zeros(n_terms, dtype=np.int64)
        self._arena_slots = np.zeros(0, dtype=_SLOT)
        self._arena_tfs = np.zeros(0, dtype=_TF)
        self._arena_used = 0
        self._n_tail_postings = 0
        self._fwd = {}
        self._dead = []
        self._dead_cache = None
        self._doc_ids = doc_ids.copy()
        self._dl = lengths.copy()
        self._alive = np.ones(n_docs, dtype=np.bool_)
        self._slot_of = dict(zip(doc_ids.tolist(), range(n_docs), strict=True))
        self._n_slots = n_docs
        self._n_live = n_docs
        self._total_len = float(lengths.sum(dtype=np.float64))
        self._n_postings = len(keys)
        self._norm_cache = None

    # ---------------------------------------------------------------- mutation
    def __len__(self) -> int:
        return self._n_live

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot_of

    @property
    def doc_ids(self) -> list[int]:
        """The indexed entry ids, in no particular order."""
        return list(self._slot_of)

    def add(self, doc_id: int, terms: Sequence[str]) -> None:
        """Add an entry, or replace it if ``doc_id`` is already indexed (an upsert)."""
        doc_id = int(doc_id)
        if doc_id in self._slot_of:
            self.remove(doc_id)
        counts: dict[int, int] = {}
        lookup = self._vocab.__getitem__
        for tid in map(lookup, terms):
            counts[tid] = counts.get(tid, 0) + 1
        n_terms = len(self._vocab)
        if n_terms > len(self._df):
            self._df = _grow(self._df, n_terms)
        if n_terms > len(self._tail_len):
            self._tail_start = _grow(self._tail_start, n_terms)
            self._tail_len = _grow(self._tail_len, n_terms)
            self._tail_cap = _grow(self._tail_cap, n_terms)
        slot = self._n_slots
        self._n_slots += 1
        self._doc_ids = _grow(self._doc_ids, self._n_slots)
        self._dl = _grow(self._dl, self._n_slots)
        self._alive = _grow(self._alive, self._n_slots)
        length = float(len(terms))
        self._doc_ids[slot] = doc_id
        self._dl[slot] = length
        self._alive[slot] = True
        self._slot_of[doc_id] = slot
        for tid, tf in counts.items():
            self._tail_append(tid, slot, min(tf, _TF_MAX))
        tids = np.fromiter(counts.keys(), dtype=np.int32, count=len(counts))
        self._df[tids] += 1
        self._fwd[slot] = tids
        self._n_live += 1
        self._total_len += length
        self._n_postings += len(counts)
        self._n_tail_postings += len(counts)
        self._norm_cache = None
        if self._n_tail_postings > max(_TAIL_MIN, _TAIL_SHARE * len(self._csr_slots)):
            self.compact()

    def _tail_append(self, tid: int, slot: int, tf: int) -> None:
        """Append a posting to term ``tid``'s tail, moving the tail to a region of twice
        its capacity at the arena's end when it is full."""
        length = int(self._tail_len[tid])
        if length == self._tail_cap[tid]:
            capacity = max(_MIN_CAPACITY, 2 * length)
            start = self._arena_used
            self._arena_used += capacity
            self._arena_slots = _grow(self._arena_slots, self._arena_used)
            self._arena_tfs = _grow(self._arena_tfs, self._arena_used)
            old = int(self._tail_start[tid])
            self._arena_slots[start : start + length] = self._arena_slots[old : old + length]
            self._arena_tfs[start : start + length] = self._arena_tfs[old : old + length]
            self._tail_start[tid] = start
            self._tail_cap[tid] = capacity
        at = int(self._tail_start[tid]) + length
        self._arena_slots[at] = slot
        self._arena_tfs[at] = tf
        self._tail_len[tid] = length + 1

    def remove(self, doc_id: int) -> bool:
        """Remove an entry; return whether it was indexed."""
        slot = self._slot_of.pop(int(doc_id), None)
        if slot is None:
            return False
        tids = self._terms_of(slot)
        self._df[tids] -= 1
        self._alive[slot] = False
        self._dead.append(slot)
        self._dead_cache = None
        self._fwd.pop(slot, None)
        self._n_live -= 1
        self._total_len -= float(self._dl[slot])
        self._n_postings -= len(tids)
        self._norm_cache = None
        if len(self._dead) >= max(_MIN_CAPACITY, _COMPACT_DEAD_SHARE * self._n_slots):
            self.compact()
        return True

    def _terms_of(self, slot: int) -> IntArray:
        forward = self._fwd.get(slot)
        if forward is not None:
            return forward
        # An entry of the bulk-built block: find its postings there (one vectorised scan).
        positions = np.flatnonzero(self._csr_slots == slot)
        return (np.searchsorted(self._ptr, positions, side="right") - 1).astype(np.int32)

    def compact(self) -> None:
        """Drop dead entries and merge the tails into one CSR block (one sort)."""
        n_csr_terms = len(self._ptr) - 1
        parts_terms = [np.repeat(np.arange(n_csr_terms, dtype=np.int64), np.diff(self._ptr))]
        parts_slots = [self._csr_slots]
        parts_tfs = [self._csr_tfs]
        for tid in np.flatnonzero(self._tail_len).tolist():
            tail_slots, tail_tfs = self._tail(tid)
            parts_terms.append(np.full(len(tail_slots), tid, dtype=np.int64))
            parts_slots.append(tail_slots)
            parts_tfs.append(tail_tfs)
        term_ids = np.concatenate(parts_terms)
        slots = np.concatenate(parts_slots)
        tfs = np.concatenate(parts_tfs)
        alive = self._alive[: self._n_slots]
        keep = alive[slots]
        new_slot = np.cumsum(alive, dtype=np.int64) - 1
        n_live = int(alive.sum())
        keys = (term_ids[keep] << _slot_bits(n_live)) | new_slot[slots[keep]]
        order = np.argsort(keys)
        self._install(
            doc_ids=self._doc_ids[: self._n_slots][alive],
            lengths=self._dl[: self._n_slots][alive],
            sorted_keys=keys[order],
            tfs=tfs[keep][order],
        )

    # ------------------------------------------------------------------ search
    def idf(self, df: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """The floored RSJ IDF of the given document frequencies in this scope."""
        n = self._n_live + self.prior_docs
        df_arr = np.asarray(df, dtype=np.float64)
        return np.maximum(0.0, np.log((n - df_arr + 0.5) / (df_arr + 0.5)))

    def _norms(self) -> tuple[float, FloatArray]:
        """avgdl and the per-slot BM25 length normaliser ``k1 (1 - b + b dl / avgdl)``."""
        avgdl = self._total_len / self._n_live if self._n_live else 1.0
        avgdl = max(avgdl, 1e-9)
        cache = self._norm_cache
        if cache is not None and cache[0] == avgdl and cache[1] == self._n_slots:
            return avgdl, cache[2]
        dl = self._dl[: self._n_slots]
        scale = np.float32(self.k1 * self.b / avgdl)
        norms = (dl * scale + np.float32(self.k1 * (1.0 - self.b))).astype(np.float32)
        self._norm_cache = (avgdl, self._n_slots, norms)
        return avgdl, norms

    def holds(self, doc_ids: Sequence[int], terms: Sequence[str]) -> npt.NDArray[np.bool_]:
        """Which of ``terms`` each entry holds: a ``len(doc_ids) x len(terms)`` matrix.

        One binary search per term over the few entries asked about (the knowledge-base
        gate's coverage of a query by its top hits); an unknown entry holds nothing.
        """
        out = np.zeros((len(doc_ids), len(terms)), dtype=np.bool_)
        known = [(row, self._slot_of[d]) for row, d in enumerate(doc_ids) if d in self._slot_of]
        if not known or not terms:
            return out
        tids = np.fromiter(map(self._vocab.get, terms, itertools.repeat(-1)), np.int64, len(terms))
        columns = np.flatnonzero(tids >= 0)
        if not len(columns):
            return out
        rows = np.fromiter((row for row, _ in known), dtype=np.intp, count=len(known))
        slots = np.fromiter((slot for _, slot in known), dtype=np.int64, count=len(known))
        present = tids[columns]
        last = len(self._ptr) - 1
        tail_lo = self._tail_start[present]
        out[np.ix_(rows, columns)] = holds(
            self._ptr[np.minimum(present, last)],
            self._ptr[np.minimum(present + 1, last)],
            tail_lo,
            tail_lo + self._tail_len[present],
            self._csr_slots,
            self._arena_slots,
            slots,
        )
        return out

    def _tail(self, tid: int) -> tuple[IntArray, TfArray]:
        """Term ``tid``'s tail postings (views of the arena)."""
        start = int(self._tail_start[tid])
        end = start + int(self._tail_len[tid])
        return self._arena_slots[start:end], self._arena_tfs[start:end]

    def search(
        self,
        query_terms: Sequence[str] | Mapping[str, float],
        *,
        k: int,
        exclude: Collection[int] = frozenset(),
    ) -> list[Hit]:
        """The ``k`` best entries for a query, best first, with their gate evidence.

        ``query_terms`` is a bag of terms (each occurrence weighs 1) or a mapping
        ``term -> weight`` (see :mod:`memory.recall.query`). Entries with no evidence (raw
        score 0) are never returned; ties are broken by ``doc_id``. Query terms that no
        entry of the scope contains take no part in the ranking; they are counted in the
        evidence (:class:`memory.recall.gating.QueryEvidence`), which the gate weighs.
        """
        ranked = self._rank(query_terms, k=k, exclude=exclude)
        if ranked is None:
            return []
        df = self._df
        vocab = self._vocab
        informative = ranked.masses > 0.0
        names = getattr(query_terms, "names", ())
        mentions = [0 if tid is None else int(df[tid]) for tid in map(vocab.get, names)]
        # A typical entry: it holds term t with probability df/N, and one occurrence in
        # an entry of average length adds w idf (BM25's tf/length factor is 1 there).
        share = ranked.term_df / self._n_live
        masses, top_raws = ranked.masses, ranked.raws
        query = QueryEvidence(
            entries=self._n_live,
            known_weight=float(ranked.term_weights[informative].sum()),
            known_mass=float(masses.sum()),
            unknown_weight=ranked.unknown_weight,
            unseen_idf=float(self.idf(0)),
            background=float((masses * share).sum()),
            spread=float(np.sqrt((masses**2 * share * (1.0 - share)).sum())),
            cjk_weight=float(ranked.term_weights[informative & ranked.known_cjk].sum())
            + ranked.unknown_cjk,
            names_seen=any(mentions),
            names_unseen=not all(mentions),
            names_common=any(2 * m >= self._n_live for m in mentions),
            known_terms=int(informative.sum()),
            tenth=float(top_raws[BACKGROUND_RANK - 1]) if len(top_raws) >= BACKGROUND_RANK else 0.0,
        )
        scores = relevance_many(top_raws, query)
        doc_ids = self._doc_ids[ranked.slots].tolist()
        hits = [
            Hit(doc_id, score, raw, Evidence(raw=raw, query=query))
            for doc_id, score, raw in zip(doc_ids, scores.tolist(), top_raws.tolist(), strict=True)
        ]
        return hits

    def rank(
        self, query_terms: Sequence[str] | Mapping[str, float], *, k: int
    ) -> list[tuple[int, float]]:
        """``(doc_id, raw BM25)`` of the ``k`` best entries, as :meth:`search` ranks
        them, without the recall gate's evidence (the knowledge base has its own gate)."""
        ranked = self._rank(query_terms, k=k, exclude=frozenset())
        if ranked is None:
            return []
        return list(zip(self._doc_ids[ranked.slots].tolist(), ranked.raws.tolist(), strict=True))

    def _rank(
        self,
        query_terms: Sequence[str] | Mapping[str, float],
        *,
        k: int,
        exclude: Collection[int],
    ) -> _Ranked | None:
        """The ``k`` best slots and what the query's known terms weigh (None: no hit)."""
        if k <= 0 or self._n_live == 0:
            return None
        weights = _as_weights(query_terms)
        vocab = self._vocab
        df = self._df
        count = len(weights)
        looked_up = map(vocab.get, weights, itertools.repeat(-1))
        all_tids = np.fromiter(looked_up, dtype=np.int64, count=count)
        all_df = np.zeros(count, dtype=np.int64)
        found = all_tids >= 0
        all_df[found] = df[all_tids[found]]
        known = all_df > 0
        if not known.any():
            return None
        all_weights = np.fromiter(weights.values(), dtype=np.float64, count=count)
        all_cjk = np.fromiter(map(is_cjk_term, weights), dtype=np.bool_, count=count)
        # Weight of the query terms that no entry contains, and the part of it carried by
        # CJK terms: summed one by one in query order, as the gate was fitted.
        unknown_weight = sum(all_weights[~known].tolist(), 0.0)
        unknown_cjk = sum(all_weights[~known & all_cjk].tolist(), 0.0)
        tids = all_tids[known]
        term_weights = all_weights[known]
        known_cjk = all_cjk[known]
        term_df = all_df[known]
        idfs = self.idf(term_df)
        masses = term_weights * idfs
        if not masses.max() > 0.0:
            return None
        _avgdl, norms = self._norms()
        informative = masses > 0.0
        ordered = tids[informative]
        # A term's block postings are ptr[t]:ptr[t + 1]; a term newer than the block has
        # none there (both ends clip to the block's end), only a tail.
        last = len(self._ptr) - 1
        tail_lo = self._tail_start[ordered]
        slots, raws = top_k(
            self._ptr[np.minimum(ordered, last)],
            self._ptr[np.minimum(ordered + 1, last)],
            tail_lo,
            tail_lo + self._tail_len[ordered],
            (masses[informative] * (self.k1 + 1.0)).astype(np.float32),
            self._csr_slots,
            self._csr_tfs,
            self._arena_slots,
            self._arena_tfs,
            norms,
            self._blocked(exclude),
            int(k),
        )
        # The kernel returns every entry tied with the k-th best: ties go to the lower doc_id.
        top = np.lexsort((self._doc_ids[slots], -raws))[:k]
        return _Ranked(
            slots=slots[top],
            raws=raws[top].astype(np.float64),
            term_weights=term_weights,
            term_df=term_df,
            masses=masses,
            known_cjk=known_cjk,
            unknown_weight=unknown_weight,
            unknown_cjk=unknown_cjk,
        )

    def _blocked(self, exclude: Collection[int]) -> npt.NDArray[np.int64]:
        """Slots that must not be returned: dead entries and the excluded ones."""
        parts: list[npt.NDArray[np.int64]] = []
        if self._dead:
            if self._dead_cache is None:
                self._dead_cache = np.asarray(self._dead, dtype=np.int64)
            parts.append(self._dead_cache)
        if exclude:
            excluded = [self._slot_of[d] for d in exclude if d in self._slot_of]
            if excluded:
                parts.append(np.asarray(excluded, dtype=np.int64))
        if not parts:
            return _NO_SLOTS
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    # ------------------------------------------------------------- statistics
    @property
    def average_length(self) -> float:
        """Average entry length in terms (0 for an empty index)."""
        return self._total_len / self._n_live if self._n_live else 0.0

    def document_frequency(self, term: str) -> int:
        """How many live entries contain ``term``."""
        tid = self._vocab.get(term)
        return 0 if tid is None else int(self._df[tid])

    def nbytes(self) -> int:
        """Approximate memory held by the index's arrays (not the Python dicts)."""
        arrays: list[npt.NDArray[np.generic]] = [
            self._df,
            self._ptr,
            self._csr_slots,
            self._csr_tfs,
            self._doc_ids,
            self._dl,
            self._alive,
            self._tail_start,
            self._tail_len,
            self._tail_cap,
            self._arena_slots,
            self._arena_tfs,
        ]
        return sum(a.nbytes for a in arrays)


def _slot_bits(n_docs: int) -> int:
    """Bits that hold a slot number in a packed ``term_id << bits | slot`` key."""
    return max(1, (n_docs - 1).bit_length())


def _as_weights(query_terms: Sequence[str] | Mapping[str, float]) -> dict[str, float]:
    if isinstance(query_terms, str):
        raise TypeError("pass terms (see memory.recall.tokenize), not a text")
    if isinstance(query_terms, Mapping):
        return {t: float(w) for t, w in query_terms.items() if w > 0}
    weights: dict[str, float] = {}
    for term in query_terms:
        weights[term] = weights.get(term, 0.0) + 1.0
    return weights


def warm() -> None:
    """Compile (or load from numba's disk cache) the search's compiled functions, for
    every argument type a search and :meth:`RecallIndex.holds` pass them: a tiny index
    with a bulk block and a tail, searched once. ``manage.py search_warm`` (``make
    serve`` runs it) does this before the web starts, so that no teacher's first search
    waits seconds for the compiler and the web processes find the cache on disk instead of
    each compiling it."""
    index = RecallIndex.from_documents([(1, ["warm", "up"]), (2, ["warm"])])
    index.add(3, ["up", "up"])
    index.search({"warm": 1.0, "up": 0.5}, k=1, exclude={2})
    index.holds([1, 3], ["up", "cold"])


def brute_force_raw(
    documents: Mapping[int, Sequence[str]],
    query_terms: Sequence[str] | Mapping[str, float],
    *,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    prior_docs: int = PRIOR_DOCS,
) -> dict[int, float]:
    """Reference BM25 with the index's formula, one entry at a time.

    Slow and obvious on purpose: the tests compare the index with it.
    """
    weights = _as_weights(query_terms)
    n = len(documents)
    if n == 0:
        return {}
    avgdl = sum(len(t) for t in documents.values()) / n
    df: dict[str, int] = {}
    for doc_terms in documents.values():
        for term in set(doc_terms):
            df[term] = df.get(term, 0) + 1
    out: dict[int, float] = {}
    for doc_id, doc_terms in documents.items():
        total = 0.0
        for term, weight in weights.items():
            tf = list(doc_terms).count(term)
            if tf == 0:
                continue
            idf = max(0.0, math.log((n + prior_docs - df[term] + 0.5) / (df[term] + 0.5)))
            norm = k1 * (1 - b + b * len(doc_terms) / avgdl) if avgdl else k1
            total += weight * idf * tf * (k1 + 1) / (tf + norm)
        out[doc_id] = total
    return out
