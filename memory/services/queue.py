"""Enqueueing background work in the transaction of the row it is about (STYLE 8).

One helper for every memory task (the after-run job, catch-up compression, knowledge-base
processing): with the ORM broker the queue row is part of the caller's transaction;
with Redis, or in the tests' sync mode, the task is sent after commit.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django_q.tasks import async_task


def enqueue(func: str, *args: object, name: str) -> None:
    def send() -> None:
        async_task(func, *args, task_name=name, group="memory")

    if settings.Q_CLUSTER.get("sync"):
        # Sync mode runs the task inline; run it after commit so that the job still
        # never executes (or calls an LLM) inside the finishing transaction.
        transaction.on_commit(send)
    elif "orm" in settings.Q_CLUSTER:
        # ORM broker: the queue row is part of the finishing transaction.
        send()
    else:
        # Redis cannot join the transaction: push after commit. A failed push is logged,
        # never raised into a request whose run has committed; the sweeper re-enqueues
        # it (config/settings.py, Q_BROKER_URL, explains the window).
        transaction.on_commit(send, robust=True)
