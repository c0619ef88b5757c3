"""Small typed helpers that read the environment and fail loudly on a bad value."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be <= {maximum}, got {value}")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    return value


# DRF's throttle rates: "30/minute"; DRF reads only the period's first letter, so the
# word is checked here.
_RATE = re.compile(r"^[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)$")


def env_rate(name: str, default: str) -> str:
    """A rate as DRF's throttles read it: ``<count>/<second|minute|hour|day>``."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip()
    if not _RATE.match(value):
        raise ImproperlyConfigured(f"{name} must be a rate like 30/minute, got {raw!r}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def _prepare_threshold() -> int | None:
    raw = os.environ.get("DB_PREPARE_THRESHOLD", "").strip().lower()
    if raw in ("off", "none", "no", "false"):
        return None
    return env_int("DB_PREPARE_THRESHOLD", 1, minimum=0)


def database_from_url(url: str, *, base_dir: Path) -> dict[str, Any]:
    """A Django DATABASES entry from ``sqlite:///path`` or ``postgres://user@host/db``.

    SQLite gets WAL, ``transaction_mode=IMMEDIATE`` and a busy timeout: with one web
    process and one worker writing, that turns "database is locked" into a short wait.
    Both keep connections for ``DB_CONN_MAX_AGE`` seconds (default 60; 0 = a new one per
    request or job). PostgreSQL binds parameters on the server and prepares a statement
    the ``DB_PREPARE_THRESHOLD``-th time a connection runs it again (default 1; ``off``
    sends every statement as text, as Django does by default).
    """
    conn_max_age = env_int("DB_CONN_MAX_AGE", 60, minimum=0)
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        raw_path = unquote(parts.path)
        if raw_path in ("", "/"):
            raise ImproperlyConfigured("DATABASE_URL sqlite:/// needs a file path")
        # sqlite:///relative.db -> relative to the project; sqlite:////abs/path -> absolute
        path = Path(raw_path[1:])
        if not path.is_absolute():
            path = base_dir / path
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(path),
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
                "init_command": (
                    "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL;PRAGMA busy_timeout=30000;"
                ),
            },
            # A connection per request cost a run ~6 ms of CPU (benchmarks/run_cpu.py): five
            # PRAGMAs to open it, and closing the last connection to a WAL database
            # checkpoints it. A kept connection holds no lock between requests (Django ends
            # every transaction).
            "CONN_MAX_AGE": conn_max_age,
        }
    if scheme in ("postgres", "postgresql", "pgsql"):
        options: dict[str, Any] = dict(parse_qsl(parts.query))
        threshold = _prepare_threshold()
        if threshold is not None:
            # The run request's dozen statements are the same few texts every time; parsed
            # and planned once per connection, they cost the server about a third less CPU
            # (benchmarks/run_cpu.py). A pooler in transaction mode (pgbouncer before 1.21)
            # hands a connection's prepared statements to other clients: set ``off`` there.
            options.setdefault("server_side_binding", True)
            options.setdefault("prepare_threshold", threshold)
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")) or "postgres",
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            "OPTIONS": options,
            # Persistent connections (checked before reuse): the worker runs many short
            # jobs and would otherwise open a connection per job.
            "CONN_MAX_AGE": conn_max_age,
            "CONN_HEALTH_CHECKS": True,
        }
    raise ImproperlyConfigured(
        f"DATABASE_URL scheme {scheme!r} is not supported (sqlite, postgres)"
    )
