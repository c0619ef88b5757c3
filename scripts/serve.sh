#!/usr/bin/env bash
# The production profile on this machine: compile the message catalogues, migrate,
# collect static files, compile the search loop, then one
# django-q2 cluster (Q_WORKERS workers) beside gunicorn (WEB_PROCESSES x WEB_THREADS,
# config/gunicorn.py), DEBUG off, static files served by WhiteNoise.
# The environment configures it (.env.example); without DJANGO_SECRET_KEY a key is
# generated once into .secret_key (mode 600) so that restarts keep sessions valid.
#   scripts/serve.sh                 serve (make serve)
#   scripts/serve.sh manage ARGS...  manage.py ARGS in the same environment (make doctor)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
GUNICORN="${GUNICORN:-$(dirname "$PY")/gunicorn}"

export DJANGO_DEBUG=0
if [ -z "${DJANGO_SECRET_KEY:-}" ]; then
  if [ ! -s .secret_key ]; then
    (umask 077; "$PY" -c 'import secrets; print(secrets.token_urlsafe(50))' >.secret_key)
    echo "serve: generated a secret key in .secret_key (set DJANGO_SECRET_KEY on a real server)"
  fi
  DJANGO_SECRET_KEY=$(cat .secret_key)
  export DJANGO_SECRET_KEY
fi
export WEB_BIND="${WEB_BIND:-${HOST:-127.0.0.1}:${PORT:-8000}}"
unset Q_SYNC || true

if [ "${1:-}" = "manage" ]; then
  shift
  exec "$PY" manage.py "$@"
fi

# The English UI: compile the message catalogues (Babel, pure Python; build output).
"$PY" manage.py catalogue_compile >/dev/null
"$PY" manage.py check --fail-level ERROR
"$PY" manage.py migrate --noinput
"$PY" manage.py collectstatic --noinput --verbosity 0
# The search loop compiled once, here, into numba's disk cache: no teacher's first search
# waits for the compiler, and the web processes do not all compile it at once.
"$PY" manage.py search_warm

# Its own process group: a Ctrl-C (SIGINT to the whole foreground group) must reach only
# the cluster's main process, which then stops its sentinel and workers in order. When
# they get the signal at the same moment, django-q2's main process can block forever on
# the stop event the dying sentinel held.
setsid "$PY" manage.py qcluster >>"${QCLUSTER_LOG:-.qcluster.log}" 2>&1 &
worker=$!
web=""
stop() {
  trap - EXIT INT TERM
  [ -n "$web" ] && kill -TERM "$web" 2>/dev/null || true
  kill -TERM "$worker" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$worker" 2>/dev/null || break; sleep 0.1; done
  # Still there after 30 s: end its group (sentinel, workers); the sweeper redoes any job.
  kill -KILL -- "-$worker" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop EXIT INT TERM

echo "serve: http://$WEB_BIND  (gunicorn: config/gunicorn.py, WEB_PROCESSES x WEB_THREADS;" \
  "memory worker pid $worker with ${Q_WORKERS:-1} worker(s), log ${QCLUSTER_LOG:-.qcluster.log})"
echo "serve: check it with: make doctor"
"$GUNICORN" -c config/gunicorn.py &
web=$!
# Whichever ends first (a crashed worker cluster or gunicorn) stops the other.
wait -n "$web" "$worker" || true
