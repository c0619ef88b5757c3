"""Small real fixtures, built through the project's own services where services exist.

Runs go through the API (the run engine), candidates through a run's memory job (the
way production proposes them), facts through ``candidate_confirm`` (a person's action).
Tenants, memberships, agents and providers have no service of their own (operators
create them in the admin), so they are plain ORM rows, as the admin makes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from agents.models import Agent, Membership, Provider, Tenant
from agents.services_demo import offline_provider_ensure
from memory.models import CoreCandidate, CoreFact
from memory.services.facts import candidate_confirm
from memory.services.jobs import after_run_process


@dataclass
class Teacher:
    user: Any
    tenant: Tenant
    agent: Agent
    client: APIClient
    token: str


def make_teacher(
    *,
    tenant_name: str,
    username: str,
    agent: Agent | None = None,
    role: str = Membership.Role.TEACHER,
    provider: Provider | None = None,
) -> Teacher:
    tenant, _ = Tenant.objects.get_or_create(name=tenant_name)
    user = get_user_model().objects.create_user(username=username, password="pw-" + username)
    Membership.objects.create(tenant=tenant, user=user, role=role)
    if agent is None:
        agent = Agent.objects.create(
            tenant=tenant,
            name=f"助手-{username}",
            system_prompt="你是教学助手。",
            provider=provider or offline_provider_ensure(),
        )
    token = Token.objects.create(user=user).key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return Teacher(user=user, tenant=tenant, agent=agent, client=client, token=token)


def make_provider(
    *,
    name: str,
    base_url: str,
    locality: str = Provider.Locality.CLOUD,
    api_key_env: str = "",
    timeout: float = 2.0,
    price_in: str = "2",
    price_out: str = "8",
    is_memory_fallback: bool = False,
) -> Provider:
    return Provider.objects.create(
        name=name,
        kind=Provider.Kind.OPENAI_COMPAT,
        base_url=base_url,
        model="fake-model",
        api_key_env=api_key_env,
        locality=locality,
        price_input_per_mtok=Decimal(price_in),
        price_output_per_mtok=Decimal(price_out),
        timeout_seconds=timeout,
        is_memory_fallback=is_memory_fallback,
    )


def run_via_api(
    teacher: Teacher, text: str, thread_id: str | None = None, *, memory_job: bool = False
) -> dict[str, Any]:
    """POST a run as the teacher; optionally do its memory job right away (in-process)."""
    payload: dict[str, object] = {"input": text}
    if thread_id is not None:
        payload["thread_id"] = thread_id
    response = teacher.client.post(f"/api/agents/{teacher.agent.pk}/run", payload, format="json")
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    if memory_job:
        after_run_process(run_id=int(body["id"]))
    return body


def candidates_via_job(teacher: Teacher, text: str) -> list[CoreCandidate]:
    """The candidates proposed from ``text``: a run, then its memory job (offline model)."""
    body = run_via_api(teacher, text, memory_job=True)
    return list(CoreCandidate.objects.filter(source_run_id=body["id"]).order_by("pk"))


def fact_via_confirm(teacher: Teacher, candidate: CoreCandidate) -> CoreFact:
    """The teacher confirms one of their candidates."""
    return candidate_confirm(candidate=candidate, actor_id=teacher.user.pk).fact


def conversation_with_memories(teacher: Teacher) -> None:
    """Two turns in one thread, the candidates the second proposed and one of them confirmed
    (so a page has a conversation, pending candidates and a fact)."""
    first = run_via_api(teacher, "出一份数据结构试卷", memory_job=True)
    facts = "我教八年级数学。以后出题都用人教版教材。"
    second = run_via_api(teacher, facts, str(first["thread_id"]), memory_job=True)
    candidates = list(CoreCandidate.objects.filter(source_run_id=second["id"]).order_by("pk"))
    assert len(candidates) >= 2, candidates
    fact_via_confirm(teacher, candidates[0])


def school_admin_browser(teacher: Teacher, username: str = "head") -> tuple[Teacher, Client]:
    """An administrator of ``teacher``'s school with admin-site access, and a browser
    client logged in as them."""
    head = make_teacher(
        tenant_name=teacher.tenant.name, username=username, role=Membership.Role.ADMIN
    )
    head.user.is_staff = True
    head.user.save()
    browser = Client()
    browser.force_login(head.user)
    return head, browser
