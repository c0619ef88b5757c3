"""Project-level checks: the demo command, the schema and docs, the admin pages."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from agents.models import Agent, Membership, Tenant

pytestmark = pytest.mark.django_db


def bootstrap(*args: str) -> dict[str, object]:
    out = StringIO()
    call_command("bootstrap_demo", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_bootstrap_demo_is_idempotent_and_works() -> None:
    first = bootstrap()
    second = bootstrap()
    assert first == second
    assert set(first) == {"username", "password", "token", "tenant_id", "agent_id"}
    assert Tenant.objects.count() == 1 and Agent.objects.count() == 1
    client = APIClient()
    token = client.post(
        "/api/auth/token",
        {"username": first["username"], "password": first["password"]},
        format="json",
    ).json()["token"]
    assert token == first["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    body = client.post(
        f"/api/agents/{first['agent_id']}/run", {"input": "你好"}, format="json"
    ).json()
    assert body["status"] == "completed"
    agent = Agent.objects.get(pk=first["agent_id"])
    assert agent.provider.is_offline and "演示" in agent.provider.label


def test_bootstrap_demo_other_tenant_is_isolated() -> None:
    demo = bootstrap()
    other = bootstrap("--tenant", "另一所学校", "--username", "other")
    assert other["tenant_id"] != demo["tenant_id"] and other["agent_id"] != demo["agent_id"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {other['token']}")
    assert [a["id"] for a in client.get("/api/agents").json()] == [other["agent_id"]]
    response = client.post(f"/api/agents/{demo['agent_id']}/run", {"input": "你好"}, format="json")
    assert response.status_code == 404


def test_schema_validates_and_docs_are_served_offline() -> None:
    out = StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    assert "/api/agents/{agent_id}/run/stream" in out.getvalue()
    client = APIClient()
    assert client.get("/api/schema").status_code == 200
    docs = client.get("/api/docs")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "swagger-ui" in html
    assert "cdn." not in html and "unpkg" not in html and "jsdelivr" not in html


def test_admin_pages_render_for_an_operator() -> None:
    operator = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw")
    demo = bootstrap()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {demo['token']}")
    thread_id = None
    for text in ["我教八年级数学，以后出题都用人教版教材", "出一份试卷", "再来一份"]:
        payload: dict[str, object] = {"input": text}
        if thread_id:
            payload["thread_id"] = thread_id
        thread_id = client.post(
            f"/api/agents/{demo['agent_id']}/run", payload, format="json"
        ).json()["thread_id"]
    from agents.models import Run
    from memory.services.jobs import after_run_process

    for run in Run.objects.all():
        after_run_process(run_id=run.pk)
    browser = Client()
    browser.force_login(operator)
    pages = [
        "/admin/",
        "/admin/agents/tenant/",
        "/admin/agents/agent/",
        "/admin/agents/provider/",
        "/admin/agents/run/",
        "/admin/agents/run/?memory_state__exact=done",
        "/admin/memory/thread/",
        f"/admin/memory/thread/{quote(thread_id)}/change/",  # "_" is escaped in admin URLs
        "/admin/memory/memoryop/",
        "/admin/memory/corecandidate/",
        "/admin/memory/corefact/",
        "/admin/memory/redlineaudit/",
        "/admin/memory/recallentry/",
        "/admin/django_q/schedule/",
        "/admin/django_q/failure/",
        "/admin/django_q/ormq/",
    ]
    for url in pages:
        assert browser.get(url).status_code == 200, url
    assert Membership.objects.count() == 1
