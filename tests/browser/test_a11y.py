"""Every page passes an axe-core audit, in Chinese and in English (issue #18).

``PAGES`` is the list of audited pages and states. Adding a page is one line:
``AuditPage("kb", "/kb/")`` audits it as a teacher with a conversation, candidates and a
confirmed fact, at desktop size, in both languages; ``state`` adds data, ``act`` drives
the page into the state to audit (a drawer, a dialog, an error), ``user`` picks who is
logged in. A violation of impact "serious" or "critical" fails; every finding is written
to ``artifacts/axe/<page>-<language>.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from playwright.sync_api import expect

from agents.models import Membership
from memory.models import CoreCandidate
from tests.browser.axe import axe_audit
from tests.browser.conftest import DESKTOP, PHONE, new_page
from tests.factories import (
    Teacher,
    fact_via_confirm,
    make_provider,
    make_teacher,
    run_via_api,
)
from tests.fakellm import unused_port

pytestmark = pytest.mark.browser

LANGUAGES = {"zh-hans": "zh-CN", "en": "en-US"}  # page language -> the browser's locale


# -- data (through the services, as in production) --------------------------------------
def memories(teacher: Teacher) -> None:
    """A conversation of two turns, pending candidates from it and one confirmed fact."""
    first = run_via_api(teacher, "出一份数据结构试卷", memory_job=True)
    facts = "我教八年级数学。以后出题都用人教版教材。"
    second = run_via_api(teacher, facts, str(first["thread_id"]), memory_job=True)
    candidates = CoreCandidate.objects.filter(source_run_id=second["id"]).order_by("pk")
    fact_via_confirm(teacher, candidates[0])
    assert CoreCandidate.objects.exists()


def dead_model(teacher: Teacher) -> None:
    teacher.agent.provider = make_provider(
        name="断网模型", base_url=f"http://127.0.0.1:{unused_port()}/v1"
    )
    teacher.agent.save()


# -- driving a page into a state ------------------------------------------------------------
def chat_ready(page: Any) -> None:
    expect(page.locator("#agent-select option")).not_to_have_count(0)
    expect(page.locator("#messages")).to_have_attribute("aria-busy", "false")


def chat_answered(page: Any) -> None:
    chat_ready(page)
    expect(page.locator('.msg.assistant[data-status="completed"]')).to_have_count(2)


def chat_drawer_open(page: Any) -> None:
    chat_answered(page)
    page.locator("#drawer-toggle").click()
    expect(page.locator("#chat-sidebar")).to_be_visible()
    expect(page.locator("#new-thread")).to_be_focused()


def chat_dialog_open(page: Any) -> None:
    chat_answered(page)
    page.locator(".msg.assistant .action-remembered").last.click()
    expect(page.locator("#context-dialog .manifest")).to_be_visible()


def chat_failed_send(page: Any) -> None:
    chat_ready(page)
    page.locator("#composer-input").fill("出一份数据结构试卷")
    page.locator("#composer-input").press("Enter")
    expect(page.locator('.msg.assistant[data-status="failed"] .msg-error')).to_be_visible()


def chat_page_error(page: Any) -> None:
    chat_ready(page)
    expect(page.locator("#page-error")).to_be_visible()


def memory_ready(page: Any) -> None:
    expect(page.locator("#memory-columns, #no-agents")).to_have_count(1)


def admin_ready(page: Any) -> None:
    expect(page.locator("#content")).to_be_visible()


User = Literal["anonymous", "teacher", "operator"]


@dataclass(frozen=True)
class AuditPage:
    name: str
    path: str
    user: User = "teacher"
    state: Callable[[Teacher], None] = memories
    act: Callable[[Any], None] | None = None
    viewport: dict[str, int] | None = None


PAGES = [
    AuditPage("login", "/accounts/login/", user="anonymous", act=lambda p: None),
    AuditPage("chat-empty", "/chat/", state=lambda t: None, act=chat_ready),
    AuditPage("chat-conversation", "/chat/", act=chat_answered),
    AuditPage("chat-dialog", "/chat/", act=chat_dialog_open),
    AuditPage("chat-phone-drawer", "/chat/", act=chat_drawer_open, viewport=PHONE),
    AuditPage("chat-failed-run", "/chat/", state=dead_model, act=chat_failed_send),
    AuditPage("chat-page-error", "/chat/?thread=th_missing", act=chat_page_error),
    AuditPage("memory", "/memory/", act=memory_ready),
    AuditPage("memory-empty", "/memory/", state=lambda t: None, act=memory_ready),
    AuditPage("memory-phone", "/memory/", act=memory_ready, viewport=PHONE),
    AuditPage("admin-index", "/admin/", user="operator", act=admin_ready),
    AuditPage("admin-threads", "/admin/memory/thread/", user="operator", act=admin_ready),
    AuditPage("admin-runs", "/admin/agents/run/", user="operator", act=admin_ready),
    AuditPage("admin-memory-ops", "/admin/memory/memoryop/", user="operator", act=admin_ready),
    AuditPage("admin-candidates", "/admin/memory/corecandidate/", user="operator", act=admin_ready),
    AuditPage("admin-facts", "/admin/memory/corefact/", user="operator", act=admin_ready),
    AuditPage("admin-recall", "/admin/memory/recallentry/", user="operator", act=admin_ready),
    AuditPage("admin-agents", "/admin/agents/agent/", user="operator", act=admin_ready),
    AuditPage("admin-providers", "/admin/agents/provider/", user="operator", act=admin_ready),
    AuditPage("admin-tenants", "/admin/agents/tenant/", user="operator", act=admin_ready),
    AuditPage(
        "admin-agent-change",
        "/admin/agents/agent/{agent}/change/",
        user="operator",
        act=admin_ready,
    ),
    AuditPage(
        "admin-thread-change",
        "/admin/memory/thread/{thread}/change/",
        user="operator",
        act=admin_ready,
    ),
]


def session_cookie(user: Any, live_server: Any) -> dict[str, str]:
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"]
    return {"name": "sessionid", "value": cookie.value, "url": live_server.url}


def operator_of(teacher: Teacher) -> Any:
    user = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-ops")
    Membership.objects.create(tenant=teacher.tenant, user=user, role=Membership.Role.ADMIN)
    return user


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("spec", PAGES, ids=lambda spec: spec.name)
def test_page_has_no_serious_accessibility_violation(
    browser: Any, live_server: Any, artifacts: Path, spec: AuditPage, language: str
) -> None:
    teacher = make_teacher(tenant_name="第一中学", username="zhang")
    spec.state(teacher)
    page = new_page(browser, spec.viewport or DESKTOP, locale=LANGUAGES[language])
    try:
        if spec.user != "anonymous":
            user = teacher.user if spec.user == "teacher" else operator_of(teacher)
            page.context.add_cookies([session_cookie(user, live_server)])
        thread = teacher.agent.threads.order_by("created_at").first()
        path = spec.path.format(agent=teacher.agent.pk, thread=thread.pk if thread else "")
        page.goto(live_server.url + path)
        if spec.act is not None:
            spec.act(page)
        assert page.evaluate("document.documentElement.lang") == language
        audit = axe_audit(page, name=f"{spec.name}-{language}", report_dir=artifacts / "axe")
        assert page.errors == [], f"JavaScript errors on the page: {page.errors}"
    finally:
        page.context.close()
    found = "\n".join(str(v) for v in audit.blocking)
    assert not audit.blocking, f"axe-core {audit.axe_version} on {spec.name} ({language}):\n{found}"
