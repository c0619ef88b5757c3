"""The chat page with a run that calls a tool: the streamed ``tool`` event changes
nothing for the page, the teacher sees the final answer (issue #13, KBSearch)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from agents.models import Run
from tests.browser.conftest import login
from tests.factories import make_teacher

pytestmark = pytest.mark.browser


def test_a_knowledge_base_question_shows_the_answer_after_the_tool_call(
    page: Any, live_server: Any
) -> None:
    teacher = make_teacher(tenant_name="第一中学", username="zhao")
    login(page, live_server.url, "zhao", "pw-zhao")
    box = page.locator("#composer-input")
    box.fill("请查一下知识库：期末考试考哪几章？")
    box.press("Enter")
    reply = page.locator(".msg.assistant").first
    expect(reply).to_have_attribute("data-status", "completed")
    expect(reply.locator(".msg-body")).to_contain_text("我检索了知识库（kb_search）")
    run = Run.objects.get(owner=teacher.user)
    assert [call["name"] for call in run.tool_calls] == ["kb_search"]
    assert run.tool_calls[0]["arguments"] == {"query": "期末考试考哪几章"}
    # The rest of the demo's reply is there too: the page rendered the whole answer.
    expect(reply.locator(".msg-body")).to_contain_text(
        "你本轮的请求：「请查一下知识库：期末考试考哪几章？」"
    )
