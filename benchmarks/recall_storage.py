"""Recall storage, measured in the database (issue #6: "choose by measurement").

    .venv/bin/python benchmarks/recall_storage.py [--backend sqlite|postgres|all] [--entries 100000]

One 100k-entry scope (benchmarks/recall.py's synthetic teacher corpus), stored as the app
stores it (RecallEntry rows with pre-tokenised terms), then, side by side:
* ours: ``recall_search`` end to end (scope version read + in-memory BM25 + row fetch),
  cold build from the database, and per-run update (``recall_upsert`` + the next search's
  incremental load);
* the database's own full-text search over the same pre-tokenised terms: SQLite FTS5 with
  ``bm25()``, PostgreSQL ``tsvector`` + GIN with ``ts_rank`` (not BM25; for speed only).
"""

from __future__ import annotations

import random
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup


def main() -> None:
    args = _setup.parse(
        __doc__ or "",
        lambda p: (
            p.add_argument("--entries", type=int, default=100_000),
            p.add_argument("--queries", type=int, default=300),
        ),
    )
    if not _setup.is_child():
        _setup.run_per_backend(
            __file__, ["--entries", str(args.entries), "--queries", str(args.queries)], args.backend
        )
        return
    _setup.django_ready()
    from django.db import connection
    from django.utils import timezone
    from recall import make_entry, make_query

    from agents.models import Agent, Run
    from agents.services_demo import demo_bootstrap
    from memory.models import RecallEntry, RecallScope
    from memory.recall import terms
    from memory.scope import Scope
    from memory.services.recall import (
        RecallQuery,
        recall_cache_clear,
        recall_search,
        recall_upsert,
        stored_terms,
    )

    vendor = connection.vendor
    rng = random.Random(7)
    account = demo_bootstrap(tenant_name="基准学校", username="bench")
    agent = Agent.objects.get(pk=account.agent_id)
    owner_id = agent.tenant.memberships.get().user_id
    scope = Scope(tenant_id=agent.tenant_id, agent_id=agent.pk, owner_id=owner_id)
    texts = [make_entry(rng) for _ in range(args.entries)]
    began = time.perf_counter()
    start = timezone.now() - timedelta(days=365)
    Run.objects.bulk_create(
        [
            Run(
                tenant_id=agent.tenant_id,
                agent=agent,
                owner_id=owner_id,
                input=t[:200],
                output=t[200:],
                status="completed",
                created_at=start + timedelta(seconds=i),
                memory_state="done",
            )
            for i, t in enumerate(texts)
        ],
        batch_size=2000,
    )
    run_ids = list(Run.objects.order_by("pk").values_list("pk", "created_at"))
    RecallEntry.objects.bulk_create(
        [
            RecallEntry(
                **scope.filter_kwargs(),
                run_id=pk,
                text=t,
                terms=stored_terms(t),
                created_at=created,
            )
            for (pk, created), t in zip(run_ids, texts, strict=True)
        ],
        batch_size=2000,
    )
    last = RecallEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    RecallScope.objects.create(
        **scope.filter_kwargs(), version=1, entry_count=len(texts), max_entry_id=last
    )
    print(f"[{vendor}] stored {len(texts)} entries in {time.perf_counter() - began:.1f} s")

    queries = [RecallQuery(message=make_query(rng)) for _ in range(args.queries)]
    recall_cache_clear()
    began = time.perf_counter()
    recall_search(scope=scope, query=queries[0])
    print(
        f"[{vendor}] ours: cold index build from the database {time.perf_counter() - began:.2f} s"
    )
    samples = []
    for query in queries:
        t0 = time.perf_counter()
        recall_search(scope=scope, query=query)
        samples.append((time.perf_counter() - t0) * 1000)
    p50, p95 = _setup.percentiles(samples)
    print(f"[{vendor}] ours: recall_search end to end p50={p50:.2f} ms p95={p95:.2f} ms")

    upserts, refresh = [], []
    for i in range(50):
        run = Run.objects.create(
            tenant_id=agent.tenant_id,
            agent=agent,
            owner_id=owner_id,
            input=make_query(rng),
            output="好的",
            status="completed",
        )
        t0 = time.perf_counter()
        recall_upsert(run=run)
        upserts.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        recall_search(scope=scope, query=queries[i])
        refresh.append((time.perf_counter() - t0) * 1000)
    u50, u95 = _setup.percentiles(upserts)
    r50, r95 = _setup.percentiles(refresh)
    print(
        f"[{vendor}] ours: per-run update: recall_upsert p50={u50:.2f} ms p95={u95:.2f} ms; "
        f"next search incl. incremental load p50={r50:.2f} ms p95={r95:.2f} ms"
    )

    query_terms = [sorted(set(terms(q.message))) for q in queries]
    with connection.cursor() as cursor:
        if vendor == "sqlite":
            began = time.perf_counter()
            cursor.execute("CREATE VIRTUAL TABLE bench_fts USING fts5(terms, tokenize='unicode61')")
            cursor.execute(
                "INSERT INTO bench_fts(rowid, terms) SELECT run_id, terms FROM memory_recallentry"
            )
            print(f"[{vendor}] FTS5: build {time.perf_counter() - began:.1f} s")
            samples = []
            for qt in query_terms:
                match = " OR ".join('"' + t.replace('"', "") + '"' for t in qt)
                t0 = time.perf_counter()
                cursor.execute(
                    "SELECT rowid, bm25(bench_fts) AS s FROM bench_fts WHERE bench_fts MATCH %s "
                    "ORDER BY s LIMIT 10",
                    [match],
                )
                cursor.fetchall()
                samples.append((time.perf_counter() - t0) * 1000)
            p50, p95 = _setup.percentiles(samples)
            print(f"[{vendor}] FTS5 bm25(): p50={p50:.2f} ms p95={p95:.2f} ms")
        else:
            began = time.perf_counter()
            cursor.execute("ALTER TABLE memory_recallentry ADD COLUMN bench_tsv tsvector")
            cursor.execute("UPDATE memory_recallentry SET bench_tsv = to_tsvector('simple', terms)")
            cursor.execute("CREATE INDEX bench_tsv_gin ON memory_recallentry USING gin(bench_tsv)")
            print(f"[{vendor}] tsvector+GIN: build {time.perf_counter() - began:.1f} s")
            samples = []
            for qt in query_terms[:100]:
                tsq = " | ".join("'" + t.replace("'", "") + "'" for t in qt)
                t0 = time.perf_counter()
                cursor.execute(
                    "SELECT run_id, ts_rank(bench_tsv, q) AS s FROM memory_recallentry, "
                    "to_tsquery('simple', %s) q WHERE bench_tsv @@ q ORDER BY s DESC LIMIT 10",
                    [tsq],
                )
                cursor.fetchall()
                samples.append((time.perf_counter() - t0) * 1000)
            p50, p95 = _setup.percentiles(samples)
            print(f"[{vendor}] tsvector ts_rank (100 queries): p50={p50:.2f} ms p95={p95:.2f} ms")


if __name__ == "__main__":
    main()
