#!/usr/bin/env bash
# Install the project as a server would (no extras) into a fresh venv, then: `check`,
# `check --deploy --fail-level WARNING` with the documented production variables,
# `migrate`, and the production profile itself (scripts/serve.sh: collectstatic, qcluster,
# gunicorn) behind a simulated TLS-terminating proxy: a hashed, compressed static file,
# the English UI (compiled catalogues), a smoke run, and `doctor` all green. Catches a run-time import that only an extra
# (dev, bench) provides, a static file 404 under DEBUG=0, and a deploy warning.
# Usage: scripts/check-prod-install.sh [python]
set -euo pipefail
cd "$(dirname "$0")/.."
interpreter="${1:-$(scripts/find-python.sh)}"
work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "check-prod-install: $*" >&2
  for log in "$work/serve.log" "$work/qcluster.log"; do
    [ -f "$log" ] && { echo "--- $log" >&2; tail -n 40 "$log" >&2; }
  done
  exit 1
}

"$interpreter" -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
# A build copy keeps the source tree free of build/ and *.egg-info.
"$py" -m pip install --quiet .

export DJANGO_DEBUG=0
DJANGO_SECRET_KEY=$("$py" -c 'import secrets; print(secrets.token_urlsafe(50))')
export DJANGO_SECRET_KEY
export DJANGO_ALLOWED_HOSTS=127.0.0.1
export DATABASE_URL="sqlite:///$work/db.sqlite3"
export DJANGO_STATIC_ROOT="$work/static"
export Q_STAT_DIR="$work/qstat"
export Q_NAME="prod-install-check-$$"
unset Q_SYNC Q_BROKER_URL || true

"$py" manage.py check
# The documented production variables: HTTPS behind a proxy that sets X-Forwarded-Proto.
export DJANGO_SECURE=1 DJANGO_SECURE_PROXY_SSL_HEADER=1
"$py" manage.py check --deploy --fail-level WARNING
"$py" manage.py migrate --noinput >/dev/null
account=$("$py" manage.py bootstrap_demo --json)
read -r token agent_id < <("$py" -c 'import json,sys; a=json.load(sys.stdin); print(a["token"], a["agent_id"])' <<<"$account")

port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
PY="$py" HOST=127.0.0.1 PORT="$port" WEB_PROCESSES=2 WEB_THREADS=2 QCLUSTER_LOG="$work/qcluster.log" \
  scripts/serve.sh >"$work/serve.log" 2>&1 &
server=$!
proxied=(-H 'X-Forwarded-Proto: https')
for _ in $(seq 150); do
  curl -fsS -o /dev/null "${proxied[@]}" "$base/accounts/login/" 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || fail "make serve exited"
  sleep 0.2
done

# Plain HTTP (no proxy header) is redirected to HTTPS with DJANGO_SECURE=1.
status=$(curl -sS -o /dev/null -w '%{http_code}' "$base/accounts/login/")
[ "$status" = "301" ] || fail "plain HTTP answered $status, expected a 301 to HTTPS"

# The page links a hashed stylesheet; WhiteNoise serves it compressed and cacheable.
css=$(curl -fsS "${proxied[@]}" "$base/accounts/login/" | grep -o '/static/web/common\.[0-9a-f]\{12\}\.css' | head -n 1) \
  || fail "the login page links no hashed stylesheet"
headers=$(curl -fsS "${proxied[@]}" -H 'Accept-Encoding: gzip' -D - -o "$work/common.css.gz" "$base$css") \
  || fail "$css not served"
grep -qi '^content-encoding: gzip' <<<"$headers" || fail "$css not served compressed"
grep -qi '^cache-control:.*immutable' <<<"$headers" || fail "$css not served as immutable"

# The English UI: the catalogue was compiled by make serve's profile (Babel, no msgfmt).
curl -fsS "${proxied[@]}" -H 'Accept-Language: en' -o "$work/login-en.html" "$base/accounts/login/" \
  || fail "the login page in English did not load"
grep -q '<html lang="en"' "$work/login-en.html" || fail "the login page asked for in English is not in English"
grep -q 'Teacher sign-in' "$work/login-en.html" \
  || fail "the English catalogue is not compiled (the login page shows Chinese)"

status=$(curl -sS "${proxied[@]}" -o "$work/run.json" -w '%{http_code}' -X POST \
  "$base/api/agents/$agent_id/run" \
  -H "Authorization: Token $token" -H 'Content-Type: application/json' \
  -d '{"input": "出一份数据结构试卷"}')
if [ "$status" != "200" ] && [ "$status" != "201" ]; then
  cat "$work/run.json" >&2 || true
  fail "smoke run answered $status"
fi
"$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["status"] == "completed", r' "$work/run.json"

# doctor: every check green once the worker's first heartbeat is in.
for attempt in $(seq 30); do
  if "$py" manage.py doctor >"$work/doctor.txt" 2>&1; then break; fi
  [ "$attempt" = 30 ] && { cat "$work/doctor.txt" >&2; fail "doctor reports failures"; }
  sleep 1
done
cat "$work/doctor.txt"
echo "production install: check, check --deploy, migrate, static files, a smoke run and doctor passed under make serve's profile (no extras)"
