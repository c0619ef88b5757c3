"""Provider locality for memory jobs (design v2 §2.4) and the cross-provider notice."""

from __future__ import annotations

import pytest

from agents.models import Run
from memory.models import MemoryOp
from memory.services.jobs import after_run_process
from tests.factories import make_provider, make_teacher
from tests.fakellm import FakeLLMServer

pytestmark = pytest.mark.django_db


def _runs(teacher, n: int) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    out: list[dict[str, object]] = []
    thread_id = None
    for i in range(n):
        payload: dict[str, object] = {"input": f"第{i}问：出一份数据结构练习"}
        if thread_id:
            payload["thread_id"] = thread_id
        body = teacher.client.post(
            f"/api/agents/{teacher.agent.pk}/run", payload, format="json"
        ).json()
        thread_id = body["thread_id"]
        out.append(body)
    return out


def test_local_agent_with_its_provider_down_never_calls_the_cloud(db: None) -> None:
    with FakeLLMServer(reply="本地回答") as local, FakeLLMServer(reply="云端回答") as cloud:
        local_provider = make_provider(name="ollama", base_url=local.base_url, locality="local")
        cloud_provider = make_provider(name="qwen-cloud", base_url=cloud.base_url, locality="cloud")
        teacher = make_teacher(tenant_name="本地优先学校", username="lo", provider=local_provider)
        # Another agent in the same school uses the cloud: it must not be borrowed.
        make_teacher(tenant_name="本地优先学校", username="cl", provider=cloud_provider)
        runs = _runs(teacher, 4)
        local.set_mode("http_500")  # the local model goes down
        report = after_run_process(run_id=int(runs[-1]["id"]))  # type: ignore[call-overload]
        assert report.state == "failed" and report.error == "provider_http_error"
        assert Run.objects.get(pk=runs[-1]["id"]).memory_state == "failed"
        assert cloud.requests == []  # asserted at the cloud server itself
        assert MemoryOp.objects.filter(success=False, provider=local_provider).exists()


def test_local_fallback_is_used_and_cloud_is_not(db: None) -> None:
    with (
        FakeLLMServer(reply="主模型") as primary,
        FakeLLMServer(reply="#备用 摘要") as fallback,
        FakeLLMServer(reply="云") as cloud,
    ):
        primary_provider = make_provider(
            name="primary", base_url=primary.base_url, locality="local"
        )
        make_provider(
            name="fallback", base_url=fallback.base_url, locality="local", is_memory_fallback=True
        )
        make_provider(name="cloud", base_url=cloud.base_url, locality="cloud")
        teacher = make_teacher(tenant_name="备用学校", username="fb", provider=primary_provider)
        runs = _runs(teacher, 4)
        primary.set_mode("http_500")
        report = after_run_process(run_id=int(runs[-1]["id"]))  # type: ignore[call-overload]
        assert report.state == "done"
        assert fallback.requests and cloud.requests == []
        ops = MemoryOp.objects.filter(kind="compress").order_by("pk")
        assert [(op.provider_name, op.success) for op in ops][-2:] == [
            ("primary", False),
            ("fallback", True),
        ]


def test_cloud_agent_may_fall_back_only_to_local(db: None) -> None:
    with FakeLLMServer() as own_cloud, FakeLLMServer() as other_cloud:
        own = make_provider(name="deepseek", base_url=own_cloud.base_url, locality="cloud")
        make_provider(name="qwen", base_url=other_cloud.base_url, locality="cloud")
        teacher = make_teacher(tenant_name="云端学校", username="cc", provider=own)
        runs = _runs(teacher, 4)
        own_cloud.set_mode("http_500")
        report = after_run_process(run_id=int(runs[-1]["id"]))  # type: ignore[call-overload]
        assert report.state == "failed"
        assert other_cloud.requests == []


def test_a_cloud_fallback_cannot_be_configured(db: None) -> None:
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        make_provider(
            name="bad", base_url="http://127.0.0.1:1/v1", locality="cloud", is_memory_fallback=True
        )


def test_notice_when_memory_goes_to_another_cloud_provider(db: None) -> None:
    with FakeLLMServer() as own_server, FakeLLMServer() as memory_server:
        own = make_provider(name="own", base_url=own_server.base_url, locality="local")
        other = make_provider(
            name="memory-cloud", base_url=memory_server.base_url, locality="cloud"
        )
        teacher = make_teacher(tenant_name="告知学校", username="nt", provider=own)
        agents = teacher.client.get("/api/agents").json()
        assert agents[0]["memory_notice"] is False
        teacher.agent.memory_provider = other
        teacher.agent.save()
        agents = teacher.client.get("/api/agents").json()
        assert agents[0]["memory_notice"] is True
        assert agents[0]["memory_provider"]["name"] == "memory-cloud"
        runs = _runs(teacher, 3)
        detail = teacher.client.get(f"/api/threads/{runs[0]['thread_id']}").json()
        assert detail["memory_notice"] is True
        after_run_process(run_id=int(runs[-1]["id"]))  # type: ignore[call-overload]
        # Memory work went to the configured memory provider, not the agent's own.
        assert memory_server.requests and all(
            r.body["messages"][0]["content"] != "" for r in memory_server.requests
        )
