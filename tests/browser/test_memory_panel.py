"""The memory panel (issue #5) in a real headless Chromium: with JavaScript and without.

Candidates come from real runs (the API, then the after-run job with the offline demo
provider, which proposes facts from the teacher's own words).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from memory.models import CoreCandidate, CoreFact
from memory.services.jobs import after_run_process
from tests.browser.conftest import DESKTOP
from tests.factories import Teacher, make_teacher

pytestmark = pytest.mark.browser

THREE_FACTS = "我教八年级数学。以后出题都用人教版教材。每次作业都要附答案"


def teacher_with_candidates(username: str, *texts: str) -> Teacher:
    teacher = make_teacher(tenant_name="第一中学", username=username)
    for text in texts:
        response = teacher.client.post(
            f"/api/agents/{teacher.agent.pk}/run", {"input": text}, format="json"
        )
        assert response.status_code == 200, response.content
        # The sync test cluster already ran the job on commit; running it again is a no-op.
        after_run_process(run_id=response.json()["id"])
    return teacher


def log_in(page: Any, live_server: Any, teacher: Teacher) -> None:
    """Through the real login form, starting from the panel."""
    page.goto(f"{live_server.url}/memory/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/memory/"))
    page.get_by_label("用户名").fill(teacher.user.username)
    page.get_by_label("密码").fill("pw-" + teacher.user.username)
    page.get_by_role("button", name="登录").click()
    page.wait_for_url(f"{live_server.url}/memory/")


def item(page: Any, column_id: str, text: str) -> Any:
    return page.locator(f"#{column_id} li.item").filter(has_text=text)


def texts(page: Any, list_id: str) -> Any:
    return page.locator(f"#{list_id} .item-text")


@pytest.fixture
def no_js_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=DESKTOP, locale="zh-CN", java_script_enabled=False)
    context.set_default_timeout(10_000)
    yield context.new_page()
    context.close()


def test_confirm_delete_refuse_and_bulk_without_reload(
    page: Any, live_server: Any, artifacts: Path
) -> None:
    teacher = teacher_with_candidates("zhang", THREE_FACTS)
    log_in(page, live_server, teacher)

    expect(page.locator("#fact-count")).to_have_text("已确认 0 / 30")
    expect(page.locator("#candidate-count")).to_have_text("3 条")
    expect(page.locator("#facts-empty")).to_be_visible()
    # Equal confidence: the newest proposal first (candidates_for_scope).
    expect(texts(page, "candidate-list")).to_have_text(
        ["每次作业都要附答案", "以后出题都用人教版教材", "我教八年级数学"]
    )
    expect(item(page, "candidates-column", "以后出题").locator(".evidence")).to_contain_text(
        "「以后出题都用人教版教材」"
    )
    thread_id = CoreCandidate.objects.first().source_run.thread_id  # type: ignore[union-attr]
    expect(item(page, "candidates-column", "以后出题").get_by_role("link")).to_have_attribute(
        "href", f"/chat/?thread={thread_id}"
    )
    page.evaluate("window.__sameDocument = true")  # gone if the page reloads

    # Confirm one: it moves to 已确认 and the counts follow.
    item(page, "candidates-column", "我教八年级数学").get_by_role(
        "button", name="确认", exact=True
    ).click()
    expect(page.locator("#memory-flash")).to_have_text("已确认：「我教八年级数学」")
    expect(texts(page, "fact-list")).to_have_text(["我教八年级数学"])
    expect(page.locator("#fact-count")).to_have_text("已确认 1 / 30")
    expect(page.locator("#candidate-count")).to_have_text("2 条")
    expect(item(page, "candidates-column", "我教八年级数学")).to_have_count(0)
    expect(item(page, "facts-column", "我教八年级数学").locator(".item-meta")).to_contain_text(
        "尚未使用"
    )

    # Delete another: gone from both columns.
    item(page, "candidates-column", "每次作业").get_by_role("button", name="删除").click()
    expect(page.locator("#memory-flash")).to_have_text("已删除候选记忆：「每次作业都要附答案」")
    expect(texts(page, "candidate-list")).to_have_text(["以后出题都用人教版教材"])
    expect(page.locator("#candidate-count")).to_have_text("1 条")
    expect(texts(page, "fact-list")).to_have_text(["我教八年级数学"])

    # An edit that hits the red line is refused; the candidate stays.
    last = item(page, "candidates-column", "以后出题")
    last.get_by_text("编辑后确认").click()
    last.get_by_label("修改后再确认").fill("李华数学考了58分")
    last.get_by_role("button", name="保存并确认").click()
    expect(page.locator("#memory-flash .error")).to_contain_text("敏感信息")
    expect(texts(page, "candidate-list")).to_have_text(["以后出题都用人教版教材"])
    expect(page.locator("#fact-count")).to_have_text("已确认 1 / 30")
    page.screenshot(path=str(artifacts / "memory-panel.png"), full_page=True)

    # Bulk: select-all (a JS nicety) then 批量确认.
    bulk_confirm = page.get_by_role("button", name="批量确认")
    expect(bulk_confirm).to_be_disabled()
    page.get_by_label("全选").check()
    expect(page.locator("#bulk-count")).to_have_text("已选 1 条")
    bulk_confirm.click()
    expect(page.locator("#memory-flash")).to_have_text("已确认 1 条记忆。")
    expect(texts(page, "fact-list")).to_have_text(["以后出题都用人教版教材", "我教八年级数学"])
    expect(page.locator("#candidates-empty")).to_be_visible()
    expect(page.locator("#candidate-count")).to_have_text("0 条")

    assert page.evaluate("window.__sameDocument") is True
    assert set(CoreFact.objects.values_list("text", flat=True)) == {
        "我教八年级数学",
        "以后出题都用人教版教材",
    }
    assert not CoreCandidate.objects.exists()


def test_plain_forms_work_without_javascript(no_js_page: Any, live_server: Any) -> None:
    page = no_js_page
    teacher = teacher_with_candidates("li", THREE_FACTS)
    log_in(page, live_server, teacher)
    expect(page.locator("#select-all-label")).to_be_hidden()  # a JS-only control
    expect(page.locator("#agent-go")).to_be_visible()

    item(page, "candidates-column", "我教八年级数学").get_by_role(
        "button", name="确认", exact=True
    ).click()
    page.wait_for_url(f"{live_server.url}/memory/?agent={teacher.agent.pk}")
    expect(page.locator("#memory-flash")).to_have_text("已确认：「我教八年级数学」")
    expect(texts(page, "fact-list")).to_have_text(["我教八年级数学"])
    expect(page.locator("#fact-count")).to_have_text("已确认 1 / 30")
    expect(page.locator("#candidate-count")).to_have_text("2 条")

    # 编辑后确认 opens natively (<details>), then a plain POST.
    other = item(page, "candidates-column", "以后出题")
    other.get_by_text("编辑后确认").click()
    other.get_by_label("修改后再确认").fill("以后出题都用人教版教材（新版）")
    other.get_by_role("button", name="保存并确认").click()
    expect(page.locator("#memory-flash")).to_have_text("已确认：「以后出题都用人教版教材（新版）」")

    # Bulk delete with the checkboxes (form-associated, no script needed).
    page.get_by_label("每次作业都要附答案").check()
    page.get_by_role("button", name="批量删除").click()
    expect(page.locator("#memory-flash")).to_have_text("已删除 1 条候选记忆。")
    expect(page.locator("#candidates-empty")).to_be_visible()
    expect(texts(page, "fact-list")).to_have_text(
        ["以后出题都用人教版教材（新版）", "我教八年级数学"]
    )
    assert CoreFact.objects.count() == 2
    assert not CoreCandidate.objects.exists()


def test_phone_width_stacks_the_columns_and_shows_the_cap(
    phone_page: Any, live_server: Any, artifacts: Path, settings: Any
) -> None:
    page = phone_page
    settings.CORE_FACTS_MAX = 1  # the live server runs in this process
    teacher = teacher_with_candidates("wang", THREE_FACTS)
    log_in(page, live_server, teacher)
    expect(page.locator("#evict-preview")).to_have_count(0)
    item(page, "candidates-column", "我教八年级数学").get_by_role(
        "button", name="确认", exact=True
    ).click()
    expect(texts(page, "fact-list")).to_have_text(["我教八年级数学"])

    # Full: the candidate column says what confirming one more would evict.
    expect(page.locator("#fact-count")).to_have_text("已确认 1 / 1")
    expect(page.locator("#evict-preview")).to_contain_text("确认后将淘汰：「我教八年级数学」")

    facts_box = page.locator("#facts-column").bounding_box()
    candidates_box = page.locator("#candidates-column").bounding_box()
    assert candidates_box["y"] >= facts_box["y"] + facts_box["height"]
    assert abs(candidates_box["x"] - facts_box["x"]) < 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.screenshot(path=str(artifacts / "memory-panel-phone.png"), full_page=True)

    # Deleting the confirmed fact frees the slot.
    item(page, "facts-column", "我教八年级数学").get_by_role("button", name="删除").click()
    expect(page.locator("#memory-flash")).to_have_text("已删除记忆：「我教八年级数学」")
    expect(page.locator("#facts-empty")).to_be_visible()
    expect(page.locator("#fact-count")).to_have_text("已确认 0 / 1")
    expect(page.locator("#evict-preview")).to_have_count(0)
    assert not CoreFact.objects.exists()
