#!/usr/bin/env bash
# Install the project as a server would (no extras) into a fresh venv, then run `check`,
# `migrate` and a smoke request under gunicorn. Catches a run-time import that only an
# extra (dev, bench) provides. Usage: scripts/check-prod-install.sh [python]
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

"$interpreter" -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
# A build copy keeps the source tree free of build/ and *.egg-info.
"$py" -m pip install --quiet .

export DJANGO_DEBUG=0
export DJANGO_SECRET_KEY="prod-install-check-$(date +%s)-not-a-secret"
export DJANGO_ALLOWED_HOSTS=127.0.0.1
export DATABASE_URL="sqlite:///$work/db.sqlite3"
unset Q_SYNC || true

"$py" manage.py check
"$py" manage.py migrate --noinput >/dev/null
account=$("$py" manage.py bootstrap_demo --json)
read -r token agent_id < <("$py" -c 'import json,sys; a=json.load(sys.stdin); print(a["token"], a["agent_id"])' <<<"$account")

port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$work/venv/bin/gunicorn" -k gthread --threads 2 -w 1 -b "127.0.0.1:$port" config.wsgi \
  >"$work/gunicorn.log" 2>&1 &
server=$!
for _ in $(seq 50); do
  curl -fsS -o /dev/null "http://127.0.0.1:$port/accounts/login/" 2>/dev/null && break
  sleep 0.2
done
status=$(curl -sS -o "$work/run.json" -w '%{http_code}' -X POST \
  "http://127.0.0.1:$port/api/agents/$agent_id/run" \
  -H "Authorization: Token $token" -H 'Content-Type: application/json' \
  -d '{"input": "出一份数据结构试卷"}')
if [ "$status" != "200" ] && [ "$status" != "201" ]; then
  echo "smoke run answered $status:" >&2
  cat "$work/run.json" >&2 || true
  cat "$work/gunicorn.log" >&2 || true
  exit 1
fi
"$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["status"] == "completed", r' "$work/run.json"
echo "production install: check, migrate and a smoke run under gunicorn passed (no extras)"
