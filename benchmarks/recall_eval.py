"""Evaluate episodic recall (L3) and fit its gate, with the query the product builds.

Run from the project root::

    .venv/bin/python benchmarks/recall_eval.py              # the tables (~1 min)
    .venv/bin/python benchmarks/recall_eval.py --fit        # refit the gate, print COEFFICIENTS
    .venv/bin/python benchmarks/recall_eval.py --tokenizers # bigrams vs jieba vs rjieba
    .venv/bin/python benchmarks/recall_eval.py --candidates # candidate gate features (~5 min)
    .venv/bin/python benchmarks/recall_eval.py --query-cuts # top-N / seen-only queries
    .venv/bin/python benchmarks/recall_eval.py --json out.json

Development sets (``benchmarks/recall_dev.py`` loads them):

* ``madial-zh``, ``madial-en``: MADial-Bench (MIT), one scope per user, entries are
  memories; a question is a dialogue before its test turn. The product's query is built
  from it as a conversation: the last user utterance is the message, the two turns before
  it are the thread's recent turns, the older user turns stand in for the rolling summary.
* ``teacher``: ``benchmarks/recall_teacher_data.py`` (generated, seeded): 36 teachers
  (200-300 runs each; one in four is new, with 8-40); paraphrased references back,
  vague follow-ups in a thread about a topic, and questions with no relevant past run.
* ``people-en``: ``benchmarks/recall_people_data.py`` (generated, seeded): 16 pairs of
  friends chatting over 10-14 sessions, questions that name the person; a mechanism
  check (names unknown to another pair's memory), not a target.
* ``memorybank-en``, ``memorybank-cn``: MemoryBank-SiliconFriend (MIT), 15 users x 10
  days of chat with a companion, one entry per turn, its probing questions asked alone
  against the user's memory and against each of the 14 others; relevance is ours
  (``benchmarks/data/memorybank_relevance.json``, with the rule). Read from a local git
  mirror (``AGENT_MEMORY_MEMORYBANK``); without it these two sets are skipped and the
  run says so.

Splits: every set has a *held-back* part that the gate is never fitted on (MADial: 30 %
of the dialogues, by a hash of the dialogue number; teacher: 10 of the 36 teachers;
people-en: 5 of the 16 pairs; MemoryBank: every third user). The
relevance labels of the development part are the only labels the fit sees.

Measured, per set and split, for today's recall and the new one side by side:

* R@k (the MADial authors' formula: |top k ∩ relevant| / |relevant|) and Hit@3 (a
  relevant entry among the top 3), over answerable questions;
* relevant injected: a relevant entry is among the top 3 *and* passes the gate;
* false injection: the same question asked against another person's memory (MADial:
  the other user; teacher: one teacher of another subject; people-en: one other pair;
  MemoryBank: each other user), counted per (question, memory) pair: anything passes;
* no-answer fires (teacher): a question with no relevant past run fires on its own scope.

"today" is the shipped recall before this change (``benchmarks/_recall_legacy.py``): its
tokenizer, the query it was given (the message alone: ``context_assemble`` passed only
the user's input) and its score with the fixed prior at 0.2; "today's gate, conv." is
the same with the conversation query the product now builds. "new" is
:func:`memory.recall.build_query` + :class:`memory.recall.RecallIndex` + the gate at its
default threshold.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _recall_legacy as legacy
from recall import cut_query
from recall_dev import Ask, DevSet, load_all

from memory.recall import gating as gate_module
from memory.recall import query as query_module
from memory.recall.gating import (
    DEFAULT_THRESHOLD,
    FEATURES,
    GATE_LIMIT,
    RELATIVE_FLOOR,
    Evidence,
    features,
    gate,
)
from memory.recall.index import RecallIndex
from memory.recall.query import ConversationTurn, build_query
from memory.recall.tokenize import terms

KS = (1, 3, 5, 10)
SEARCH_K = 10
MAX_FALSE = 0.05


# ---------------------------------------------------------------------- systems
@dataclass
class Ranked:
    doc_id: int
    score: float
    evidence: Evidence | None = None

    @property
    def raw(self) -> float:
        # Today's score is a fixed multiple of raw within a query: the same order.
        return self.evidence.raw if self.evidence is not None else self.score


class System:
    name = "system"

    def build(self, entries: Sequence[tuple[int, str]]) -> RecallIndex:
        raise NotImplementedError

    def rank(self, index: RecallIndex, ask: Ask, k: int) -> list[Ranked]:
        raise NotImplementedError

    threshold = 0.0


class Today(System):
    """Before gate v2: legacy terms, the message alone, the fixed-prior score at 0.2."""

    name = "today"
    threshold = legacy.THRESHOLD

    def build(self, entries: Sequence[tuple[int, str]]) -> RecallIndex:
        return RecallIndex.from_documents((eid, legacy.terms(text)) for eid, text in entries)

    def rank(self, index: RecallIndex, ask: Ask, k: int) -> list[Ranked]:
        weights = legacy.query_weights(ask.message)
        return [Ranked(d, s) for d, s in legacy.legacy_scores(index, weights, k)]


class TodayGateConversation(Today):
    """Today's terms and gate, given the conversation the way the product now builds it
    (the same turns, weights and cuts as memory.recall.build_query)."""

    name = "today's gate, conv."

    def rank(self, index: RecallIndex, ask: Ask, k: int) -> list[Ranked]:
        texts: list[str] = []
        weights: list[float] = []
        if ask.summary.strip():
            texts.append(ask.summary[-query_module.SUMMARY_CHARS :])
            weights.append(query_module.SUMMARY_WEIGHT)
        for age, (user, assistant) in zip(range(len(ask.turns), 0, -1), ask.turns, strict=True):
            weight = query_module.TURN_DECAY**age
            texts.append(user)
            weights.append(weight)
            if assistant:
                texts.append(assistant[: query_module.ASSISTANT_CHARS])
                weights.append(weight * query_module.ASSISTANT_WEIGHT)
        texts.append(ask.message)
        weights.append(1.0)
        query = legacy.query_weights(texts, decay=1.0, turn_weights=weights)
        return [Ranked(d, s) for d, s in legacy.legacy_scores(index, query, k)]


class New(System):
    """The product now: build_query over the conversation, RecallIndex, the v2 gate."""

    name = "new"

    def __init__(
        self,
        *,
        tokenize: Callable[[str], list[str]] = terms,
        query: Callable[[Ask], dict[str, float]] | None = None,
        relevance: Callable[[Evidence], float] | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        name: str = "new",
    ) -> None:
        self.tokenize = tokenize
        self.query = query or product_query
        self.relevance = relevance
        self.threshold = threshold
        self.name = name

    def build(self, entries: Sequence[tuple[int, str]]) -> RecallIndex:
        return RecallIndex.from_documents((eid, self.tokenize(text)) for eid, text in entries)

    def rank(self, index: RecallIndex, ask: Ask, k: int) -> list[Ranked]:
        hits = index.search(self.query(ask), k=k)
        if self.relevance is None:
            return [Ranked(h.doc_id, h.score, h.evidence) for h in hits]
        return [Ranked(h.doc_id, self.relevance(h.evidence), h.evidence) for h in hits]


class CutQuery(New):
    """The new system with the query cut before the search (:func:`recall.cut_query`):
    a measurement of cuts the product does not make (``--query-cuts``)."""

    def __init__(self, *, max_terms: int | None = None, drop_unseen: bool = False) -> None:
        parts = ([f"top {max_terms}"] if max_terms is not None else []) + (
            ["seen"] if drop_unseen else []
        )
        super().__init__(name="new, " + " ".join(parts))
        self.max_terms = max_terms
        self.drop_unseen = drop_unseen

    def rank(self, index: RecallIndex, ask: Ask, k: int) -> list[Ranked]:
        query = cut_query(
            index, self.query(ask), max_terms=self.max_terms, drop_unseen=self.drop_unseen
        )
        return [Ranked(h.doc_id, h.score, h.evidence) for h in index.search(query, k=k)]


#: The cuts ``--query-cuts`` compares with the uncut query.
QUERY_CUTS: tuple[tuple[int | None, bool], ...] = (
    (24, False),
    (20, False),
    (16, False),
    (12, False),
    (None, True),
)


def product_query(ask: Ask) -> dict[str, float]:
    """The query the product builds for this question (memory.recall.build_query)."""
    return build_query(
        message=ask.message,
        turns=[ConversationTurn(user, assistant) for user, assistant in ask.turns],
        summary=ask.summary,
    )


# ---------------------------------------------------------------------- running
@dataclass
class Result:
    """Per-question outcome of one system on one set."""

    ask: Ask
    own: list[Ranked]
    other_best: float  # best score against the other person's memory (0 if nothing)
    other_hits: list[list[Ranked]]


def run(system: System, data: DevSet) -> list[Result]:
    indexes = {sid: system.build(entries) for sid, entries in data.scopes.items()}
    out = []
    for ask in data.asks:
        own = system.rank(indexes[ask.scope], ask, SEARCH_K)
        other_hits = [system.rank(indexes[o], ask, SEARCH_K) for o in ask.others]
        best = max((r.score for hits in other_hits for r in hits), default=0.0)
        out.append(Result(ask, own, best, other_hits))
    return out


@dataclass
class Row:
    n_answerable: int
    recall_at: dict[int, float]
    hit3: float
    injected: float
    fires: float
    false_injection: float
    n_none: int
    none_fires: float


def _passing(hits: Sequence[Ranked], threshold: float) -> list[Ranked]:
    """The hits the product's gate injects; today's had no relative floor."""
    relative = RELATIVE_FLOOR if hits and hits[0].evidence is not None else 0.0
    return gate(hits, threshold=threshold, limit=GATE_LIMIT, relative=relative)


def score_rows(results: Sequence[Result], threshold: float) -> Row:
    answerable = [r for r in results if r.ask.relevant]
    unanswerable = [r for r in results if not r.ask.relevant]
    recall_at = {}
    for k in KS:
        values = [
            len({h.doc_id for h in r.own[:k]} & r.ask.relevant) / len(r.ask.relevant)
            for r in answerable
        ]
        recall_at[k] = float(np.mean(values)) if values else float("nan")

    hit3 = [bool({h.doc_id for h in r.own[:3]} & r.ask.relevant) for r in answerable]
    injected = [
        any(h.doc_id in r.ask.relevant for h in _passing(r.own, threshold)) for r in answerable
    ]
    fires = [bool(_passing(r.own, threshold)) for r in answerable]
    # One (question, other person's memory) pair at a time: a set asks each question
    # against one other scope (MADial, teacher) or against every other one (MemoryBank).
    false = [
        bool(_passing(hits, threshold)) for r in results if r.ask.relevant for hits in r.other_hits
    ]
    none_fires = [bool(_passing(r.own, threshold)) for r in unanswerable]
    mean = lambda xs: float(np.mean(xs)) if xs else float("nan")  # noqa: E731
    return Row(
        len(answerable),
        recall_at,
        mean(hit3),
        mean(injected),
        mean(fires),
        mean(false),
        len(unanswerable),
        mean(none_fires),
    )


def _fmt(x: float) -> str:
    return "  -  " if math.isnan(x) else f"{x:.3f}"


HEADER = (
    f"{'set':10} {'split':9} {'system':22} {'n':>4} "
    + " ".join(f"R@{k:<4}" for k in KS)
    + "  Hit@3  inject  fires  false  | none n  none fires"
)


def print_row(set_name: str, split: str, system: str, row: Row) -> None:
    print(
        f"{set_name:10} {split:9} {system:22} {row.n_answerable:4} "
        + " ".join(f"{_fmt(row.recall_at[k])}" for k in KS)
        + f"  {_fmt(row.hit3)}  {_fmt(row.injected)}  {_fmt(row.fires)}  "
        + f"{_fmt(row.false_injection)} | {row.n_none:6}  {_fmt(row.none_fires)}"
    )


def split_results(results: Sequence[Result], data: DevSet) -> dict[str, list[Result]]:
    return {
        "dev": [r for r in results if r.ask.qid not in data.held_back],
        "held-back": [r for r in results if r.ask.qid in data.held_back],
    }


def report_main(sets: dict[str, DevSet], systems: Sequence[System]) -> dict[str, object]:
    print("== Recall and gate, today vs new (each system at its default threshold) ==")
    print(HEADER)
    summary: dict[str, object] = {}
    for set_name, data in sets.items():
        for system in systems:
            results = run(system, data)
            for split, part in split_results(results, data).items():
                row = score_rows(part, system.threshold)
                print_row(set_name, split, f"{system.name} @{system.threshold:g}", row)
                summary[f"{set_name}/{split}/{system.name}"] = row.__dict__
    print(
        "  inject: relevant entry in the top 3 and passing the gate, over answerable questions;\n"
        "  fires: anything passes on the own scope; false: the question against another\n"
        "  person's memory, anything passes; none fires: no-answer questions, own scope."
    )
    return summary


# ------------------------------------------------------------------- gate fitting
@dataclass
class HitTable:
    """Top-3 hits of (question, scope) pairs: features, labels and where they came from.

    Positives: relevant entries in the asker's own top 3. Negatives: the top 3 in another
    person's memory, and the asker's own top 3 for a question with no relevant entry.
    """

    x: np.ndarray
    y: np.ndarray
    set_name: list[str]
    qid: list[int]
    own: list[bool]


def hit_table(sets: dict[str, DevSet], results: dict[str, list[Result]], split: str) -> HitTable:
    rows: list[tuple[float, ...]] = []
    labels: list[float] = []
    names: list[str] = []
    qids: list[int] = []
    own_flags: list[bool] = []
    for set_name, data in sets.items():
        for result in results[set_name]:
            held = result.ask.qid in data.held_back
            if (split == "dev") == held:
                continue
            for hits, own in [(result.own, True)] + [(h, False) for h in result.other_hits]:
                for hit in hits[:GATE_LIMIT]:
                    assert hit.evidence is not None
                    if own and result.ask.relevant and hit.doc_id not in result.ask.relevant:
                        # Another entry of the asker's own memory: injecting it is not
                        # what false injection counts, and it often is related work.
                        continue
                    rows.append(tuple(_features_of(hit.evidence)))
                    labels.append(float(own and hit.doc_id in result.ask.relevant))
                    names.append(set_name)
                    qids.append(result.ask.qid)
                    own_flags.append(own)
    return HitTable(np.asarray(rows), np.asarray(labels), names, qids, own_flags)


def fit_logistic(x: np.ndarray, y: np.ndarray, sample: np.ndarray, l2: float) -> np.ndarray:
    """Weighted, L2-regularised logistic regression by Newton's method (the first column
    of ``x`` is the bias and is not penalised)."""
    w = np.zeros(x.shape[1])
    ridge = l2 * np.diag([0.0] + [1.0] * (x.shape[1] - 1))
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -50, 50)))
        grad = x.T @ (sample * (p - y)) + ridge @ w
        hess = (x * (sample * p * (1 - p))[:, None]).T @ x + ridge
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def set_weights(table: HitTable) -> np.ndarray:
    """Each set weighs the same in the fit, whatever its number of hits, and within a set
    its positives and its negatives weigh the same (a set asks each question against
    one other memory or against fourteen)."""
    names = np.asarray(table.set_name)
    out = np.ones(len(names))
    groups = {(n, y) for n, y in zip(table.set_name, table.y.tolist(), strict=True)}
    for name, label in groups:
        mask = (names == name) & (table.y == label)
        out[mask] = len(names) / (len(groups) * mask.sum())
    return out


_FEATURE_ROWS: dict[int, tuple[Evidence, np.ndarray]] = {}

#: Candidate features measured on top of :data:`FEATURES` (``--candidates``): per query
#: and per scope normalisations of the hit's raw score. Each is computed from the hit's
#: evidence alone, appended after the shipped features when :data:`EXTRA` names it.
CANDIDATES: dict[str, Callable[[Evidence], float]] = {
    # The hit against what the scope could attest: unseen terms left out of the mass.
    "known_coverage": lambda e: math.log(max(e.raw, 1e-12) / max(e.query.known_mass, 1e-12)),
    # The share of the query's evidence mass that no entry of the scope holds.
    "unseen_share": lambda e: (
        e.query.unknown_weight
        * e.query.unseen_idf
        / max(e.query.known_mass + e.query.unknown_weight * e.query.unseen_idf, 1e-12)
    ),
    # How many informative terms the scope has seen (log).
    "known_terms": lambda e: math.log(max(e.query.known_terms, 1)),
    # The hit over the scope's 10th best entry, in units of the query's attestable mass.
    "over_tenth": lambda e: (e.raw - e.query.tenth) / max(e.query.known_mass, 1e-12),
    # The hit over the 10th best, as a log ratio (0 below: fewer than ten entries match).
    "log_over_tenth": lambda e: (
        math.log(e.raw / e.query.tenth) if e.query.tenth > 0 else math.log(1 + e.raw)
    ),
    "fewer_than_ten": lambda e: float(e.query.tenth == 0.0),
    # Standard deviations above the typical entry (the first gate's feature).
    "z_background": lambda e: (e.raw - e.query.background) / max(e.query.spread, 1e-12),
    # The scope's size (log): a small scope is covered by chance less often.
    "log_entries": lambda e: math.log(max(e.query.entries, 1)),
}
EXTRA: tuple[str, ...] = ()
CANDIDATE_PAIRS = (
    ("known_coverage", "unseen_share"),
    ("over_tenth", "fewer_than_ten"),
    ("log_over_tenth", "log_entries"),
    ("over_tenth", "log_entries"),
    ("known_coverage", "known_terms", "over_tenth", "fewer_than_ten", "log_entries"),
)


def _features_of(evidence: Evidence) -> np.ndarray:
    """:func:`features` of one hit, computed once (the fit rescores the same hits often),
    then the :data:`EXTRA` candidates."""
    held = _FEATURE_ROWS.get(id(evidence))
    if held is None or held[0] is not evidence:
        row = list(features(evidence)) + [CANDIDATES[name](evidence) for name in CANDIDATES]
        held = (evidence, np.asarray(row))
        _FEATURE_ROWS[id(evidence)] = held
    key = (id(evidence), EXTRA)
    selected = _SELECTED.get(key)
    if selected is None:
        base = len(FEATURES)
        picked = [held[1][base + list(CANDIDATES).index(n)] for n in EXTRA]
        selected = _SELECTED[key] = np.concatenate((held[1][:base], picked))
    return selected


_SELECTED: dict[tuple[int, tuple[str, ...]], np.ndarray] = {}


def rescore(results: Sequence[Result], w: np.ndarray) -> list[Result]:
    """The same hits, scored by a logistic gate with coefficients ``w``."""

    def score(hits: list[Ranked]) -> list[Ranked]:
        out = []
        for h in hits:
            assert h.evidence is not None
            z = float(np.dot(w, _features_of(h.evidence)))
            out.append(Ranked(h.doc_id, 1.0 / (1.0 + math.exp(-max(-50, min(50, z)))), h.evidence))
        return out

    rescored = []
    for r in results:
        others = [score(h) for h in r.other_hits]
        best = max((h.score for hits in others for h in hits[:GATE_LIMIT]), default=0.0)
        rescored.append(Result(r.ask, score(r.own), best, others))
    return rescored


THRESHOLD_GRID = tuple(round(0.05 * i, 2) for i in range(2, 20))
#: The sets whose questions are asked alone or in a short thread, by language: the
#: threshold is the lowest at which every English one injects falsely for at most
#: MAX_FALSE of its questions, and the ``cjk`` weight is shifted so that the Chinese
#: ones meet the same rule at that threshold (MADial, a whole dialogue as the query and
#: two users with alike memories, is reported but not used).
THRESHOLD_SETS = {"en": ("people-en", "memorybank-en"), "zh": ("teacher", "memorybank-cn")}
CJK_SHIFTS = tuple(round(0.1 * i, 1) for i in range(-30, 31))


def _worst_false(parts: dict[str, list[Result]], names: Sequence[str], threshold: float) -> float:
    present = [parts[n] for n in names if n in parts]
    if not present:
        return 0.0
    return max(score_rows(p, threshold).false_injection for p in present)


def choose_threshold(results: dict[str, list[Result]], w: np.ndarray) -> tuple[float, float]:
    """The threshold and the ``cjk`` shift, by the rule of :data:`THRESHOLD_SETS`, on
    the development parts given (``results``: set name -> its development results)."""
    english = {n: rescore(r, w) for n, r in results.items() if n in THRESHOLD_SETS["en"]}
    threshold = THRESHOLD_GRID[-1]
    for t in THRESHOLD_GRID:
        if _worst_false(english, THRESHOLD_SETS["en"], t) <= MAX_FALSE:
            threshold = t
            break
    cjk = FEATURES.index("cjk")
    shift = CJK_SHIFTS[0]
    for candidate in CJK_SHIFTS:
        shifted = w.copy()
        shifted[cjk] += candidate
        chinese = {n: rescore(r, shifted) for n, r in results.items() if n in THRESHOLD_SETS["zh"]}
        if _worst_false(chinese, THRESHOLD_SETS["zh"], threshold) <= MAX_FALSE:
            shift = candidate
    return threshold, shift


#: The lexical features (fitted first); the name features come after them.
LEXICAL = FEATURES.index("name_seen")
NAME_SETS = ("people-en", "memorybank-en", "madial-en")
NAME_GRID = tuple(round(0.25 * i, 2) for i in range(0, 21))
#: The grid of the ``name_common`` weight (coarser: it is searched with the other two).
COMMON_GRID = tuple(round(0.5 * i, 1) for i in range(0, 11))


def _fitted_columns() -> list[int]:
    """The columns the logistic fit sees: the lexical features, then the :data:`EXTRA`."""
    return list(range(LEXICAL)) + [len(FEATURES) + i for i in range(len(EXTRA))]


def _with_names(w: np.ndarray) -> np.ndarray:
    """A fitted vector (lexical, extras) as the gate's (lexical, names at 0, extras)."""
    return np.concatenate((w[:LEXICAL], np.zeros(len(FEATURES) - LEXICAL), w[LEXICAL:]))


_NAMES = ("name_seen", "name_unseen", "name_common")


def _gate_logits(
    hits: Sequence[Ranked], w: np.ndarray, relevant: frozenset[int] | None
) -> tuple[float, np.ndarray]:
    """For one search: the largest logit (by ``w``) among the hits the gate may inject
    (``relevant``: among those of them that are relevant), and the search's name features.
    Every hit of a search has the same name features, so the gate passes something iff
    that logit plus their share of the logit reaches the threshold's."""
    if not hits:
        return -math.inf, np.zeros(len(_NAMES))
    floor = RELATIVE_FLOOR * hits[0].raw
    best = -math.inf
    for h in hits[:GATE_LIMIT]:
        if h.raw >= floor and (relevant is None or h.doc_id in relevant):
            assert h.evidence is not None
            best = max(best, float(np.dot(w, _features_of(h.evidence))))
    row = _features_of(hits[0].evidence)  # type: ignore[arg-type]
    return best, np.asarray([row[FEATURES.index(n)] for n in _NAMES])


def fit_names(results: dict[str, list[Result]], w: np.ndarray, threshold: float) -> np.ndarray:
    """Stages 2 and 3: the name coefficients on top of the lexical ones, which stay as
    fitted (a question that names nobody scores as before). First the pair (seen >= 0,
    unseen <= 0) on :data:`NAME_GRID`, then the ``common`` weight (>= 0) on
    :data:`COMMON_GRID` on top of it: the weights that inject most on the English sets'
    development parts (summed) while every English set of :data:`THRESHOLD_SETS` stays
    within MAX_FALSE (the pair: the smallest such; the common weight: the middle of the
    values that do, for a margin either way). Evaluated in closed form per search
    (:func:`_gate_logits`), which the gate's own scoring reproduces."""
    lexical = w.copy()
    for name in _NAMES:
        lexical[FEATURES.index(name)] = 0.0
    cut = math.log(threshold / (1.0 - threshold))
    english = set(NAME_SETS) | set(THRESHOLD_SETS["en"])
    cases: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    for name, rows in results.items():
        if name not in english:
            continue
        own = [_gate_logits(r.own, lexical, r.ask.relevant) for r in rows if r.ask.relevant]
        other = [
            _gate_logits(hits, lexical, None)
            for r in rows
            if r.ask.relevant
            for hits in r.other_hits
        ]
        cases[name] = (
            np.asarray([b for b, _ in own]),
            np.asarray([f for _, f in own]).reshape(-1, len(_NAMES)),
            np.asarray([b for b, _ in other]),
            np.asarray([f for _, f in other]).reshape(-1, len(_NAMES)),
        )

    def injected_by(
        candidates: Iterable[tuple[float, float, float]],
    ) -> list[tuple[float, tuple[float, float, float]]]:
        out = []
        for candidate in candidates:
            v = np.asarray(candidate)
            if any(
                np.mean(ob + of @ v >= cut) > MAX_FALSE
                for n, (_, _, ob, of) in cases.items()
                if n in THRESHOLD_SETS["en"] and len(ob)
            ):
                continue
            injected = sum(
                float(np.mean(ib + inf @ v >= cut))
                for n, (ib, inf, _, _) in cases.items()
                if n in NAME_SETS and len(ib)
            )
            out.append((injected, candidate))
        return out

    pairs = injected_by((s, -u, 0.0) for s, u in itertools.product(NAME_GRID, NAME_GRID))
    most = max(i for i, _ in pairs)
    seen, unseen, _ = next(c for i, c in pairs if i == most)  # the first: the smallest
    # The common weight: the middle of the values that inject most, for a margin both ways.
    commons = injected_by((seen, unseen, c) for c in COMMON_GRID)
    most = max(i for i, _ in commons)
    plateau = [c for i, c in commons if i == most]
    chosen = plateau[len(plateau) // 2]
    out = lexical.copy()
    for name, value in zip(_NAMES, chosen, strict=True):
        out[FEATURES.index(name)] = value
    return out


def _group(name: str) -> str:
    """Sets that are one source (MemoryBank en and cn are translations) leave together."""
    return name.rsplit("-", 1)[0] if name.startswith("memorybank") else name


def report_fit(sets: dict[str, DevSet], l2: float = 1.0) -> tuple[np.ndarray, float, float]:
    print("\n== Gate fit: logistic regression on the development parts ==")
    print("  features:", ", ".join(FEATURES))
    results = {name: run(New(), data) for name, data in sets.items()}
    dev = hit_table(sets, results, "dev")
    w = _with_names(fit_logistic(dev.x[:, _fitted_columns()], dev.y, set_weights(dev), l2))
    parts = {n: split_results(results[n], sets[n]) for n in sets}
    threshold, shift = choose_threshold({n: parts[n]["dev"] for n in sets}, w)
    w[FEATURES.index("cjk")] += shift
    w = fit_names({n: parts[n]["dev"] for n in sets}, w, threshold)
    print(
        "  COEFFICIENTS = ("
        + ", ".join(f"{c:.2f}" for c in w)
        + f"), CJK_SHIFT = {shift:.1f}, threshold {threshold}"
    )
    print("  inject/false (none fires) at that threshold:")
    for n in sets:
        for split in ("dev", "held-back"):
            row = score_rows(rescore(parts[n][split], w), threshold)
            print(
                f"    {n:13} {split:9} {row.injected:.3f}/{row.false_injection:.3f} "
                f"({_fmt(row.none_fires)})"
            )
    groups = sorted({_group(n) for n in sets})
    if len(groups) > 1:
        print("  leave one source out (fitted, threshold and shift chosen, on the others'")
        print("  dev parts; figures on the left-out sets' held-back parts):")
        for left in groups:
            keep = np.asarray([_group(n) != left for n in dev.set_name])
            sub = HitTable(
                dev.x[keep],
                dev.y[keep],
                [n for n, k in zip(dev.set_name, keep, strict=True) if k],
                [],
                [],
            )
            w_cv = _with_names(
                fit_logistic(sub.x[:, _fitted_columns()], sub.y, set_weights(sub), l2)
            )
            t_cv, shift_cv = choose_threshold(
                {n: parts[n]["dev"] for n in sets if _group(n) != left}, w_cv
            )
            w_cv[FEATURES.index("cjk")] += shift_cv
            for n in sets:
                if _group(n) != left:
                    continue
                row = score_rows(rescore(parts[n]["held-back"], w_cv), t_cv)
                print(
                    f"    {n:13} t={t_cv:.2f} inject {row.injected:.3f} false "
                    f"{row.false_injection:.3f} none fires {_fmt(row.none_fires)}  "
                    f"w=({', '.join(f'{c:.2f}' for c in w_cv)})"
                )
    return w, threshold, shift


def _fit_gate(
    table: HitTable, dev_parts: dict[str, list[Result]], l2: float = 1.0
) -> tuple[np.ndarray, float, float]:
    """The whole fit on development data: the logistic (lexical and :data:`EXTRA`
    columns), then the threshold and ``cjk`` shift, then the name weights."""
    w = _with_names(fit_logistic(table.x[:, _fitted_columns()], table.y, set_weights(table), l2))
    threshold, shift = choose_threshold(dev_parts, w)
    w[FEATURES.index("cjk")] += shift
    if any(n in dev_parts for n in NAME_SETS):
        w = fit_names(dev_parts, w, threshold)
    return w, threshold, shift


def report_candidates(sets: dict[str, DevSet], subsets: Sequence[tuple[str, ...]]) -> None:
    """Each subset of :data:`CANDIDATES` added to the shipped features and the whole gate
    refitted (the same rules); held-back inject/false per set, then the same with every
    source left out of the fit in turn (its held-back part scored by the others' fit)."""
    global EXTRA
    results = {name: run(New(), data) for name, data in sets.items()}
    parts = {n: split_results(results[n], sets[n]) for n in sets}
    groups = sorted({_group(n) for n in sets})
    print("\n== Candidate gate features: held-back inject/false, fitted | left-one-source-out ==")
    print(f"{'extra features':44} " + " ".join(f"{n:>23}" for n in sets))
    saved = EXTRA
    try:
        for subset in subsets:
            EXTRA = subset
            table = hit_table(sets, results, "dev")
            w, t, _ = _fit_gate(table, {n: parts[n]["dev"] for n in sets})
            fitted = {n: score_rows(rescore(parts[n]["held-back"], w), t) for n in sets}
            loso: dict[str, Row] = {}
            for left in groups:
                keep = np.asarray([_group(n) != left for n in table.set_name])
                names = [n for n, k in zip(table.set_name, keep, strict=True) if k]
                sub = HitTable(table.x[keep], table.y[keep], names, [], [])
                dev_parts = {n: parts[n]["dev"] for n in sets if _group(n) != left}
                w_cv, t_cv, _ = _fit_gate(sub, dev_parts)
                for n in sets:
                    if _group(n) == left:
                        loso[n] = score_rows(rescore(parts[n]["held-back"], w_cv), t_cv)
            cells = [
                f"{fitted[n].injected:.2f}/{fitted[n].false_injection:.2f}|"
                f"{loso[n].injected:.2f}/{loso[n].false_injection:.2f}"
                for n in sets
            ]
            label = "+".join(subset) or "(shipped features)"
            print(f"{label:44} " + " ".join(f"{c:>23}" for c in cells) + f"  t={t}")
            print(f"{'':44}   w=({', '.join(f'{c:.2f}' for c in w)})")
    finally:
        EXTRA = saved


def _auc(pos: np.ndarray, neg: np.ndarray) -> float:
    if not len(pos) or not len(neg):
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="stable")
    ranks = np.empty(len(order))
    ranks[order] = np.arange(1, len(order) + 1)
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def report_tradeoff(sets: dict[str, DevSet], thresholds: Sequence[float]) -> None:
    """The operating curve of the shipped gate score: relevant injected / false injection
    per set and split at each threshold (the relative floor and the limit as shipped)."""
    print("\n== Gate operating curve (new system): inject/false by threshold, dev | held-back ==")
    print(f"{'set':13} " + " ".join(f"{t:>14}" for t in thresholds))
    for set_name, data in sets.items():
        parts = split_results(run(New(), data), data)
        cells = []
        for t in thresholds:
            d = score_rows(parts["dev"], t)
            h = score_rows(parts["held-back"], t)
            cells.append(
                f"{d.injected:.2f}/{d.false_injection:.2f}|{h.injected:.2f}/{h.false_injection:.2f}"
            )
        print(f"{set_name:13} " + " ".join(f"{c:>14}" for c in cells))
    print(
        "  each cell: dev inject/false | held-back inject/false; inject can reach Hit@3 at\n"
        "  most (the gate injects only from the top 3)."
    )


@dataclass
class Misses:
    """Answerable questions with no relevant entry injected, by where the relevant one was."""

    n_answerable: int
    gated_out: int  # a relevant entry in the top 3, none of them passing the gate
    ranked_low: int  # the best relevant entry ranked 4th..SEARCH_K-th
    not_retrieved: int  # no relevant entry in the top SEARCH_K


def miss_breakdown(results: Sequence[Result], threshold: float) -> Misses:
    answerable = [r for r in results if r.ask.relevant]
    gated_out = ranked_low = not_retrieved = 0
    for r in answerable:
        if any(h.doc_id in r.ask.relevant for h in _passing(r.own, threshold)):
            continue
        ranks = [i for i, h in enumerate(r.own) if h.doc_id in r.ask.relevant]
        if not ranks:
            not_retrieved += 1
        elif ranks[0] < GATE_LIMIT:
            gated_out += 1
        else:
            ranked_low += 1
    return Misses(len(answerable), gated_out, ranked_low, not_retrieved)


def report_misses(sets: dict[str, DevSet], system: System) -> None:
    print(
        f"\n== Misses ({system.name} @{system.threshold:g}): answerable questions with no "
        "relevant injection =="
    )
    print(
        f"{'set':13} {'split':9} {'answ.':>5} {'missed':>6}  {'(a) top-3, gated out':>20}  "
        f"{'(b) ranked 4-' + str(SEARCH_K):>16}  {'(c) not in top ' + str(SEARCH_K):>17}"
    )
    for set_name, data in sets.items():
        for split, part in split_results(run(system, data), data).items():
            m = miss_breakdown(part, system.threshold)
            missed = m.gated_out + m.ranked_low + m.not_retrieved
            a, b, c = (
                f"{k:4} ({k / missed:4.0%})" if missed else f"{k:4}"
                for k in (m.gated_out, m.ranked_low, m.not_retrieved)
            )
            print(
                f"{set_name:13} {split:9} {m.n_answerable:5} {missed:6}  {a:>20}  {b:>16}  {c:>17}"
            )
    print("  shares are of the missed questions; (a) is what a better gate can recover.")


def report_tokenizers(sets: dict[str, DevSet]) -> None:
    """Bigrams alone vs word-aware terms (jieba, rjieba): ranking with the product's
    query (the gate is fitted on the shipped terms, so R@5 and Hit@3 are compared)."""
    import jieba  # bench-only: the product uses rjieba

    from memory.recall import tokenize as tok

    jieba.setLogLevel(60)
    variants: list[tuple[str, Callable[[str], list[str]] | None]] = [
        ("bigrams+unigrams only", None),
        ("+ jieba words", jieba.lcut),
        ("+ rjieba words (shipped)", tok.rjieba.cut),
    ]
    print("\n== Tokenizers: R@5 / Hit@3 over answerable questions, all splits ==")
    original = tok._segment
    try:
        for name, segment in variants:
            tok._segment = segment
            tok.stem.cache_clear()
            cells = []
            for set_name, data in sets.items():
                row = score_rows(run(New(), data), 2.0)
                cells.append(f"{set_name} {row.recall_at[5]:.3f}/{row.hit3:.3f}")
            print(f"  {name:26} " + "   ".join(cells))
    finally:
        tok._segment = original
    cells = []
    for set_name, data in sets.items():
        row = score_rows(run(Today(), data), 2.0)
        cells.append(f"{set_name} {row.recall_at[5]:.3f}/{row.hit3:.3f}")
    print(f"  {'today (legacy, message)':26} " + "   ".join(cells))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", action="store_true", help="refit the gate and print it")
    parser.add_argument("--tokenizers", action="store_true", help="compare segmenters")
    parser.add_argument("--json", type=Path, help="write the main figures here")
    parser.add_argument(
        "--candidates", action="store_true", help="refit the gate with candidate features"
    )
    parser.add_argument(
        "--query-cuts",
        action="store_true",
        help="the new system with the query cut to its top-N terms by weight x IDF, or "
        "without the terms the scope never saw",
    )
    parser.add_argument(
        "--sets", default="madial-zh,madial-en,teacher,people-en,memorybank-en,memorybank-cn"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    sets = {name: data for name, data in load_all().items() if name in args.sets.split(",")}
    for name, data in sets.items():
        n = sum(len(e) for e in data.scopes.values())
        print(
            f"{name}: {len(data.scopes)} scopes, {n} entries, {len(data.asks)} questions "
            f"({len(data.held_back)} held back)"
        )
    threshold = DEFAULT_THRESHOLD
    if args.candidates:
        report_candidates(sets, [(), *((c,) for c in CANDIDATES), *CANDIDATE_PAIRS])
        return 0
    if args.query_cuts:
        cuts = [CutQuery(max_terms=n, drop_unseen=d) for n, d in QUERY_CUTS]
        report_main(sets, [New(), *cuts])
        return 0
    if args.fit:
        w, threshold, _shift = report_fit(sets)
        gate_module.COEFFICIENTS = tuple(float(c) for c in w)
        print(f"  (the tables below use the refitted gate at {threshold})")
    summary = report_main(sets, [Today(), TodayGateConversation(), New(threshold=threshold)])
    report_misses(sets, New(threshold=threshold))
    report_tradeoff(sets, (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95))
    if args.tokenizers:
        report_tokenizers(sets)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
