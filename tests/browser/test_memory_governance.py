"""The memory panel's governance (issue #14) in a real headless Chromium: facts under
已过期, 续期 and 删除 there, the validity chosen when confirming, and 导出."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from memory.models import CoreFact
from memory.terms import TermCalendar
from tests.browser.test_memory_panel import (
    THREE_FACTS,
    item,
    log_in,
    teacher_with_candidates,
    texts,
)
from tests.factories import fact_via_confirm

pytestmark = pytest.mark.browser


def test_expired_facts_are_renewed_or_deleted_and_the_memory_exported(
    page: Any, live_server: Any, artifacts: Path, settings: Any
) -> None:
    settings.MEMORY_TERM_CALENDAR = TermCalendar.parse(["2099-01-31"])  # this process serves
    teacher = teacher_with_candidates("zhao", THREE_FACTS)
    candidates = list(teacher.user.core_candidates.order_by("pk"))
    grade, textbook, homework = (fact_via_confirm(teacher, c) for c in candidates[:3])
    CoreFact.objects.filter(pk__in=[textbook.pk, homework.pk]).update(valid_until=date(2020, 7, 15))
    log_in(page, live_server, teacher)

    expect(page.locator("#fact-count")).to_have_text("已确认 1 / 30")  # live facts only
    expect(texts(page, "fact-list")).to_have_text([grade.text])
    expired = page.locator("#expired-section")
    expect(expired.get_by_role("heading", name="已过期")).to_be_visible()
    expect(texts(page, "expired-list")).to_have_text([homework.text, textbook.text])  # newest first
    expect(item(page, "expired-section", textbook.text)).to_contain_text("2020-07-15")
    page.screenshot(path=str(artifacts / "memory-panel-expired.png"), full_page=True)
    page.evaluate("window.__sameDocument = true")

    # 续期: this term by default; the fact is live again, no reload.
    row = item(page, "expired-section", textbook.text)
    expect(row.get_by_label("本学期（至 2099-01-31）")).to_be_checked()
    row.get_by_role("button", name="续期").click()
    expect(page.locator("#memory-flash")).to_have_text(
        f"已续期：「{textbook.text}」（有效期至 2099-01-31）"
    )
    expect(page.locator("#fact-count")).to_have_text("已确认 2 / 30")
    expect(item(page, "facts-column", textbook.text).locator(".validity-note")).to_have_text(
        "有效期至 2099-01-31"
    )
    assert CoreFact.objects.get(pk=textbook.pk).valid_until == date(2099, 1, 31)

    # 续期 to a date of one's choice, then 删除 in 已过期.
    item(page, "expired-section", homework.text).get_by_role("button", name="删除").click()
    expect(page.locator("#memory-flash")).to_have_text(f"已删除记忆：「{homework.text}」")
    expect(page.locator("#expired-section")).to_have_count(0)
    assert not CoreFact.objects.filter(pk=homework.pk).exists()
    assert page.evaluate("window.__sameDocument") is True

    # 导出: the button downloads the documented JSON of this teacher's memory.
    with page.expect_download() as download_info:
        page.get_by_role("link", name="导出").click()
    download = download_info.value
    assert download.suggested_filename.startswith(f"memory-export-agent{teacher.agent.pk}-")
    document = json.loads(Path(download.path()).read_text(encoding="utf-8"))
    assert (document["format"], document["version"]) == ("agent-memory.export", 1)
    assert {f["text"] for f in document["facts"]} == {grade.text, textbook.text}
    assert document["audit_events"][0]["action"] == "export"


def test_confirming_with_a_chosen_validity(page: Any, live_server: Any, settings: Any) -> None:
    settings.MEMORY_TERM_CALENDAR = TermCalendar.parse(["2099-01-31"])
    teacher = teacher_with_candidates("qian", THREE_FACTS)
    log_in(page, live_server, teacher)
    term = item(page, "candidates-column", "我教八年级数学")
    expect(term.get_by_label("长期")).to_be_checked()  # the default
    term.get_by_label("本学期（至 2099-01-31）").check()
    term.get_by_role("button", name="确认", exact=True).click()
    expect(item(page, "facts-column", "我教八年级数学").locator(".validity-note")).to_have_text(
        "有效期至 2099-01-31"
    )
    dated = item(page, "candidates-column", "以后出题都用人教版教材")
    dated.get_by_label("指定日期").check()
    dated.get_by_label("有效期至（日期）").fill("2030-07-15")
    dated.get_by_role("button", name="确认", exact=True).click()
    expect(
        item(page, "facts-column", "以后出题都用人教版教材").locator(".validity-note")
    ).to_have_text("有效期至 2030-07-15")
    long_term = item(page, "candidates-column", "每次作业都要附答案")
    long_term.get_by_role("button", name="确认", exact=True).click()
    expect(item(page, "facts-column", "每次作业都要附答案").locator(".validity-note")).to_have_text(
        "长期有效"
    )
    assert dict(CoreFact.objects.values_list("text", "valid_until")) == {
        "我教八年级数学": date(2099, 1, 31),
        "以后出题都用人教版教材": date(2030, 7, 15),
        "每次作业都要附答案": None,
    }
