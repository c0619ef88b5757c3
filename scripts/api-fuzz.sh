#!/usr/bin/env bash
# schemathesis against a live server with DEBUG off on a fresh SQLite database: every
# operation of /api/schema, positive and negative data, all checks. Passes with 0 server
# errors and 0 schema violations; bounded by FUZZ_EXAMPLES per operation and FUZZ_MAX_TIME.
#   scripts/api-fuzz.sh [extra schemathesis options]
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
SCHEMATHESIS="${SCHEMATHESIS:-$(dirname "$PY")/schemathesis}"
work=$(mktemp -d /tmp/agent-memory-fuzz.XXXXXX)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

export DJANGO_DEBUG=0
DJANGO_SECRET_KEY=$("$PY" -c 'import secrets; print(secrets.token_urlsafe(50))')
export DJANGO_SECRET_KEY
export DATABASE_URL="sqlite:///$work/db.sqlite3"
export Q_NAME="agent-memory-fuzz-$$" Q_STAT_DIR="$work/q"
export DJANGO_STATIC_ROOT="$work/static"
# Memory jobs run inside each run request, so candidates and facts exist to be fuzzed.
export Q_SYNC=1
export OFFLINE_STREAM_DELAY=0 LOG_LEVEL="${LOG_LEVEL:-ERROR}"
# The run limits are tested elsewhere (tests/test_throttling.py); here they would turn
# most run requests into 429s. The login lockout keeps its defaults.
export RUN_RATE_USER=100000/minute RUN_RATE_TENANT=100000/minute
unset LIMITS_CACHE_URL Q_BROKER_URL || true

"$PY" manage.py migrate --noinput --verbosity 0
"$PY" manage.py collectstatic --noinput --verbosity 0
token=$("$PY" manage.py bootstrap_demo --json | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["token"])')
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PY" manage.py runserver --noreload "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
  curl -fs -o /dev/null "http://127.0.0.1:$port/api/schema" && break
  sleep 0.2
done

status=0
# Every check but positive_data_acceptance ("schema-valid data must be accepted"): a
# well-formed thread id that does not exist, or a password that is wrong, is refused
# with 400 by design, and no schema can say which ids exist.
report="$work/report.ndjson"
"$SCHEMATHESIS" run "http://127.0.0.1:$port/api/schema" \
  --header "Authorization: Token $token" \
  --checks all \
  --exclude-checks positive_data_acceptance \
  --max-examples "${FUZZ_EXAMPLES:-20}" \
  --max-time "${FUZZ_MAX_TIME:-150}" \
  --request-timeout 20 \
  --seed "${FUZZ_SEED:-20261202}" \
  --workers 1 \
  --no-color \
  --report ndjson --report-ndjson-path "$report" \
  "$@" || status=$?
# The requests sent, by status (the figures for the note).
"$PY" - "$report" <<'SUMMARY'
import collections, json, sys

statuses = collections.Counter()

def walk(node):
    if isinstance(node, dict):
        if isinstance(node.get("status_code"), int) and "elapsed" in node:
            statuses[node["status_code"]] += 1
        for value in node.values():
            walk(value)
    elif isinstance(node, list):
        for value in node:
            walk(value)

for line in open(sys.argv[1]):
    walk(json.loads(line))
server_errors = sum(n for code, n in statuses.items() if code >= 500)
print(f"api-fuzz: {sum(statuses.values())} requests, 5xx: {server_errors}, by status:",
      dict(sorted(statuses.items())))
SUMMARY
if grep -q "Traceback\|Internal Server Error" "$work/server.log"; then
  echo "api-fuzz: the server logged errors:" >&2
  grep -B2 -A20 "Traceback\|Internal Server Error" "$work/server.log" | head -80 >&2
  status=1
fi
exit "$status"
