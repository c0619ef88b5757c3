"""A run refused by the run limit (429) reads as 请稍后再试 with the wait, in a real browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.models import Run
from tests.browser.conftest import login
from tests.factories import make_teacher

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_throttled_message_says_to_wait_and_keeps_the_text(
    page: Any, live_server: Any, settings: Any, artifacts: Path
) -> None:
    settings.RUN_RATE_USER = "1/minute"
    teacher = make_teacher(tenant_name="限速学校", username="limit")
    login(page, live_server.url, "limit", "pw-limit")
    box = page.locator("#composer-input")
    box.fill("出一份数据结构试卷")
    box.press("Enter")
    expect(page.locator(".msg.assistant").nth(0)).to_have_attribute("data-status", "completed")

    box.fill("简答题换两道")
    box.press("Enter")
    reply = page.locator(".msg.assistant").nth(1)
    expect(reply).to_have_attribute("data-status", "failed")
    error = reply.locator(".msg-error")
    expect(error).to_contain_text("请稍后再试")
    expect(error).to_contain_text("秒后")
    wait = int(error.inner_text().split("约 ", 1)[1].split(" ", 1)[0])
    assert 1 <= wait <= 60
    # Nothing is lost: the text is back in the box, and no run was started.
    expect(box).to_have_value("简答题换两道")
    assert Run.objects.filter(owner_id=teacher.user.pk).count() == 1
    page.screenshot(path=str(artifacts / "chat-throttled.png"))
