"""Every page passes an axe-core audit, in Chinese and in English (issue #18).

``PAGES`` is the list of audited pages and states. Adding a page is one line:
``AuditPage("kb", "/kb/")`` audits it as a teacher with a conversation, candidates and a
confirmed fact, at desktop size, in both languages; ``state`` adds data, ``act`` drives
the page into the state to audit (a drawer, a dialog, an error), ``user`` picks who is
logged in. A violation of impact "serious" or "critical" fails; every finding is written
to ``artifacts/axe/<page>-<language>.json``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.test import Client
from playwright.sync_api import expect

from agents.models import Membership, Preference
from memory.models import CoreFact
from memory.services.kb_documents import kb_document_create, kb_document_process
from tests.browser.axe import axe_audit
from tests.browser.conftest import DESKTOP, PHONE, new_page
from tests.factories import Teacher, conversation_with_memories, make_provider, make_teacher
from tests.fakellm import unused_port

pytestmark = pytest.mark.browser

LANGUAGES = {"zh-hans": "zh-CN", "en": "en-US"}  # page language -> the browser's locale


# -- data (through the services, as in production) --------------------------------------
def memories(teacher: Teacher) -> None:
    """A conversation of two turns, pending candidates from it and one confirmed fact."""
    conversation_with_memories(teacher)


def expired_fact(teacher: Teacher) -> None:
    """The memories, one confirmed fact past its term (the panel's 已过期)."""
    memories(teacher)
    CoreFact.objects.filter(owner=teacher.user).update(valid_until="2020-07-15")


def kb_lesson(teacher: Teacher) -> None:
    """One ready knowledge-base document, shared with the agent."""
    document = kb_document_create(
        agent=teacher.agent,
        owner_id=teacher.user.pk,
        title="光合作用教案",
        text="# 光合作用\n\n## 场所\n\n光反应在类囊体薄膜上进行，暗反应在叶绿体基质中进行。\n",
    )
    kb_document_process(document_id=document.pk)


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


def memory_expired(page: Any) -> None:
    memory_ready(page)
    expect(page.locator("#expired-section")).to_be_visible()


def kb_ready(page: Any) -> None:
    expect(page.locator("#documents-section")).to_be_visible()


def kb_searched(page: Any) -> None:
    kb_ready(page)
    expect(page.locator("#hit-list li")).not_to_have_count(0)
    expect(page.locator("#injected-text")).to_be_visible()


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
    AuditPage("memory-expired", "/memory/", state=expired_fact, act=memory_expired),
    AuditPage("kb-empty", "/kb/", state=lambda t: None, act=kb_ready),
    AuditPage(
        "kb-search", "/kb/?agent={agent}&q=光反应在哪里进行", state=kb_lesson, act=kb_searched
    ),
    AuditPage("admin-login", "/admin/login/", user="anonymous", act=admin_ready),
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
        # quote: admin URLs escape "_" (th_22… would read as th"…).
        path = spec.path.format(agent=teacher.agent.pk, thread=quote(thread.pk) if thread else "")
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


# -- keyboard and screen readers --------------------------------------------------------------
@contextmanager
def signed_in_page(
    browser: Any, live_server: Any, teacher: Teacher, viewport: dict[str, int], locale: str
) -> Iterator[Any]:
    """The teacher's chat page in a fresh browser context; no JavaScript error allowed."""
    page = new_page(browser, viewport, locale=locale)
    try:
        page.context.add_cookies([session_cookie(teacher.user, live_server)])
        page.goto(f"{live_server.url}/chat/")
        yield page
        assert page.errors == [], f"JavaScript errors on the page: {page.errors}"
    finally:
        page.context.close()


def focused_in(page: Any, selector: str) -> bool:
    return bool(page.evaluate(f"!!document.activeElement.closest({selector!r})"))


def test_the_phone_drawer_is_modal_and_esc_gives_focus_back(browser: Any, live_server: Any) -> None:
    teacher = make_teacher(tenant_name="第一中学", username="zhang")
    memories(teacher)
    with signed_in_page(browser, live_server, teacher, PHONE, "zh-CN") as page:
        chat_answered(page)
        toggle = page.locator("#drawer-toggle")
        toggle.focus()
        page.keyboard.press("Enter")
        expect(page.locator("#chat-sidebar")).to_be_visible()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        assert focused_in(page, "#chat-sidebar")
        # Behind the drawer nothing takes focus: Tab stays in the drawer.
        assert page.evaluate("document.querySelector('.chat-main').inert") is True
        assert page.evaluate("document.querySelector('.site-header').inert") is True
        for _ in range(8):
            page.keyboard.press("Tab")
            assert not focused_in(page, ".chat-main, .site-header")
        page.keyboard.press("Escape")
        expect(page.locator("#chat-sidebar")).to_be_hidden()
        expect(toggle).to_be_focused()
        expect(toggle).to_have_attribute("aria-expanded", "false")
        assert page.evaluate("document.querySelector('.chat-main').inert") is False

        # The backdrop and the close button close it too, focus back on the toggle.
        toggle.click()
        page.mouse.click(360, 400)  # the backdrop, right of the drawer
        expect(page.locator("#chat-sidebar")).to_be_hidden()
        expect(toggle).to_be_focused()
        toggle.click()
        page.locator("#drawer-close").click()
        expect(toggle).to_be_focused()

        # Choosing a conversation closes it; the teacher goes on typing.
        toggle.click()
        page.locator("#thread-list .thread-open").first.click()
        expect(page.locator("#chat-sidebar")).to_be_hidden()
        expect(page.locator("#composer-input")).to_be_focused()


def test_the_context_dialog_closes_on_esc_and_focus_returns(browser: Any, live_server: Any) -> None:
    teacher = make_teacher(tenant_name="第一中学", username="zhang")
    memories(teacher)
    with signed_in_page(browser, live_server, teacher, DESKTOP, "zh-CN") as page:
        chat_answered(page)
        opener = page.locator(".msg.assistant .action-remembered").last
        opener.focus()
        page.keyboard.press("Enter")
        dialog = page.locator("#context-dialog")
        expect(dialog.locator(".manifest")).to_be_visible()
        assert focused_in(page, "#context-dialog")
        # The injected text scrolls: it takes focus, so a keyboard can scroll it.
        expect(dialog.locator(".injected-text")).to_have_attribute("tabindex", "0")
        page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()
        expect(opener).to_be_focused()

        opener.click()
        dialog.get_by_role("button", name="关闭").click()
        expect(dialog).to_be_hidden()
        expect(opener).to_be_focused()


WATCH_LIVE = """() => {
    window.__live = { busy: [], status: [] };
    new MutationObserver(records => {
        for (const r of records) {
            for (const added of r.addedNodes) {  // its aria-busy as it arrives
                if (added.classList?.contains('assistant'))
                    window.__live.busy.push(added.getAttribute('aria-busy'));
            }
            const node = r.target;
            if (r.type === 'attributes' && node.classList.contains('assistant'))
                window.__live.busy.push(node.getAttribute('aria-busy'));
            if (node.id === 'chat-status' || node.parentNode?.id === 'chat-status')
                window.__live.status.push(document.getElementById('chat-status').textContent);
        }
    }).observe(document.getElementById('chat-app'), {
        subtree: true, childList: true, characterData: true, attributes: true,
        attributeFilter: ['aria-busy'],
    });
}"""


@pytest.mark.parametrize(("locale", "answering", "answered"), [
    ("zh-CN", "助手正在回答…", "助手已回答。"),
    ("en-US", "The assistant is answering…", "The assistant has answered."),
])  # fmt: skip
def test_a_streamed_answer_is_announced_once_it_is_complete(
    browser: Any, live_server: Any, locale: str, answering: str, answered: str
) -> None:
    teacher = make_teacher(tenant_name="第一中学", username="zhang")
    with signed_in_page(browser, live_server, teacher, DESKTOP, locale) as page:
        chat_ready(page)
        messages = page.locator("#messages")
        expect(messages).to_have_attribute("role", "log")
        expect(messages).to_have_attribute("aria-live", "polite")
        page.evaluate(WATCH_LIVE)
        page.locator("#composer-input").fill("出一份数据结构试卷")
        page.locator("#composer-input").press("Enter")
        reply = page.locator(".msg.assistant").first
        expect(reply).to_have_attribute("data-status", "completed")
        expect(reply).to_have_attribute("aria-busy", "false")
        expect(page.locator("#chat-status")).to_have_text(answered)
        live = page.evaluate("window.__live")
        assert live["busy"][0] == "true" and live["busy"][-1] == "false", live
        assert answering in live["status"], live
        expect(page.locator("#chat-status")).to_have_attribute("role", "status")


def test_a_failed_answer_is_an_alert(browser: Any, live_server: Any) -> None:
    teacher = make_teacher(tenant_name="第一中学", username="zhang")
    dead_model(teacher)
    with signed_in_page(browser, live_server, teacher, DESKTOP, "zh-CN") as page:
        chat_failed_send(page)
        error = page.locator(".msg.assistant .msg-error")
        expect(error).to_have_attribute("role", "alert")
        expect(error).to_have_text("模型服务暂时无法连接，请稍后重试。")
        expect(page.locator(".msg.assistant")).to_have_attribute("aria-busy", "false")


# -- the language switch and the screenshots ------------------------------------------------
def test_the_header_switch_changes_the_language_for_the_account_with_screenshots(
    browser: Any, live_server: Any, artifacts: Path
) -> None:
    teacher = make_teacher(tenant_name="第一中学", username="zhang")
    memories(teacher)
    with signed_in_page(browser, live_server, teacher, DESKTOP, "zh-CN") as page:
        chat_answered(page)
        expect(page.get_by_role("button", name="新建会话")).to_be_visible()
        expect(page.locator("#thread-title")).to_have_js_property("tagName", "H1")
        page.screenshot(path=str(artifacts / "chat-zh-hans.png"))

        page.get_by_role("button", name="English").click()
        page.wait_for_url(f"{live_server.url}/chat/")
        chat_answered(page)
        assert page.evaluate("document.documentElement.lang") == "en"
        expect(page.get_by_role("button", name="New conversation")).to_be_visible()
        expect(page.locator("#composer-input")).to_have_attribute(
            "placeholder", re.compile(r"^Type your request")
        )
        expect(page.get_by_role("button", name="What it remembered").first).to_be_visible()
        expect(page.locator(".language-current")).to_have_text("English")
        page.screenshot(path=str(artifacts / "chat-en.png"))
        assert Preference.objects.get(user=teacher.user).language == "en"

        # The account keeps it: a fresh browser that prefers Chinese gets English.
        with signed_in_page(browser, live_server, teacher, PHONE, "zh-CN") as other:
            chat_answered(other)
            assert other.evaluate("document.documentElement.lang") == "en"
            assert other.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
            other.screenshot(path=str(artifacts / "chat-phone-en.png"))
            other.locator("#drawer-toggle").click()
            other.screenshot(path=str(artifacts / "chat-phone-drawer-en.png"))

        page.get_by_role("button", name="简体中文").click()
        page.wait_for_url(f"{live_server.url}/chat/")
        chat_answered(page)
        assert page.evaluate("document.documentElement.lang") == "zh-hans"
