"""In-memory BM25 index for episodic recall, with a calibrated relevance score.

One index holds one memory scope (tenant, agent, owner). Documents are recall entries,
identified by an integer ``doc_id`` and given as pre-tokenised terms (see
:mod:`memory.recall.tokenize`); the index never tokenises anything itself.

Ranking
    Okapi BM25 with ``k1`` and ``b`` (defaults 1.2 and 0.75, the usual values) and the
    Robertson–Spärck Jones IDF floored at zero, computed as if the scope also held
    ``PRIOR_DOCS`` entries that contain none of the query's terms::

        idf(t) = max(0, ln((N + N0 - df + 0.5) / (df + 0.5)))

    A term found in at least half of the entries carries no evidence and is skipped (which
    also keeps the longest postings lists out of every search), and the ``N0`` pseudo-entries
    keep a scope of only a few entries usable (with N0 = 0, a term of a one-entry scope
    would weigh nothing).  A query is a bag of terms or a mapping ``term -> weight``;
    the raw score is ``sum_t w_t * idf(t) * tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))``.

Calibrated score (``Hit.score``, in [0, 1])
    The share of the query's evidence that the entry matches::

        score = min(1, raw / (Q_L + PRIOR_TERMS * idf0))

    where ``Q_L`` is the sum of the ``L`` largest ``w_t * idf(t)`` over the query's terms
    (``L`` = the average number of distinct terms of an entry in the scope, because no
    entry of ordinary size can match more terms than it has) and ``idf0`` is the IDF of a
    term found in no entry. One occurrence of a term in an entry of average length counts
    fully (BM25's tf/length factor is 1 there), so an entry that contains each of the
    query's L strongest terms once scores about ``Q_L / (Q_L + 4 idf0)``. A query term
    that no entry contains still counts in ``Q_L``: a query about something the scope has
    never seen must not look covered. The ``PRIOR_TERMS`` pseudo-terms are a prior of
    four unmatched rare terms: a short query (few terms, little evidence) needs a
    proportionally larger share before it scores high, so that a fixed gate fires about as
    often on a one-line request as on a long one, and on Chinese as on English.

    The score is a monotone function of ``raw`` within a query, so the ranking is plain
    BM25; only the gate uses the calibration. The gate (:func:`gate`) injects the top
    three hits whose score is at least the threshold (default 0.2).

Data layout (for speed)
    Postings are stored per term as parallel ``int32`` slot and ``float32`` tf arrays. A
    bulk build (:meth:`RecallIndex.from_documents`) writes them into one CSR block; a
    term that later receives postings gets its own growable array (copied from the block
    once, then doubled as needed), so incremental adds cost amortised O(distinct terms).
    Removal marks the entry's slot dead (its postings stay as tombstones, ignored at search)
    and updates document frequencies; when dead slots reach a quarter of all slots the
    index compacts itself. A search accumulates ``w * idf * saturation`` over the postings
    of the query's weighted terms into a dense per-slot array and takes the top k with
    ``argpartition``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_B",
    "DEFAULT_K1",
    "DEFAULT_THRESHOLD",
    "GATE_LIMIT",
    "PRIOR_DOCS",
    "PRIOR_TERMS",
    "Hit",
    "RecallIndex",
    "gate",
]

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75
#: Pseudo-entries added to N in the IDF (they contain none of the query's terms).
PRIOR_DOCS = 10
#: Unmatched pseudo-terms of the rarest kind added to the score's denominator.
PRIOR_TERMS = 4.0
#: Default gate threshold (a setting in the Django layer).
DEFAULT_THRESHOLD = 0.2
#: At most this many hits are injected.
GATE_LIMIT = 3

_COMPACT_DEAD_SHARE = 0.25
_MIN_CAPACITY = 8

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the entry, its calibrated score in [0, 1] and its raw BM25."""

    doc_id: int
    score: float
    raw: float


def gate(
    hits: Sequence[Hit], *, threshold: float = DEFAULT_THRESHOLD, limit: int = GATE_LIMIT
) -> list[Hit]:
    """The hits to inject: among the ``limit`` best, those scoring at least ``threshold``."""
    return [hit for hit in hits[:limit] if hit.score >= threshold]


class _Growable:
    """A term's own postings: slot and tf arrays with spare capacity."""

    __slots__ = ("n", "slots", "tfs")

    def __init__(self, slots: IntArray, tfs: FloatArray, extra: int) -> None:
        n = len(slots)
        capacity = max(_MIN_CAPACITY, 2 * (n + extra))
        self.slots: IntArray = np.empty(capacity, dtype=np.int32)
        self.tfs: FloatArray = np.empty(capacity, dtype=np.float32)
        self.slots[:n] = slots
        self.tfs[:n] = tfs
        self.n = n

    def append(self, slot: int, tf: float) -> None:
        if self.n == len(self.slots):
            capacity = 2 * len(self.slots)
            slots = np.empty(capacity, dtype=np.int32)
            tfs = np.empty(capacity, dtype=np.float32)
            slots[: self.n] = self.slots[: self.n]
            tfs[: self.n] = self.tfs[: self.n]
            self.slots, self.tfs = slots, tfs
        self.slots[self.n] = slot
        self.tfs[self.n] = tf
        self.n += 1


def _grow(array: npt.NDArray[np.generic], size: int) -> npt.NDArray[np.generic]:
    """``array`` with room for at least ``size`` items (doubling), contents kept."""
    if size <= len(array):
        return array
    grown = np.zeros(max(size, 2 * len(array), _MIN_CAPACITY), dtype=array.dtype)
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
        prior_terms: float = PRIOR_TERMS,
    ) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0 or prior_docs < 0 or prior_terms < 0:
            raise ValueError("k1, prior_docs, prior_terms must be >= 0 and b within [0, 1]")
        self.k1 = float(k1)
        self.b = float(b)
        self.prior_docs = int(prior_docs)
        self.prior_terms = float(prior_terms)
        self._vocab: dict[str, int] = {}
        self._df: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        # Bulk-built postings (CSR by term id); terms past len(_ptr) - 1 have none there.
        self._ptr: npt.NDArray[np.int64] = np.zeros(1, dtype=np.int64)
        self._csr_slots: IntArray = np.zeros(0, dtype=np.int32)
        self._csr_tfs: FloatArray = np.zeros(0, dtype=np.float32)
        self._own: dict[int, _Growable] = {}
        # Documents by slot.
        self._slot_of: dict[int, int] = {}
        self._doc_ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._dl: FloatArray = np.zeros(0, dtype=np.float32)
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)
        self._n_slots = 0
        self._n_csr_slots = 0  # slots whose postings live (at least partly) in the CSR block
        self._fwd: dict[int, tuple[IntArray, FloatArray]] = {}  # slot -> terms, for later adds
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
        prior_terms: float = PRIOR_TERMS,
    ) -> RecallIndex:
        """Build an index from ``(doc_id, terms)`` pairs in one pass (vectorised).

        A ``doc_id`` given twice keeps its last terms.
        """
        index = cls(k1=k1, b=b, prior_docs=prior_docs, prior_terms=prior_terms)
        vocab = index._vocab
        setdefault = vocab.setdefault
        latest: dict[int, int] = {}
        term_ids: list[IntArray] = []
        counts: list[FloatArray] = []
        lengths: list[int] = []
        doc_ids: list[int] = []
        for doc_id, doc_terms in documents:
            doc_id = int(doc_id)
            ids = np.fromiter(
                (setdefault(term, len(vocab)) for term in doc_terms),
                dtype=np.int32,
                count=len(doc_terms),
            )
            unique, tf = np.unique(ids, return_counts=True)
            if doc_id in latest:
                term_ids[latest[doc_id]] = np.zeros(0, dtype=np.int32)
                counts[latest[doc_id]] = np.zeros(0, dtype=np.float32)
                lengths[latest[doc_id]] = -1
            latest[doc_id] = len(doc_ids)
            term_ids.append(unique.astype(np.int32, copy=False))
            counts.append(tf.astype(np.float32))
            lengths.append(len(doc_terms))
            doc_ids.append(doc_id)
        keep = [i for i, length in enumerate(lengths) if length >= 0]
        if len(keep) != len(lengths):
            term_ids = [term_ids[i] for i in keep]
            counts = [counts[i] for i in keep]
            lengths = [lengths[i] for i in keep]
            doc_ids = [doc_ids[i] for i in keep]
        n_docs = len(doc_ids)
        sizes = np.fromiter((len(t) for t in term_ids), dtype=np.int64, count=n_docs)
        flat_terms = np.concatenate(term_ids) if n_docs else np.zeros(0, dtype=np.int32)
        flat_tfs = np.concatenate(counts) if n_docs else np.zeros(0, dtype=np.float32)
        flat_slots = np.repeat(np.arange(n_docs, dtype=np.int32), sizes)
        index._load(
            doc_ids=np.asarray(doc_ids, dtype=np.int64),
            lengths=np.asarray(lengths, dtype=np.float32),
            flat_terms=flat_terms,
            flat_slots=flat_slots,
            flat_tfs=flat_tfs,
        )
        return index

    def _load(
        self,
        *,
        doc_ids: npt.NDArray[np.int64],
        lengths: FloatArray,
        flat_terms: IntArray,
        flat_slots: IntArray,
        flat_tfs: FloatArray,
    ) -> None:
        """Install postings given doc-major flat arrays (slots 0..n-1, all alive)."""
        n_docs = len(doc_ids)
        n_terms = len(self._vocab)
        order = np.argsort(flat_terms, kind="stable")
        self._csr_slots = flat_slots[order]
        self._csr_tfs = flat_tfs[order]
        df = np.bincount(flat_terms, minlength=n_terms).astype(np.int64)
        self._ptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df, out=self._ptr[1:])
        self._df = df
        self._own = {}
        self._fwd = {}
        self._dead = []
        self._dead_cache = None
        self._doc_ids = doc_ids.copy()
        self._dl = lengths.copy()
        self._alive = np.ones(n_docs, dtype=np.bool_)
        self._slot_of = {int(d): slot for slot, d in enumerate(doc_ids.tolist())}
        self._n_slots = n_docs
        self._n_csr_slots = n_docs
        self._n_live = n_docs
        self._total_len = float(lengths.sum(dtype=np.float64))
        self._n_postings = len(flat_terms)
        self._norm_cache = None

    # ---------------------------------------------------------------- mutation
    def __len__(self) -> int:
        return self._n_live

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot_of

    def add(self, doc_id: int, terms: Sequence[str]) -> None:
        """Add an entry, or replace it if ``doc_id`` is already indexed (an upsert)."""
        doc_id = int(doc_id)
        if doc_id in self._slot_of:
            self.remove(doc_id)
        counts: dict[int, int] = {}
        vocab = self._vocab
        for term in terms:
            tid = vocab.get(term)
            if tid is None:
                tid = vocab[term] = len(vocab)
            counts[tid] = counts.get(tid, 0) + 1
        if len(vocab) > len(self._df):
            self._df = _grow(self._df, len(vocab))  # type: ignore[assignment]
        slot = self._n_slots
        self._n_slots += 1
        self._doc_ids = _grow(self._doc_ids, self._n_slots)  # type: ignore[assignment]
        self._dl = _grow(self._dl, self._n_slots)  # type: ignore[assignment]
        self._alive = _grow(self._alive, self._n_slots)  # type: ignore[assignment]
        self._doc_ids[slot] = doc_id
        self._dl[slot] = len(terms)
        self._alive[slot] = True
        self._slot_of[doc_id] = slot
        n_csr_terms = len(self._ptr) - 1
        own = self._own
        for tid, tf in counts.items():
            postings = own.get(tid)
            if postings is None:
                if tid < n_csr_terms:
                    lo, hi = int(self._ptr[tid]), int(self._ptr[tid + 1])
                    postings = _Growable(self._csr_slots[lo:hi], self._csr_tfs[lo:hi], 1)
                else:
                    postings = _Growable(
                        np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32), 1
                    )
                own[tid] = postings
            postings.append(slot, float(tf))
        tids = np.fromiter(counts.keys(), dtype=np.int32, count=len(counts))
        tfs = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
        self._df[tids] += 1
        self._fwd[slot] = (tids, tfs)
        self._n_live += 1
        self._total_len += len(terms)
        self._n_postings += len(counts)
        self._norm_cache = None

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
            return forward[0]
        # An entry of the bulk-built block: find its postings there (one vectorised scan).
        positions = np.flatnonzero(self._csr_slots == slot)
        return (np.searchsorted(self._ptr, positions, side="right") - 1).astype(np.int32)

    def compact(self) -> None:
        """Drop dead entries and merge every term's postings into one CSR block."""
        parts_terms: list[IntArray] = []
        parts_slots: list[IntArray] = []
        parts_tfs: list[FloatArray] = []
        n_csr_terms = len(self._ptr) - 1
        csr_terms = np.repeat(np.arange(n_csr_terms, dtype=np.int32), np.diff(self._ptr))
        own_ids = np.fromiter(self._own.keys(), dtype=np.int32, count=len(self._own))
        keep_csr = ~np.isin(csr_terms, own_ids)
        parts_terms.append(csr_terms[keep_csr])
        parts_slots.append(self._csr_slots[keep_csr])
        parts_tfs.append(self._csr_tfs[keep_csr])
        for tid, postings in self._own.items():
            parts_terms.append(np.full(postings.n, tid, dtype=np.int32))
            parts_slots.append(postings.slots[: postings.n])
            parts_tfs.append(postings.tfs[: postings.n])
        flat_terms = np.concatenate(parts_terms)
        flat_slots = np.concatenate(parts_slots)
        flat_tfs = np.concatenate(parts_tfs)
        alive = self._alive[: self._n_slots]
        keep = alive[flat_slots]
        new_slot = np.cumsum(alive, dtype=np.int64) - 1
        flat_terms = flat_terms[keep]
        flat_slots = new_slot[flat_slots[keep]].astype(np.int32)
        flat_tfs = flat_tfs[keep]
        # Doc-major order (slot, then term) so that _load's stable sort keeps slots ascending.
        order = np.lexsort((flat_terms, flat_slots))
        self._load(
            doc_ids=self._doc_ids[: self._n_slots][alive],
            lengths=self._dl[: self._n_slots][alive],
            flat_terms=flat_terms[order],
            flat_slots=flat_slots[order],
            flat_tfs=flat_tfs[order],
        )

    # ------------------------------------------------------------------ search
    def _norms(self) -> FloatArray:
        """Per-slot BM25 length normaliser ``k1 (1 - b + b dl / avgdl)``, cached."""
        avgdl = self._total_len / self._n_live if self._n_live else 1.0
        cache = self._norm_cache
        if cache is not None and cache[0] == avgdl and cache[1] == self._n_slots:
            return cache[2]
        dl = self._dl[: self._n_slots]
        scale = np.float32(self.k1 * self.b / max(avgdl, 1e-9))
        norms = (dl * scale + np.float32(self.k1 * (1.0 - self.b))).astype(np.float32)
        self._norm_cache = (avgdl, self._n_slots, norms)
        return norms

    def idf(self, df: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """The floored RSJ IDF of the given document frequencies in this scope."""
        n = self._n_live + self.prior_docs
        df_arr = np.asarray(df, dtype=np.float64)
        return np.maximum(0.0, np.log((n - df_arr + 0.5) / (df_arr + 0.5)))

    def _postings(self, tid: int) -> tuple[IntArray, FloatArray]:
        postings = self._own.get(tid)
        if postings is not None:
            return postings.slots[: postings.n], postings.tfs[: postings.n]
        lo, hi = int(self._ptr[tid]), int(self._ptr[tid + 1])
        return self._csr_slots[lo:hi], self._csr_tfs[lo:hi]

    def search(
        self,
        query_terms: Sequence[str] | Mapping[str, float],
        *,
        k: int,
        exclude: Collection[int] = frozenset(),
    ) -> list[Hit]:
        """The ``k`` best entries for a query, best first, with calibrated scores.

        ``query_terms`` is a bag of terms (each occurrence weighs 1) or a mapping
        ``term -> weight`` (see :func:`memory.recall.tokenize.query_weights`). Entries with
        no evidence (raw score 0) are never returned; ties are broken by ``doc_id``.
        """
        if k <= 0 or self._n_live == 0:
            return []
        weights = _as_weights(query_terms)
        if not weights:
            return []
        vocab = self._vocab
        df = self._df
        known: list[tuple[int, float]] = []
        unknown: list[float] = []  # weights of query terms that no entry contains
        for term, weight in weights.items():
            tid = vocab.get(term)
            if tid is not None and df[tid] > 0:
                known.append((tid, weight))
            else:
                unknown.append(weight)
        if not known:
            return []
        idf0 = float(self.idf(0))
        tids = np.fromiter((t for t, _ in known), dtype=np.int64, count=len(known))
        idfs = self.idf(df[tids]).tolist()
        masses = [w * i for (_, w), i in zip(known, idfs, strict=True)]
        if max(masses) <= 0.0:
            return []
        denominator = self._denominator(masses + [w * idf0 for w in unknown], idf0)
        norms = self._norms()
        scores = np.zeros(self._n_slots, dtype=np.float32)
        k1p1 = self.k1 + 1.0
        for (tid, _), mass in zip(known, masses, strict=True):
            if mass <= 0.0:
                continue
            slots, tfs = self._postings(tid)
            scores[slots] += tfs * np.float32(mass * k1p1) / (tfs + norms[slots])
        if self._dead:
            if self._dead_cache is None:
                self._dead_cache = np.asarray(self._dead, dtype=np.int64)
            scores[self._dead_cache] = 0.0
        if exclude:
            excluded = [self._slot_of[d] for d in exclude if d in self._slot_of]
            if excluded:
                scores[np.asarray(excluded, dtype=np.int64)] = 0.0
        return self._top(scores, k, denominator)

    def _denominator(self, masses: list[float], idf0: float) -> float:
        """``Q_L + PRIOR_TERMS * idf0``: the evidence the score is a share of."""
        n_distinct = max(1, round(self._n_postings / self._n_live))
        if len(masses) > n_distinct:
            masses = sorted(masses, reverse=True)[:n_distinct]
        return sum(masses) + self.prior_terms * idf0

    def _top(self, scores: FloatArray, k: int, denominator: float) -> list[Hit]:
        n = len(scores)
        candidates = np.argpartition(scores, n - k)[n - k :] if k < n else np.arange(n)
        raws = scores[candidates]
        positive = raws > 0
        candidates, raws = candidates[positive], raws[positive]
        doc_ids = self._doc_ids[candidates]
        order = np.lexsort((doc_ids, -raws))
        hits: list[Hit] = []
        for i in order.tolist():
            raw = float(raws[i])
            hits.append(Hit(int(doc_ids[i]), min(1.0, raw / denominator), raw))
        return hits

    # ------------------------------------------------------------- statistics
    @property
    def average_length(self) -> float:
        """Average entry length in terms (0 for an empty index)."""
        return self._total_len / self._n_live if self._n_live else 0.0

    def document_frequency(self, term: str) -> int:
        """How many live entries contain ``term``."""
        tid = self._vocab.get(term)
        return 0 if tid is None else int(self._df[tid])


def _as_weights(query_terms: Sequence[str] | Mapping[str, float]) -> dict[str, float]:
    if isinstance(query_terms, Mapping):
        return {t: float(w) for t, w in query_terms.items() if w > 0}
    weights: dict[str, float] = {}
    for term in query_terms:
        weights[term] = weights.get(term, 0.0) + 1.0
    return weights


def brute_force_raw(
    documents: Mapping[int, Sequence[str]],
    query_terms: Sequence[str] | Mapping[str, float],
    *,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    prior_docs: int = PRIOR_DOCS,
) -> dict[int, float]:
    """Reference BM25 (same formula as :class:`RecallIndex`), one entry at a time.

    Slow and obvious on purpose: tests compare the index with it.
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
            tf = doc_terms.count(term)
            if tf == 0:
                continue
            idf = max(0.0, math.log((n + prior_docs - df[term] + 0.5) / (df[term] + 0.5)))
            norm = k1 * (1 - b + b * len(doc_terms) / avgdl) if avgdl else k1
            total += weight * idf * tf * (k1 + 1) / (tf + norm)
        out[doc_id] = total
    return out
