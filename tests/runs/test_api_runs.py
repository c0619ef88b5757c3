"""The run endpoints: auth, tenants, bad input, happy path, provider failures."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from agents.models import Run
from tests.factories import Teacher, make_provider, make_teacher
from tests.fakellm import FakeLLMServer, unused_port

pytestmark = pytest.mark.django_db


def run_url(agent_id: int, stream: bool = False) -> str:
    return f"/api/agents/{agent_id}/run" + ("/stream" if stream else "")


def test_token_endpoint_exchanges_password_for_token(teacher: Teacher) -> None:
    client = APIClient()
    bad = client.post("/api/auth/token", {"username": "zhang", "password": "nope"}, format="json")
    assert bad.status_code == 400
    good = client.post(
        "/api/auth/token", {"username": "zhang", "password": "pw-zhang"}, format="json"
    )
    assert good.status_code == 200
    assert good.json()["token"] == teacher.token


def test_no_credentials_is_401(teacher: Teacher) -> None:
    client = APIClient()
    assert client.get("/api/agents").status_code == 401
    response = client.post(run_url(teacher.agent.pk), {"input": "你好"}, format="json")
    assert response.status_code == 401
    assert Run.objects.count() == 0


def test_agents_lists_only_my_tenants(teacher: Teacher, outsider: Teacher) -> None:
    response = teacher.client.get("/api/agents")
    assert response.status_code == 200
    ids = [a["id"] for a in response.json()]
    assert ids == [teacher.agent.pk]
    assert response.json()[0]["provider"]["is_offline"] is True
    assert "演示" in response.json()[0]["provider"]["label"]


def test_sync_run_answers_and_records_usage(teacher: Teacher) -> None:
    response = teacher.client.post(
        run_url(teacher.agent.pk), {"input": "出一份数据结构试卷"}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "completed"
    assert "数据结构" in body["output"]
    assert body["usage"]["input_tokens"] > 0 and body["usage"]["output_tokens"] > 0
    assert body["thread_id"].startswith("th_")
    run = Run.objects.get(pk=body["id"])
    assert run.started_at is not None and run.finished_at is not None
    assert run.finished_at >= run.started_at


@pytest.mark.parametrize("path", ["/api/agents/{id}/run", "/api/agents/{id}/run/"])
def test_paths_work_with_and_without_trailing_slash(teacher: Teacher, path: str) -> None:
    response = teacher.client.post(
        path.format(id=teacher.agent.pk), {"input": "你好"}, format="json"
    )
    assert response.status_code == 200


def test_another_tenants_agent_is_404(teacher: Teacher, outsider: Teacher) -> None:
    for stream in (False, True):
        response = teacher.client.post(
            run_url(outsider.agent.pk, stream), {"input": "你好"}, format="json"
        )
        assert response.status_code == 404
    assert Run.objects.count() == 0


def test_another_tenants_run_is_404(teacher: Teacher, outsider: Teacher) -> None:
    body = outsider.client.post(run_url(outsider.agent.pk), {"input": "你好"}, format="json").json()
    assert teacher.client.get(f"/api/runs/{body['id']}").status_code == 404
    assert outsider.client.get(f"/api/runs/{body['id']}").status_code == 200


def test_colleagues_run_is_404_but_tenant_admin_sees_it(
    teacher: Teacher, colleague: Teacher
) -> None:
    body = teacher.client.post(run_url(teacher.agent.pk), {"input": "你好"}, format="json").json()
    assert colleague.client.get(f"/api/runs/{body['id']}").status_code == 404
    admin = make_teacher(
        tenant_name=teacher.tenant.name, username="admin", agent=teacher.agent, role="admin"
    )
    assert admin.client.get(f"/api/runs/{body['id']}").status_code == 200


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "input"),
        ({"input": ""}, "input"),
        ({"input": "   \n "}, "input"),
        ({"input": 42}, "input"),
        ({"input": ["出题"]}, "input"),
        ({"input": {"text": "出题"}}, "input"),
        ({"input": None}, "input"),
        ({"input": "x" * 20_001}, "input"),
        ({"input": "你好", "context": "not an object"}, "context"),
        ({"input": "你好", "context": [1, 2]}, "context"),
        ({"input": "你好", "context": {"notes": "长" * 10_001}}, "context"),
        ({"input": "你好", "thread_id": 7}, "thread_id"),
        ({"input": "你好", "context": {"mode": "nonsense"}}, "context.mode"),
        ({"input": "你好", "context": {"run_id": "abc"}}, "context.run_id"),
        ({"input": "你好", "context": {"run_id": 999999}}, "context.run_id"),
    ],
)
def test_bad_input_is_400_with_a_field_message(
    teacher: Teacher, payload: dict[str, object], field: str
) -> None:
    for stream in (False, True):
        response = teacher.client.post(run_url(teacher.agent.pk, stream), payload, format="json")
        assert response.status_code == 400, response.content
        assert field in response.json()
    assert Run.objects.count() == 0


def test_input_at_the_limit_is_accepted(teacher: Teacher) -> None:
    response = teacher.client.post(
        run_url(teacher.agent.pk), {"input": "题" * 20_000}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["status"] == "completed"


def test_malformed_json_body_is_400(teacher: Teacher) -> None:
    response = teacher.client.generic(
        "POST", run_url(teacher.agent.pk), "{not json", content_type="application/json"
    )
    assert response.status_code == 400


def test_another_tenants_run_cannot_be_continued(teacher: Teacher, outsider: Teacher) -> None:
    other = outsider.client.post(
        run_url(outsider.agent.pk), {"input": "你好"}, format="json"
    ).json()
    response = teacher.client.post(
        run_url(teacher.agent.pk),
        {"input": "继续", "context": {"run_id": other["id"]}},
        format="json",
    )
    assert response.status_code == 400
    assert "context.run_id" in response.json()


def _teacher_on(fake: FakeLLMServer, *, api_key_env: str = "") -> Teacher:
    provider = make_provider(name="fake-cloud", base_url=fake.base_url, api_key_env=api_key_env)
    return make_teacher(tenant_name="云端学校", username="cloud", provider=provider)


def test_openai_compat_provider_answers_and_costs(fake_llm: FakeLLMServer, db: None) -> None:
    fake_llm.reply = "这是模型的回答"
    cloud = _teacher_on(fake_llm)
    body = cloud.client.post(run_url(cloud.agent.pk), {"input": "你好"}, format="json").json()
    assert body["status"] == "completed"
    assert body["output"] == "这是模型的回答"
    usage = body["usage"]
    expected = (usage["input_tokens"] * 2 + usage["output_tokens"] * 8) / 1_000_000
    assert usage["cost"] == pytest.approx(expected, abs=1e-6)
    sent = fake_llm.requests[-1].body
    assert sent["messages"][0]["role"] == "system"
    assert sent["messages"][-1] == {"role": "user", "content": "你好"}


@pytest.mark.parametrize(
    ("mode", "code"),
    [
        ("http_500", "provider_http_error"),
        ("http_401", "provider_auth_error"),
        ("http_429", "provider_http_error"),
        ("malformed_json", "provider_bad_response"),
        ("malformed_stream", "provider_bad_response"),
        ("stream_no_done", "provider_bad_response"),
        ("timeout", "provider_timeout"),
    ],
)
def test_provider_failures_become_failed_runs_without_leaking(
    fake_llm: FakeLLMServer, db: None, monkeypatch: pytest.MonkeyPatch, mode: str, code: str
) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-secret-key-123")
    cloud = _teacher_on(fake_llm, api_key_env="FAKE_KEY")
    fake_llm.set_mode(mode, echo_auth_in_error=True, timeout_delay=3.0)
    # A stream cut short only exists for streamed calls.
    for stream in (True,) if mode == "stream_no_done" else (False, True):
        response = cloud.client.post(
            run_url(cloud.agent.pk, stream), {"input": "你好"}, format="json"
        )
        assert response.status_code == 200
        text = (
            b"".join(response.streaming_content).decode() if stream else response.content.decode()
        )
        assert "sk-secret-key-123" not in text
        assert fake_llm.base_url not in text and "127.0.0.1" not in text
        if not stream:
            body = response.json()
            assert body["status"] == "failed"
            assert body["error_code"] == code
            assert body["output"] == ""
        else:
            assert "event: error" in text and code in text
    assert set(Run.objects.values_list("status", flat=True)) == {"failed"}


def test_refused_connection_is_a_failed_run(db: None) -> None:
    provider = make_provider(name="down", base_url=f"http://127.0.0.1:{unused_port()}/v1")
    cloud = make_teacher(tenant_name="断网学校", username="down", provider=provider)
    body = cloud.client.post(run_url(cloud.agent.pk), {"input": "你好"}, format="json").json()
    assert body["status"] == "failed"
    assert body["error_code"] == "provider_unreachable"
    assert "稍后重试" in body["error_message"]


@pytest.mark.django_db(transaction=True)
def test_run_exists_as_running_before_the_provider_answers(
    fake_llm: FakeLLMServer, transactional_db: None
) -> None:
    """Committed and visible to another connection while the provider is called."""
    seen: list[str] = []

    def reply(body: dict[str, object]) -> str:
        # Runs in the fake server's thread while the request is in flight.
        seen.extend(Run.objects.values_list("status", flat=True))
        return "好的"

    fake_llm.reply = reply
    cloud = _teacher_on(fake_llm)
    cloud.client.post(run_url(cloud.agent.pk), {"input": "你好"}, format="json")
    assert seen == ["running"]


def parse_sse(raw: str) -> list[tuple[str, dict[str, object]]]:
    events = []
    for block in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_stream_events_in_order(teacher: Teacher) -> None:
    response = teacher.client.post(
        run_url(teacher.agent.pk, True),
        {"input": "出一份数据结构试卷"},
        format="json",
        HTTP_ACCEPT="text/event-stream",
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    events = parse_sse(b"".join(response.streaming_content).decode())
    names = [name for name, _ in events]
    assert names[0] == "started" and names[-1] == "done"
    assert set(names[1:-1]) == {"delta"}
    started, done = events[0][1], events[-1][1]
    assert started["run_id"] == done["run"]["id"]  # type: ignore[index]
    assert started["thread_id"] == done["run"]["thread_id"]  # type: ignore[index]
    text = "".join(str(data["text"]) for name, data in events if name == "delta")
    assert text == done["run"]["output"]  # type: ignore[index]


def test_stream_bad_input_with_event_stream_accept_is_400(teacher: Teacher) -> None:
    response = teacher.client.post(
        run_url(teacher.agent.pk, True),
        {"input": ""},
        format="json",
        HTTP_ACCEPT="text/event-stream",
    )
    assert response.status_code == 400
