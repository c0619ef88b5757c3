"""Over real HTTP: SSE consumed incrementally, and threads surviving a server restart."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.cluster import serve
from tests.factories import make_teacher
from tests.fakellm import unused_port

pytestmark = pytest.mark.django_db(transaction=True)


def post(
    base: str, path: str, token: str, body: dict[str, object], accept: str = "application/json"
) -> http.client.HTTPResponse:
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request(
        "POST",
        path,
        body=json.dumps(body).encode(),
        headers={
            "Authorization": f"Token {token}",
            "Content-Type": "application/json",
            "Accept": accept,
        },
    )
    return conn.getresponse()


def get(base: str, path: str, token: str) -> dict[str, object]:
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request("GET", path, headers={"Authorization": f"Token {token}"})
    response = conn.getresponse()
    assert response.status == 200, response.read()
    return json.loads(response.read())


def test_sse_streams_incrementally_over_http(live_server, transactional_db: None) -> None:  # type: ignore[no-untyped-def]
    teacher = make_teacher(tenant_name="直播学校", username="sse")
    response = post(
        live_server.url,
        f"/api/agents/{teacher.agent.pk}/run/stream",
        teacher.token,
        {"input": "出一份数据结构试卷"},
        accept="text/event-stream",
    )
    assert response.status == 200
    assert response.getheader("Content-Type", "").startswith("text/event-stream")
    assert "gzip" not in (response.getheader("Content-Encoding") or "")
    events = []
    buffer = b""
    while chunk := response.read1(4096):
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            lines = dict(line.split(": ", 1) for line in block.decode().splitlines())
            events.append((lines["event"], json.loads(lines["data"])))
    names = [name for name, _ in events]
    assert names[0] == "started" and names[-1] == "done" and names.count("delta") >= 2
    assert events[0][1]["thread_id"].startswith("th_")


@pytest.mark.slow
def test_threads_come_back_after_a_server_restart(transactional_db: None, tmp_path: Path) -> None:
    teacher = make_teacher(tenant_name="重启学校", username="rs")
    port = unused_port()
    base = f"http://127.0.0.1:{port}"
    server = serve(port, tmp_path / "server.log")
    try:
        runs = []
        thread_id = None
        for text in ["出一份数据结构试卷", "简答题换两道"]:
            body: dict[str, object] = {"input": text}
            if thread_id:
                body["thread_id"] = thread_id
            response = post(base, f"/api/agents/{teacher.agent.pk}/run", teacher.token, body)
            run = json.loads(response.read())
            thread_id = run["thread_id"]
            runs.append(run)
    finally:
        server.kill()
        server.wait()
    server = serve(port, tmp_path / "server.log")
    try:
        threads = get(base, f"/api/agents/{teacher.agent.pk}/threads", teacher.token)
        assert [t["id"] for t in threads["results"]] == [thread_id]  # type: ignore[index]
        messages = get(base, f"/api/threads/{thread_id}/runs", teacher.token)
        assert [(m["input"], m["output"]) for m in messages["results"]] == [  # type: ignore[index]
            (r["input"], r["output"]) for r in runs
        ]
    finally:
        server.kill()
        server.wait()
