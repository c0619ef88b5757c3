#!/usr/bin/env bash
# Start the demo: the memory worker (django-q2 cluster) beside the web server.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8000}"

account=$($PY manage.py bootstrap_demo --json)
read -r username password token agent_id < <(
  $PY -c 'import json,sys; a=json.load(sys.stdin); print(a["username"], a["password"], a["token"], a["agent_id"])' <<<"$account"
)

$PY manage.py qcluster >.qcluster.log 2>&1 &
worker=$!
trap 'kill $worker 2>/dev/null || true; wait $worker 2>/dev/null || true' EXIT INT TERM

cat <<MSG

  agent-memory is starting on http://$HOST:$PORT  (memory worker pid $worker, log: .qcluster.log)

  Chat page:  http://$HOST:$PORT/chat/     username: $username   password: $password
  API docs:   http://$HOST:$PORT/api/docs
  Admin:      http://$HOST:$PORT/admin/    (create an operator: .venv/bin/python manage.py createsuperuser)

  Try the API:
    curl -s -X POST http://$HOST:$PORT/api/agents/$agent_id/run \\
      -H 'Authorization: Token $token' -H 'Content-Type: application/json' \\
      -d '{"input": "出一份数据结构试卷"}'

  Streaming (server-sent events):
    curl -N -X POST http://$HOST:$PORT/api/agents/$agent_id/run/stream \\
      -H 'Authorization: Token $token' -H 'Content-Type: application/json' \\
      -d '{"input": "出一份数据结构试卷"}'

MSG
$PY manage.py runserver "$HOST:$PORT" --noreload
