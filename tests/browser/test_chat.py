"""The chat page in a real headless Chromium (issue #7 "Done when").

Each test logs in through the real login form and drives the page the way a teacher
does; assertions about what the server received are made on the database.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.models import Run
from agents.services_demo import offline_provider_ensure
from memory.models import Thread
from tests.browser.conftest import login
from tests.factories import Teacher, make_provider, make_teacher
from tests.fakellm import unused_port

pytestmark = pytest.mark.browser

FIRST = "出一份数据结构试卷"
SECOND = "简答题换两道"


def teacher_named(username: str, **kwargs: Any) -> Teacher:
    return make_teacher(tenant_name="第一中学", username=username, **kwargs)


def log_in(page: Any, live_server: Any, teacher: Teacher) -> None:
    login(page, live_server.url, teacher.user.username, "pw-" + teacher.user.username)


def send(page: Any, text: str, *, status: str = "completed") -> Any:
    """Type and send a message; return the assistant bubble once it has settled."""
    before = page.locator(".msg.assistant").count()
    box = page.locator("#composer-input")
    box.fill(text)
    box.press("Enter")
    reply = page.locator(".msg.assistant").nth(before)
    expect(reply).to_have_attribute("data-status", status)
    return reply


def thread_names(page: Any) -> Any:
    return page.locator("#thread-list .thread-name")


def test_conversation_remembers_and_is_restored_after_reload(
    page: Any, live_server: Any, artifacts: Path
) -> None:
    teacher = teacher_named("zhang")
    log_in(page, live_server, teacher)

    # The offline demo model is labelled; a first visit starts a new conversation.
    expect(page.locator("#offline-badge")).to_be_visible()
    expect(page.locator("#offline-badge")).to_contain_text("离线演示模型")
    expect(page.locator(".messages-hint")).to_be_visible()
    expect(page.locator("#memory-notice")).to_be_hidden()

    first = send(page, FIRST)
    expect(first.locator(".msg-body")).to_contain_text("《数据结构试卷》")
    expect(thread_names(page)).to_have_text([FIRST])
    expect(page.locator("#composer-input")).to_have_value("")

    second = send(page, SECOND)
    expect(second.locator(".msg-body")).to_contain_text(f"本会话中你上一轮说：「{FIRST}」")
    expect(second.locator(".msg-body")).to_contain_text("数据结构试卷")

    # Both runs went to one thread; neither continued an artifact.
    runs = list(Run.objects.order_by("pk"))
    assert [r.input for r in runs] == [FIRST, SECOND]
    assert runs[0].thread_id == runs[1].thread_id is not None
    assert all("run_id" not in r.context for r in runs)

    # 「它记得什么」 shows the injected text and the manifest summary.
    second.get_by_role("button", name="它记得什么").click()
    dialog = page.locator("#context-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".injected-text")).to_contain_text(FIRST)
    expect(dialog.locator(".manifest")).to_contain_text(f"轮次 #{runs[0].pk}")
    page.screenshot(path=str(artifacts / "chat-remembered.png"))
    dialog.get_by_role("button", name="关闭").click()
    expect(dialog).to_be_hidden()

    page.screenshot(path=str(artifacts / "chat-desktop.png"))

    # A reload continues the most recent active thread with its messages.
    page.reload()
    expect(page.locator("#messages")).to_have_attribute("aria-busy", "false")
    expect(page.locator(".msg.user .msg-body")).to_have_text([FIRST, SECOND])
    expect(page.locator(".msg.assistant").nth(1)).to_contain_text(f"「{FIRST}」")
    expect(page.locator("#thread-list .thread-item.current .thread-name")).to_have_text(FIRST)

    # The next message still goes into the same thread.
    send(page, "再加一道选择题")
    assert Run.objects.filter(thread_id=runs[0].thread_id).count() == 3


def test_new_thread_open_rename_and_archive(page: Any, live_server: Any) -> None:
    teacher = teacher_named("li")
    log_in(page, live_server, teacher)
    send(page, FIRST)
    old_thread = Thread.objects.get()

    page.get_by_role("button", name="新建会话").click()
    expect(page.locator(".msg")).to_have_count(0)
    expect(page.locator(".messages-hint")).to_be_visible()
    send(page, "帮我准备一份函数教案")
    new_thread = Thread.objects.exclude(pk=old_thread.pk).get()
    assert new_thread.runs.get().context == {}

    # Newest first: the new conversation on top, the old one below it.
    expect(thread_names(page)).to_have_text(["帮我准备一份函数教案", FIRST])

    # Open the old one: its messages come back.
    thread_names(page).nth(1).click()
    expect(page.locator(".msg.user .msg-body")).to_have_text([FIRST])
    expect(page.locator(".msg.assistant .msg-body")).to_contain_text(["《数据结构试卷》"])

    # Rename it inline.
    old_item = page.locator(f'#thread-list li[data-thread-id="{old_thread.pk}"]')
    old_item.get_by_role("button", name="重命名").click()
    title_box = old_item.get_by_label("新的会话标题")
    title_box.fill("数据结构期中卷")
    title_box.press("Enter")
    expect(thread_names(page)).to_have_text(["帮我准备一份函数教案", "数据结构期中卷"])
    expect(page.locator("#thread-title")).to_have_text("数据结构期中卷")
    old_thread.refresh_from_db()
    assert old_thread.title == "数据结构期中卷"

    # Archive it: it leaves the list (and stays gone after a reload).
    old_item.get_by_role("button", name="归档").click()
    expect(thread_names(page)).to_have_text(["帮我准备一份函数教案"])
    expect(page.locator(".messages-hint")).to_be_visible()
    old_thread.refresh_from_db()
    assert old_thread.status == Thread.Status.ARCHIVED
    page.reload()
    expect(page.locator("#messages")).to_have_attribute("aria-busy", "false")
    expect(thread_names(page)).to_have_text(["帮我准备一份函数教案"])
    expect(page.locator(".msg.user .msg-body")).to_have_text(["帮我准备一份函数教案"])


def test_failed_run_is_explained_keeps_the_text_and_retries(
    page: Any, live_server: Any, artifacts: Path
) -> None:
    dead = make_provider(name="断网模型", base_url=f"http://127.0.0.1:{unused_port()}/v1")
    teacher = teacher_named("wang", provider=dead)
    teacher.agent.memory_provider = make_provider(
        name="云端记忆模型", base_url=f"http://127.0.0.1:{unused_port()}/v1"
    )
    teacher.agent.save()
    log_in(page, live_server, teacher)

    # Not the offline model: no demo badge. Memory goes to another cloud: told once.
    expect(page.locator("#offline-badge")).to_be_hidden()
    notice = page.locator("#memory-notice")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("云端记忆模型")

    reply = send(page, FIRST, status="failed")
    expect(reply.locator(".msg-error")).to_have_text("模型服务暂时无法连接，请稍后重试。")
    expect(reply.get_by_role("button", name="重试")).to_be_visible()
    expect(page.locator("#composer-input")).to_have_value(FIRST)
    page.screenshot(path=str(artifacts / "chat-error.png"))

    notice.get_by_role("button", name="知道了").click()
    expect(notice).to_be_hidden()

    # After a reload: the text is still there, the notice is not, the failure is shown.
    page.reload()
    expect(page.locator("#messages")).to_have_attribute("aria-busy", "false")
    expect(page.locator("#composer-input")).to_have_value(FIRST)
    expect(notice).to_be_hidden()
    restored = page.locator(".msg.assistant").first
    expect(restored).to_have_attribute("data-status", "failed")
    expect(restored.locator(".msg-error")).to_contain_text("模型服务暂时无法连接")

    # The model comes back; 重试 resends the same text into the same conversation.
    teacher.agent.provider = offline_provider_ensure()
    teacher.agent.save()
    restored.get_by_role("button", name="重试").click()
    retried = page.locator(".msg.assistant").nth(1)
    expect(retried).to_have_attribute("data-status", "completed")
    expect(retried.locator(".msg-body")).to_contain_text("《数据结构试卷》")
    expect(page.locator("#composer-input")).to_have_value("")
    runs = list(Run.objects.order_by("pk"))
    assert [(r.input, r.status) for r in runs] == [(FIRST, "failed"), (FIRST, "completed")]
    assert runs[0].thread_id == runs[1].thread_id

    # The draft was cleared once the server accepted the message.
    page.reload()
    expect(page.locator("#messages")).to_have_attribute("aria-busy", "false")
    expect(page.locator("#composer-input")).to_have_value("")


def test_continue_on_artifact_sends_context_run_id_only_when_asked(
    page: Any, live_server: Any
) -> None:
    teacher = teacher_named("zhao")
    log_in(page, live_server, teacher)
    first = send(page, FIRST)

    first.get_by_role("button", name="在上次产物上继续").click()
    chip = page.locator("#continue-chip")
    expect(chip).to_be_visible()
    expect(chip).to_contain_text("将在第 1 轮的产物上继续")
    send(page, "选择题改成五道")
    expect(chip).to_be_hidden()
    expect(page.locator(".msg.user").nth(1)).to_contain_text("在第 1 轮的产物上继续")

    # A normal send afterwards does not continue.
    send(page, "谢谢")

    # Chosen, then dismissed: not sent either.
    first.get_by_role("button", name="在上次产物上继续").click()
    expect(chip).to_be_visible()
    chip.get_by_role("button", name="不在该产物上继续").click()
    expect(chip).to_be_hidden()
    send(page, "再出一份")

    runs = list(Run.objects.order_by("pk"))
    assert runs[1].context == {"run_id": runs[0].pk}
    assert "run_id" not in runs[0].context
    assert "run_id" not in runs[2].context
    assert "run_id" not in runs[3].context
    assert len({r.thread_id for r in runs}) == 1
    assert runs[1].context_record.manifest["continue_prompt"]["run_id"] == runs[0].pk


def test_phone_width_drawer_lists_threads(
    phone_page: Any, live_server: Any, artifacts: Path
) -> None:
    page = phone_page
    teacher = teacher_named("chen")
    log_in(page, live_server, teacher)
    send(page, "帮我准备一份函数教案")

    toggle = page.locator("#drawer-toggle")
    sidebar = page.locator("#chat-sidebar")
    expect(toggle).to_be_visible()
    expect(sidebar).to_be_hidden()

    toggle.click()
    expect(sidebar).to_be_visible()
    sidebar.get_by_role("button", name="新建会话").click()
    expect(sidebar).to_be_hidden()
    send(page, FIRST)
    send(page, SECOND)

    # Nothing is wider than the phone.
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.screenshot(path=str(artifacts / "chat-phone.png"))

    toggle.click()
    expect(sidebar).to_be_visible()
    expect(thread_names(page)).to_have_text([FIRST, "帮我准备一份函数教案"])
    page.screenshot(path=str(artifacts / "chat-phone-drawer.png"))

    # Picking a thread closes the drawer and shows it.
    thread_names(page).nth(1).click()
    expect(sidebar).to_be_hidden()
    expect(page.locator(".msg.user .msg-body")).to_have_text(["帮我准备一份函数教案"])


def test_http_and_network_failures_are_friendly(page: Any, live_server: Any) -> None:
    teacher = teacher_named("sun")
    # A wrong password is explained on the login form.
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("用户名").fill("sun")
    page.get_by_label("密码").fill("wrong")
    page.get_by_role("button", name="登录").click()
    expect(page.locator(".form-error")).to_contain_text("密码")
    log_in(page, live_server, teacher)

    stream = "**/api/agents/*/run/stream"
    page.route(stream, lambda route: route.fulfill(status=502, body="Bad Gateway"))
    reply = send(page, FIRST, status="failed")
    expect(reply.locator(".msg-error")).to_contain_text("HTTP 502")
    expect(page.locator("#composer-input")).to_have_value(FIRST)
    page.unroute(stream)

    page.route(stream, lambda route: route.abort("connectionreset"))
    reply.get_by_role("button", name="重试").click()
    second = page.locator(".msg.assistant").nth(1)
    expect(second).to_have_attribute("data-status", "failed")
    expect(second.locator(".msg-error")).to_contain_text("网络连接中断")
    page.unroute(stream)
    assert not Run.objects.exists()

    second.get_by_role("button", name="重试").click()
    third = page.locator(".msg.assistant").nth(2)
    expect(third).to_have_attribute("data-status", "completed")
    expect(page.locator("#composer-input")).to_have_value("")
    assert Run.objects.get().input == FIRST

    # Logging out is a POST form; it lands on the login page.
    page.get_by_role("button", name="退出").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/$"))


def test_thread_link_from_the_memory_panel_opens_that_conversation(
    page: Any, live_server: Any
) -> None:
    teacher = teacher_named("link")
    log_in(page, live_server, teacher)
    send(page, FIRST)
    page.get_by_role("button", name="新建会话").click()
    send(page, "另一个话题：出一份英语阅读练习")
    old = Thread.objects.get(title=FIRST)
    page.goto(f"{live_server.url}/chat/?thread={old.pk}")
    expect(page.locator(".msg.user").first).to_contain_text(FIRST)
    expect(page.locator(".msg.user")).to_have_count(1)
    # The next message goes into that conversation.
    send(page, SECOND)
    assert Run.objects.filter(thread_id=old.pk).count() == 2
