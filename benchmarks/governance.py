"""Governance costs (issue #14), measured in the database.

    .venv/bin/python benchmarks/governance.py [--backend sqlite|postgres|all]
        [--entries 100000] [--runs 2000] [--lines 2000]

* Removing a recall entry makes every process rebuild its index of the scope (the
  epoch, memory/services/recall.py): the first search after one removal, next to the
  first search after one addition (incremental), in a scope of ``--entries`` entries.
* "Forget this text" over a teacher's memory of ``--runs`` runs (1 in 50 mention the
  text; every run with its recall entry and manifest): the worker's whole job.
* Legacy import of a recall log of ``--lines`` lines (runs + recall entries, one
  transaction) and of it again (every line a duplicate).
"""

from __future__ import annotations

import json
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
            p.add_argument("--runs", type=int, default=2_000),
            p.add_argument("--lines", type=int, default=2_000),
        ),
    )
    if not _setup.is_child():
        extra = ["--entries", str(args.entries), "--runs", str(args.runs)]
        _setup.run_per_backend(__file__, [*extra, "--lines", str(args.lines)], args.backend)
        return
    _setup.django_ready()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone
    from recall import make_entry, make_query

    from agents.models import Agent, Membership, Run
    from agents.services_demo import demo_bootstrap
    from memory.models import MemoryJob, RecallEntry, RecallScope, RunContext
    from memory.scope import Scope
    from memory.services.forget import memory_forget, memory_job_process
    from memory.services.legacy_import import legacy_import
    from memory.services.recall import (
        RecallQuery,
        recall_cache_clear,
        recall_search,
        recall_upsert,
        stored_terms,
    )

    vendor = connection.vendor
    rng = random.Random(11)
    account = demo_bootstrap(tenant_name="基准学校", username="bench")
    agent = Agent.objects.get(pk=account.agent_id)
    owner_id = agent.tenant.memberships.get().user_id

    def bulk_scope(owner: int, texts: list[str]) -> Scope:
        scope = Scope(tenant_id=agent.tenant_id, agent_id=agent.pk, owner_id=owner)
        start = timezone.now() - timedelta(days=365)
        Run.objects.bulk_create(
            [
                Run(
                    tenant_id=agent.tenant_id,
                    agent=agent,
                    owner_id=owner,
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
        runs = list(
            Run.objects.filter(owner_id=owner).order_by("pk").values_list("pk", "created_at")
        )
        RecallEntry.objects.bulk_create(
            [
                RecallEntry(
                    **scope.filter_kwargs(),
                    run_id=pk,
                    text=t,
                    terms=stored_terms(t),
                    created_at=created,
                )
                for (pk, created), t in zip(runs, texts, strict=True)
            ],
            batch_size=2000,
        )
        last = RecallEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
        RecallScope.objects.create(
            **scope.filter_kwargs(), version=1, entry_count=len(texts), max_entry_id=last
        )
        return scope

    # -- removal: every process rebuilds ----------------------------------------------------
    scope = bulk_scope(owner_id, [make_entry(rng) for _ in range(args.entries)])
    queries = [RecallQuery(message=make_query(rng)) for _ in range(20)]
    recall_cache_clear()
    began = time.perf_counter()
    recall_search(scope=scope, query=queries[0])
    cold = time.perf_counter() - began
    added, removed = [], []
    for i in range(3):
        run = Run.objects.create(
            tenant_id=agent.tenant_id,
            agent=agent,
            owner_id=owner_id,
            input=make_query(rng),
            output="好的",
            status="completed",
        )
        recall_upsert(run=run)
        t0 = time.perf_counter()
        recall_search(scope=scope, query=queries[i + 1])
        added.append(time.perf_counter() - t0)
        victim = RecallEntry.objects.filter(owner_id=owner_id).order_by("?").first()
        assert victim is not None
        Run.objects.filter(pk=victim.run_id).delete()  # any path: the receiver bumps the epoch
        t0 = time.perf_counter()
        recall_search(scope=scope, query=queries[i + 4])
        removed.append(time.perf_counter() - t0)
    print(
        f"[{vendor}] {args.entries} entries: cold build {cold:.2f} s; first search after an "
        f"addition {1000 * min(added):.1f}–{1000 * max(added):.1f} ms; after a removal "
        f"(drops it) {1000 * min(removed):.0f}–{1000 * max(removed):.0f} ms"
    )

    # -- forget a text --------------------------------------------------------------------
    teacher = get_user_model().objects.create_user("forgetful")
    Membership.objects.create(tenant=agent.tenant, user=teacher)
    name = "王小明"
    texts = [
        (f"给{name}单独出一份练习，" if i % 50 == 0 else "") + make_entry(rng)
        for i in range(args.runs)
    ]
    forget_scope = bulk_scope(teacher.pk, texts)
    RunContext.objects.bulk_create(
        [
            RunContext(run_id=pk, messages=[{"role": "user", "content": text}], injected_text="")
            for pk, text in zip(
                Run.objects.filter(owner=teacher).order_by("pk").values_list("pk", flat=True),
                texts,
                strict=True,
            )
        ],
        batch_size=2000,
    )
    job = memory_forget(scope=forget_scope, text=name, actor_id=teacher.pk)
    began = time.perf_counter()
    outcome = memory_job_process(job_id=job.pk)
    took = time.perf_counter() - began
    assert MemoryJob.objects.get(pk=job.pk).status == "done"
    print(
        f"[{vendor}] forget over {args.runs} runs (+ entries, manifests): {took:.2f} s; "
        f"counts {outcome.counts}"
    )

    # -- legacy import --------------------------------------------------------------------
    importer = get_user_model().objects.create_user("importer")
    Membership.objects.create(tenant=agent.tenant, user=importer)
    start = timezone.now() - timedelta(days=200)
    log = "\n".join(
        json.dumps(
            {
                "ts": (start + timedelta(minutes=i)).isoformat(),
                "input": make_query(rng),
                "output": make_entry(rng)[:300],
            },
            ensure_ascii=False,
        )
        for i in range(args.lines)
    ).encode()
    for label in ("first import", "again (all duplicates)"):
        began = time.perf_counter()
        report = legacy_import(agent=agent, owner=importer, recall=log)
        took = time.perf_counter() - began
        counts = report.files[0].counts()
        print(
            f"[{vendor}] legacy import of {args.lines} recall lines, {label}: {took:.2f} s "
            f"({args.lines / took:.0f} lines/s); imported {counts['imported']}, "
            f"duplicates {counts['duplicates']}"
        )


if __name__ == "__main__":
    main()
