"""Commits that need not wait for the disk (PostgreSQL's ``synchronous_commit``).

On PostgreSQL every commit waits until its write-ahead log is on disk: about 6 ms on this
machine's shared disk against 0.2 ms without the wait, and a run and its memory job make
about a dozen commits. The load test found that wait, not the CPU, to be what held runs
per second and the memory worker back (benchmarks/load.py; the README's figures). Work
that is redone when lost need not wait:

- the memory worker's tasks (the job, a compression, the sweep): idempotent, and a job
  whose commits a database crash lost leaves its run's memory pending, which the sweeper
  redoes;
- a run's start and its context record: the run's finishing commit still waits, and it
  flushes the log before it, so a run a teacher saw answered is on disk with both. The
  web's connections wait by session (set once per connection, by the first finishing
  commit), so a finishing commit sends no statement of its own, and only the start and
  the context record say ``SET LOCAL ... OFF``.

An asynchronous commit can be lost only in a crash of the database server itself (not
of this application), and only the newest commits, in commit order: never half of a
transaction, never a later commit without an earlier one. SQLite in WAL mode with
``synchronous=NORMAL`` (config/env.py) already commits without a disk flush.
"""

from __future__ import annotations

from django.db import connection


def synchronous_commit(*, wait: bool, session: bool = False) -> None:
    """Whether the current transaction's commit waits for the disk (or, with
    ``session``, every later commit on this connection: the worker's, and the web's
    finishing commits: call it before the transaction). PostgreSQL only; call it first
    inside the transaction.

    A session setting is made once per database connection (a statement less per task,
    per run). It is remembered only when made outside a transaction, where it takes
    effect for good (inside one a rollback would undo it). A new connection (a
    reconnect) has its own raw connection object, so it is set again.
    """
    if connection.vendor != "postgresql":
        return
    if session:
        connection.ensure_connection()
        if getattr(connection, _MARK, None) == (connection.connection, wait):
            return
    scope = "SESSION" if session else "LOCAL"
    with connection.cursor() as cursor:
        cursor.execute(f"SET {scope} synchronous_commit TO {'ON' if wait else 'OFF'}")
    if session and not connection.in_atomic_block:
        setattr(connection, _MARK, (connection.connection, wait))


# The connection wrapper's attribute: the raw connection the session setting was made
# on, and its value.
_MARK = "_memory_session_synchronous_commit"
