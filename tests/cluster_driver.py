"""A separate process that finishes runs, for the real-cluster tests.

    python -m tests.cluster_driver --agent 1 --owner 2 --count 10 [--thread th_x | --new-thread]

Runs on config.settings (django-q2 *not* in sync mode), so every finished run enqueues
its memory job into the ORM broker for a real qcluster to take. Prints the run ids as
JSON. The database comes from DATABASE_URL, as for the server.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", type=int, required=True)
    parser.add_argument("--owner", type=int, required=True)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--thread", default=None)
    parser.add_argument("--new-thread", action="store_true", help="one new thread, then reuse it")
    parser.add_argument(
        "--threads", type=int, default=1, help="with --new-thread: this many new threads"
    )
    parser.add_argument("--prefix", default="消息")
    parser.add_argument("--pace", type=float, default=0.0, help="seconds between two runs")
    parser.add_argument(
        "--rollback",
        action="store_true",
        help="finish the runs inside one transaction, then roll it back",
    )
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.db import transaction

    from agents.models import Agent

    agent = Agent.objects.select_related("provider").get(pk=args.agent)
    ids: list[int] = []
    thread_ids: list[str | None] = []
    if args.rollback:
        try:
            with transaction.atomic():
                _runs(agent, args, ids, thread_ids)
                raise _RolledBack
        except _RolledBack:
            pass
    else:
        _runs(agent, args, ids, thread_ids)
    json.dump({"run_ids": ids, "thread_id": thread_ids[0], "thread_ids": thread_ids}, sys.stdout)


class _RolledBack(Exception):
    pass


def _runs(
    agent: Any, args: argparse.Namespace, ids: list[int], thread_ids: list[str | None]
) -> None:
    # Imported once Django is set up (main() configures it; this script is its own process).
    from runs.services import run_execute, run_start

    # With several new threads, the runs go round-robin over them (a thread's next run
    # comes after one run of each other thread), as teachers chatting side by side do.
    threads: list[str | None] = [args.thread] * (args.threads if args.new_thread else 1)
    for index in range(args.count):
        for slot, thread_id in enumerate(threads):
            if args.pace and ids:
                time.sleep(args.pace)
            started = run_start(
                agent=agent,
                owner_id=args.owner,
                user_input=f"{args.prefix} {index}：出一份数据结构小测验",
                thread_id=thread_id,
            )
            run = run_execute(started=started)
            if args.new_thread:
                threads[slot] = run.thread_id
            ids.append(run.pk)
    thread_ids.extend(threads)


if __name__ == "__main__":
    main()
