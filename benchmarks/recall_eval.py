"""Calibrate and evaluate episodic recall (L3) on MADial-Bench, development split.

Run from the project root::

    .venv/bin/python benchmarks/recall_eval.py            # full report (~1 min)
    .venv/bin/python benchmarks/recall_eval.py --quick    # main tables only

Protocol (the MADial-Bench authors', ``shared/data/README.md``):

* one query per dialogue: the turns before its first test turn. The authors join them into
  one text; we drop the speaker tags and weigh turns by recency (newest 1, each older turn
  x0.8) and the assistant's turns by 0.5 (``query_weights``); the plain baseline uses the
  authors' single bag of words;
* candidates: that user's memories, each as one entry whose compact text is
  ``event scene emotion`` (a recall entry of the product is the teacher's request plus
  the head of the answer: a short text of the same kind);
* recall@k: |top k ∩ relevant| / |relevant|, averaged over queries (the authors' formula);
* relevant injected: share of queries where at least one relevant memory is among the
  top 3 *and* passes the gate (score >= threshold);
* false injection: the same query asked against the *other* user's memories, where
  nothing is relevant: share of queries where anything passes the gate.

The gate is also measured with a short query (the last user utterance alone) to check
that a fixed threshold behaves alike across query lengths and languages.

Nothing here is fitted silently: the report prints the few parameters, a user-split and a
cross-language selection for them, and the whole threshold trade-off.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import sys
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.recall.index import (
    DEFAULT_THRESHOLD,
    GATE_LIMIT,
    PRIOR_TERMS,
    RecallIndex,
)
from memory.recall.tokenize import (
    QUERY_DECAY,
    UNIGRAM_WEIGHT,
    query_weights,
    terms,
)

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "recall-dev" / "madial"
LANGS = ("zh", "en")
KS = (1, 3, 5, 10)
THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4)
ASSISTANT_WEIGHT = 0.5
_LINE = re.compile(r'^\s*<([^>]*)>\s*:\s*"?(.*?)"?\s*$', re.S)
_ASSISTANT = "Assistant"


# ----------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Memory:
    mid: int
    user: int
    text: str


@dataclass(frozen=True)
class Query:
    qid: int
    user: int
    turns: tuple[tuple[str, str], ...]  # (speaker, text), oldest first
    relevant: frozenset[int]

    def last_user_turn(self) -> tuple[tuple[str, str], ...]:
        for speaker, text in reversed(self.turns):
            if speaker != _ASSISTANT:
                return ((speaker, text),)
        return self.turns[-1:]


@dataclass
class Dataset:
    lang: str
    memories: dict[int, list[Memory]]
    queries: list[Query]


def _json_lines(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _turns(dialogue: Sequence[str], upto: int) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for line in dialogue[:upto]:
        stripped = line.strip()
        if stripped in ("<BOD>", "<EOD>"):
            continue
        match = _LINE.match(stripped)
        if match:
            out.append((match.group(1).strip(), match.group(2)))
        else:  # one English line lost its speaker tag; it is an assistant turn
            out.append((_ASSISTANT, stripped.strip("<>")))
    return tuple(out)


def load(data: Path, lang: str) -> Dataset:
    """Memories by user and queries of one language (English memories lack user ids)."""
    owners: dict[str, int] = {}
    for row in _json_lines(data / "zh" / "MADial-Bench-zh-memory.json"):
        for key, value in row.items():
            owners[key] = int(value["user-id"])
    memories: dict[int, list[Memory]] = {}
    for row in _json_lines(data / lang / f"MADial-Bench-{lang}-memory.json"):
        for key, value in row.items():
            user = int(value.get("user-id", owners[key]))
            text = f"{value['event']} {value['scene']} {value['emotion']}"
            memories.setdefault(user, []).append(Memory(int(key), user, text))
    queries: list[Query] = []
    for i, row in enumerate(_json_lines(data / lang / f"MADial-Bench-{lang}-dialogue.json")):
        test_turn = int(row["test-turn"][0])
        queries.append(
            Query(
                qid=i,
                user=int(row["user-id"]),
                turns=_turns(row["dialogue"], test_turn),
                relevant=frozenset(int(r) for r in row["relevant-id"]),
            )
        )
    return Dataset(lang, memories, queries)


# -------------------------------------------------------------------------- systems
Ranked = list[tuple[int, float]]  # (memory id, calibrated score), best first


class System:
    """A retrieval system: builds one scope per user, ranks a query's candidates."""

    name = "system"

    def build(self, memories: Sequence[Memory]) -> object:
        raise NotImplementedError

    def rank(self, scope: object, turns: Sequence[tuple[str, str]], k: int) -> Ranked:
        raise NotImplementedError


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_PLAIN_RUN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")


def plain_terms(text: str) -> list[str]:
    """Baseline tokenisation: CJK bigrams (unigram for a one-character run), words."""
    out: list[str] = []
    for match in _PLAIN_RUN.finditer(unicodedata.normalize("NFKC", text).lower()):
        run = match.group()
        if re.match(rf"[{_CJK}]", run) and len(run) > 1:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            out.append(run)
    return out


@dataclass
class _DenseScope:
    ids: list[int]
    vocab: dict[str, int]
    sat: np.ndarray  # (docs, terms): tf (k1 + 1) / (tf + K_d)
    idf: np.ndarray


class PlainBM25(System):
    """Plain baseline: bigram BM25 (Lucene IDF), whole dialogue as one bag of terms,
    score = raw / its upper bound sum_t qtf idf (k1 + 1)."""

    name = "plain bigram BM25"

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b

    def build(self, memories: Sequence[Memory]) -> _DenseScope:
        docs = [plain_terms(m.text) for m in memories]
        vocab: dict[str, int] = {}
        for doc in docs:
            for term in doc:
                vocab.setdefault(term, len(vocab))
        tf = np.zeros((len(docs), len(vocab)))
        for i, doc in enumerate(docs):
            for term in doc:
                tf[i, vocab[term]] += 1
        dl = tf.sum(axis=1)
        norm = self.k1 * (1 - self.b + self.b * dl / dl.mean())
        df = (tf > 0).sum(axis=0)
        n = len(docs)
        idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        sat = tf * (self.k1 + 1) / (tf + norm[:, None])
        return _DenseScope([m.mid for m in memories], vocab, sat, idf)

    def rank(self, scope: object, turns: Sequence[tuple[str, str]], k: int) -> Ranked:
        assert isinstance(scope, _DenseScope)
        qtf: dict[str, int] = {}
        for _, text in turns:
            for term in plain_terms(text):
                qtf[term] = qtf.get(term, 0) + 1
        n = len(scope.ids)
        idf_unseen = math.log(1 + (n + 0.5) / 0.5)
        raw = np.zeros(n)
        bound = 0.0
        for term, count in qtf.items():
            j = scope.vocab.get(term)
            idf = idf_unseen if j is None else float(scope.idf[j])
            bound += count * idf * (self.k1 + 1)
            if j is not None:
                raw += count * idf * scope.sat[:, j]
        order = np.argsort(-raw, kind="stable")[:k]
        return [(scope.ids[i], float(raw[i] / bound)) for i in order if raw[i] > 0]


@dataclass
class Ours(System):
    """RecallIndex + query_weights with the given parameters."""

    decay: float = QUERY_DECAY
    assistant_weight: float = ASSISTANT_WEIGHT
    unigram_weight: float = UNIGRAM_WEIGHT
    prior_terms: float = PRIOR_TERMS
    k1: float = 1.2
    b: float = 0.75
    name: str = "ours"

    def build(self, memories: Sequence[Memory]) -> RecallIndex:
        return RecallIndex.from_documents(
            ((m.mid, terms(m.text)) for m in memories),
            k1=self.k1,
            b=self.b,
            prior_terms=self.prior_terms,
        )

    def rank(self, scope: object, turns: Sequence[tuple[str, str]], k: int) -> Ranked:
        assert isinstance(scope, RecallIndex)
        weights = query_weights(
            [text for _, text in turns],
            decay=self.decay,
            turn_weights=[
                self.assistant_weight if speaker == _ASSISTANT else 1.0 for speaker, _ in turns
            ],
            unigram_weight=self.unigram_weight,
        )
        return [(hit.doc_id, hit.score) for hit in scope.search(weights, k=k)]


# -------------------------------------------------------------------------- running
@dataclass
class Outcome:
    """Per-query results of one system on one dataset and query mode."""

    recall: dict[int, list[float]]
    own_best_relevant: list[float]  # best score of a relevant memory in the top 3, or -1
    other_best: list[float]  # best score against the other user's memories, or 0
    users: list[int]

    def recall_at(self, k: int, users: Iterable[int] | None = None) -> float:
        keep = set(users) if users is not None else None
        values = [
            v for v, u in zip(self.recall[k], self.users, strict=True) if keep is None or u in keep
        ]
        return float(np.mean(values)) if values else float("nan")

    def injected(self, threshold: float) -> float:
        return float(np.mean([s >= threshold for s in self.own_best_relevant]))

    def false_injection(self, threshold: float) -> float:
        return float(np.mean([s >= threshold for s in self.other_best]))

    def paired_ceiling(self) -> float:
        """Share of queries whose best relevant top-3 memory outscores every memory of the
        other user: no gate on this score can inject a relevant memory for more queries
        without also firing on the other user."""
        pairs = zip(self.own_best_relevant, self.other_best, strict=True)
        return float(np.mean([own > other for own, other in pairs]))

    def threshold_at_false(self, rate: float = 0.05) -> float:
        """The lowest threshold whose false injection is at most ``rate``."""
        values = {0.0, 1.0 + 1e-9} | {float(np.nextafter(v, 2.0)) for v in self.other_best}
        return min(t for t in values if self.false_injection(t) <= rate)

    def best_injected(self, rate: float = 0.05) -> float:
        """Relevant injected at the best threshold that keeps false injection <= rate."""
        return self.injected(self.threshold_at_false(rate))


def run(system: System, data: Dataset, mode: str = "dialogue") -> Outcome:
    scopes = {user: system.build(mems) for user, mems in data.memories.items()}
    recall: dict[int, list[float]] = {k: [] for k in KS}
    own_best: list[float] = []
    other_best: list[float] = []
    users: list[int] = []
    for query in data.queries:
        turns = query.turns if mode == "dialogue" else query.last_user_turn()
        ranked = system.rank(scopes[query.user], turns, max(KS))
        ids = [mid for mid, _ in ranked]
        for k in KS:
            recall[k].append(len(set(ids[:k]) & query.relevant) / len(query.relevant))
        relevant_scores = [s for mid, s in ranked[:GATE_LIMIT] if mid in query.relevant]
        own_best.append(max(relevant_scores, default=-1.0))
        others = [u for u in scopes if u != query.user]
        best = 0.0
        for other in others:
            hits = system.rank(scopes[other], turns, GATE_LIMIT)
            best = max(best, max((s for _, s in hits), default=0.0))
        other_best.append(best)
        users.append(query.user)
    return Outcome(recall, own_best, other_best, users)


# -------------------------------------------------------------------------- reports
def _fmt(x: float) -> str:
    return f"{x:.3f}"


def report_main(datasets: dict[str, Dataset], threshold: float) -> dict[str, object]:
    systems: list[System] = [PlainBM25(), Ours()]
    summary: dict[str, object] = {}
    print("== Retrieval and gate (query = dialogue before the test turn) ==")
    header = (
        f"{'lang':4} {'system':20} "
        + " ".join(f"R@{k:<4}" for k in KS)
        + f"  inj@{threshold}  false@{threshold}  ceiling  thr@5%false  inj@thr"
    )
    print(header)
    for lang, data in datasets.items():
        for system in systems:
            out = run(system, data)
            row = {
                **{f"recall@{k}": out.recall_at(k) for k in KS},
                "relevant_injected": out.injected(threshold),
                "false_injection": out.false_injection(threshold),
                "paired_ceiling": out.paired_ceiling(),
                "threshold_at_5pct_false": out.threshold_at_false(),
                "injected_at_that_threshold": out.best_injected(),
            }
            summary[f"{lang}/{system.name}"] = row
            print(
                f"{lang:4} {system.name:20} "
                + " ".join(f"{out.recall_at(k):.3f} " for k in KS)
                + f"  {_fmt(out.injected(threshold)):8} {_fmt(out.false_injection(threshold)):10}"
                + f" {_fmt(out.paired_ceiling()):8} {_fmt(out.threshold_at_false()):12}"
                + f" {_fmt(out.best_injected())}"
            )
    print(
        "  thr@5%false: the lowest threshold with false injection <= 0.05; inj@thr: relevant\n"
        "  injected there (the best any fixed threshold on this score can do at that rate).\n"
        "  ceiling: share of queries whose best relevant top-3 memory outscores everything of\n"
        "  the other user. For any gate that is a per-query increasing function of BM25 (every\n"
        "  normalisation of it), relevant injected <= ceiling + false injection."
    )
    return summary


def report_tradeoff(datasets: dict[str, Dataset]) -> None:
    print("\n== Gate trade-off: relevant injected / false injection by threshold ==")
    print(f"{'lang':4} {'query':9} {'system':20} " + " ".join(f"{t:>10}" for t in THRESHOLDS))
    for lang, data in datasets.items():
        for mode in ("dialogue", "last"):
            for system in (PlainBM25(), Ours()):
                out = run(system, data, mode)
                cells = " ".join(
                    f"{out.injected(t):.2f}/{out.false_injection(t):.2f}".rjust(10)
                    for t in THRESHOLDS
                )
                print(f"{lang:4} {mode:9} {system.name:20} {cells}")
    print("  query 'last' = the last user utterance alone (a short query).")


def report_ablation(datasets: dict[str, Dataset]) -> None:
    print("\n== Ablation (recall@5; each line changes one thing from 'ours') ==")
    variants: list[tuple[str, Ours]] = [
        ("ours", Ours()),
        ("no unigrams", Ours(unigram_weight=0.0)),
        ("no recency decay", Ours(decay=1.0)),
        ("assistant turns weight 1", Ours(assistant_weight=1.0)),
        ("user turns only", Ours(assistant_weight=0.0)),
        ("k1=2.0", Ours(k1=2.0)),
    ]
    print(f"{'variant':28} " + " ".join(f"{lang:>6}" for lang in datasets))
    for name, system in variants:
        cells = " ".join(f"{run(system, d).recall_at(5):6.3f}" for d in datasets.values())
        print(f"{name:28} {cells}")


def report_cross_validation(datasets: dict[str, Dataset], threshold: float) -> None:
    print("\n== Parameter selection, cross-validated (recall@5) ==")
    grid = list(itertools.product((1.0, 0.8, 0.6), (1.0, 0.5), (0.0, 0.5, 1.0)))
    outcomes = {
        (lang, params): run(
            Ours(decay=params[0], assistant_weight=params[1], unigram_weight=params[2]), data
        )
        for lang, data in datasets.items()
        for params in grid
    }
    default = (QUERY_DECAY, ASSISTANT_WEIGHT, UNIGRAM_WEIGHT)
    print("  grid: decay x assistant weight x unigram weight; default =", default)
    for lang in datasets:
        users = sorted(set(outcomes[(lang, default)].users))
        for train in users:
            test = [u for u in users if u != train]
            best = max(grid, key=lambda p: outcomes[(lang, p)].recall_at(5, [train]))
            print(
                f"  {lang}: select on user {train} -> {best}: train "
                f"{outcomes[(lang, best)].recall_at(5, [train]):.3f}, held-out user(s) {test}: "
                f"{outcomes[(lang, best)].recall_at(5, test):.3f} "
                f"(default there: {outcomes[(lang, default)].recall_at(5, test):.3f})"
            )
    langs = list(datasets)
    for src, dst in itertools.permutations(langs, 2):
        best = max(grid, key=lambda p: outcomes[(src, p)].recall_at(5))
        print(
            f"  select on {src} -> {best}: {src} {outcomes[(src, best)].recall_at(5):.3f}, "
            f"{dst} {outcomes[(dst, best)].recall_at(5):.3f} "
            f"(default: {dst} {outcomes[(dst, default)].recall_at(5):.3f})"
        )

    print(f"\n== Gate prior (PRIOR_TERMS), cross-language; threshold {threshold} ==")
    priors = (0.0, 1.0, 2.0, 4.0, 8.0)
    gate_out = {
        (lang, prior, mode): run(Ours(prior_terms=prior), data, mode)
        for lang, data in datasets.items()
        for prior in priors
        for mode in ("dialogue", "last")
    }
    print(
        f"{'prior':>6} "
        + " ".join(f"{lang + '/' + m:>22}" for lang in datasets for m in ("dialogue", "last"))
    )
    for prior in priors:
        cells = " ".join(
            (
                f"{gate_out[(lang, prior, m)].injected(threshold):.2f}/"
                f"{gate_out[(lang, prior, m)].false_injection(threshold):.2f}"
                f" thr5%={gate_out[(lang, prior, m)].threshold_at_false():.2f}"
            ).rjust(22)
            for lang in datasets
            for m in ("dialogue", "last")
        )
        print(f"{prior:6.1f} {cells}")
    for src, dst in itertools.permutations(langs, 2):
        fits = [
            p
            for p in priors
            if all(
                gate_out[(src, p, m)].false_injection(threshold) <= 0.05
                for m in ("dialogue", "last")
            )
        ]
        chosen = min(fits) if fits else max(priors)
        cells = ", ".join(
            f"{m}: injected {gate_out[(dst, chosen, m)].injected(threshold):.2f} "
            f"false {gate_out[(dst, chosen, m)].false_injection(threshold):.2f}"
            for m in ("dialogue", "last")
        )
        print(f"  smallest prior with false <= 0.05 on {src}: {chosen} -> on {dst}: {cells}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    parser.add_argument("--quick", action="store_true", help="main tables only")
    parser.add_argument("--json", type=Path, help="write the main figures here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    datasets = {lang: load(args.data, lang) for lang in LANGS}
    for lang, data in datasets.items():
        n_mem = sum(len(m) for m in data.memories.values())
        print(
            f"{lang}: {len(data.queries)} queries, {n_mem} memories, users {sorted(data.memories)}"
        )
    summary = report_main(datasets, args.threshold)
    report_tradeoff(datasets)
    if not args.quick:
        report_ablation(datasets)
        report_cross_validation(datasets, args.threshold)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
