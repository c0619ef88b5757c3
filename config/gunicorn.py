"""gunicorn settings for the production profile: ``gunicorn -c config/gunicorn.py config.wsgi``.

gthread: each process serves WEB_THREADS requests at once, so a streaming run (SSE, a
sync generator held open for the whole model answer) occupies one thread, not a process.
Everything comes from the environment (see .env.example), read with the same typed
helpers as config/settings.py.
"""

from config.env import env_int, env_str

wsgi_app = "config.wsgi:application"
worker_class = "gthread"
# Several processes want PostgreSQL; on SQLite one process (with its threads) is the
# default, as SQLite takes one writer at a time anyway.
_postgres = env_str("DATABASE_URL", "").startswith(("postgres", "pgsql"))
workers = env_int("WEB_PROCESSES", 2 if _postgres else 1, minimum=1)
threads = env_int("WEB_THREADS", 8, minimum=1)
bind = [env_str("WEB_BIND", "127.0.0.1:8000")]
# A worker silent this long is restarted. gthread workers stay responsive while their
# threads stream, so this bounds a hung process, not a long answer.
timeout = env_int("WEB_TIMEOUT", 60, minimum=10)
graceful_timeout = 30
# Keep-alive between a reverse proxy and gunicorn.
keepalive = 5
accesslog = env_str("WEB_ACCESS_LOG", "-") or None
errorlog = "-"
# Let a reverse proxy on this host pass X-Forwarded-* (Django decides what to trust:
# DJANGO_SECURE_PROXY_SSL_HEADER).
forwarded_allow_ips = env_str("WEB_FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
# gunicorn >= 25 opens a control socket at one fixed path per user; two servers on one
# host (two installs, parallel tests) would take each other's. Not used here.
control_socket_disable = True
