"""The knowledge-base page (/kb/) in a real headless Chromium: with JavaScript and without.

Files are real (GBK text, a Word document, Markdown dropped onto the page); uploads go
through the live server, whose processing job runs when the upload commits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from memory.models import KBDocument, KBSource
from memory.services.kb_documents import kb_document_create, kb_document_process
from tests.browser.conftest import DESKTOP
from tests.factories import Teacher, make_teacher
from tests.kbfiles import docx_file, gbk_text

pytestmark = pytest.mark.browser

LESSON_MD = "# 光合作用\n\n## 场所\n\n光反应在类囊体薄膜上进行，暗反应在叶绿体基质中进行。\n"


def log_in(page: Any, live_server: Any, teacher: Teacher) -> None:
    page.goto(f"{live_server.url}/kb/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/kb/"))
    page.get_by_label("用户名").fill(teacher.user.username)
    page.get_by_label("密码").fill("pw-" + teacher.user.username)
    page.get_by_role("button", name="登录").click()
    page.wait_for_url(f"{live_server.url}/kb/")


def row(page: Any, title: str) -> Any:
    return page.locator("#document-table tbody tr").filter(has_text=title)


@pytest.fixture
def no_js_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=DESKTOP, locale="zh-CN", java_script_enabled=False)
    context.set_default_timeout(10_000)
    yield context.new_page()
    context.close()


def test_upload_by_file_input_and_by_drop_then_search_and_delete(
    page: Any, live_server: Any, artifacts: Path, tmp_path: Path
) -> None:
    teacher = make_teacher(tenant_name="第一中学", username="zhang")
    log_in(page, live_server, teacher)
    expect(page.get_by_role("heading", level=1)).to_have_text("知识库")
    expect(page.locator("#documents-empty")).to_be_visible()

    # The plain file input.
    rules = tmp_path / "校规.txt"
    rules.write_bytes(gbk_text())
    page.get_by_label("选择文件").set_input_files(str(rules))
    page.get_by_role("button", name="上传", exact=True).click()
    expect(page.locator("#kb-flash")).to_contain_text("已上传「校规」")
    expect(row(page, "校规").locator(".doc-status")).to_have_text("可用")

    # Drag and drop a Markdown file onto the upload area.
    page.evaluate(
        """(text) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([text], "光合作用.md", {type: "text/markdown"}));
            const zone = document.getElementById("drop-zone");
            const init = {dataTransfer: transfer, bubbles: true, cancelable: true};
            zone.dispatchEvent(new DragEvent("dragover", init));
            zone.dispatchEvent(new DragEvent("drop", init));
        }""",
        LESSON_MD,
    )
    expect(page.locator("#kb-flash")).to_contain_text("已上传「光合作用」")
    expect(row(page, "光合作用").locator(".doc-status")).to_have_text("可用")
    expect(page.locator("#document-count")).to_have_text("2")

    # Search: the hits and exactly what the agent would be given.
    page.get_by_label("检索内容").fill("光反应在哪里进行")
    page.get_by_role("button", name="检索", exact=True).click()
    first = page.locator("#hit-list li").first
    expect(first).to_contain_text("光合作用")
    expect(first).to_contain_text("会提供给智能体")
    expect(page.locator("#injected-text")).to_contain_text("[知识库检索结果 — ")
    expect(page.locator("#injected-text")).to_contain_text("类囊体薄膜")
    page.screenshot(path=str(artifacts / "kb-desktop.png"), full_page=True)

    row(page, "校规").get_by_role("button", name="删除「校规」").click()
    expect(page.locator("#kb-flash")).to_have_text("已删除「校规」。")
    expect(row(page, "校规")).to_have_count(0)
    assert list(KBDocument.objects.values_list("title", flat=True)) == ["光合作用"]


def test_a_document_still_processing_turns_ready_without_a_reload(
    page: Any, live_server: Any, artifacts: Path
) -> None:
    teacher = make_teacher(tenant_name="第一中学", username="li")
    # As an upload is stored, its job not run yet (the worker is busy): the row and its
    # raw bytes. (The service would run the job at once here, in the tests' sync mode.)
    document = KBDocument.objects.create(
        tenant=teacher.tenant,
        agent=teacher.agent,
        owner=teacher.user,
        title="教案",
        kind="docx",
        filename="教案.docx",
    )
    KBSource.objects.create(document=document, content=docx_file())
    log_in(page, live_server, teacher)
    expect(row(page, "教案").locator(".doc-status")).to_have_text("处理中")
    page.evaluate("window.__sameDocument = true")
    kb_document_process(document_id=document.pk)
    expect(row(page, "教案").locator(".doc-status")).to_have_text("可用", timeout=15_000)
    expect(row(page, "教案").locator(".doc-chunks")).not_to_have_text("0")
    assert page.evaluate("window.__sameDocument") is True


def test_upload_search_and_delete_work_without_javascript(
    no_js_page: Any, live_server: Any, artifacts: Path, tmp_path: Path
) -> None:
    page = no_js_page
    teacher = make_teacher(tenant_name="第一中学", username="wang")
    log_in(page, live_server, teacher)
    lesson = tmp_path / "教案.docx"
    lesson.write_bytes(docx_file())
    page.get_by_label("选择文件").set_input_files(str(lesson))
    page.get_by_label("仅自己").check()
    page.get_by_role("button", name="上传", exact=True).click()
    expect(page.locator("#kb-flash")).to_contain_text("已上传「教案」")
    expect(row(page, "教案")).to_contain_text("仅自己")
    expect(row(page, "教案").locator(".doc-status")).to_have_text("可用")

    bad = tmp_path / "旧试卷.doc"
    bad.write_bytes(b"\xd0\xcf\x11\xe0")
    page.get_by_label("选择文件").set_input_files(str(bad))
    page.get_by_role("button", name="上传", exact=True).click()
    expect(page.locator("#kb-flash .error")).to_contain_text("不支持这种文件类型")

    page.get_by_label("检索内容").fill("暗反应在哪里进行")
    page.get_by_role("button", name="检索", exact=True).click()
    expect(page.locator("#injected-text")).to_contain_text("叶绿体基质")
    page.screenshot(path=str(artifacts / "kb-no-js.png"), full_page=True)

    row(page, "教案").get_by_role("button", name="删除「教案」").click()
    expect(page.locator("#kb-flash")).to_have_text("已删除「教案」。")
    expect(page.locator("#documents-empty")).to_be_visible()


def test_the_page_on_a_phone(phone_page: Any, live_server: Any, artifacts: Path) -> None:
    teacher = make_teacher(tenant_name="第一中学", username="zhao")
    document = kb_document_create(
        agent=teacher.agent,
        owner_id=teacher.user.pk,
        title="校规",
        filename="校规.txt",
        data=gbk_text(),
    )
    kb_document_process(document_id=document.pk)
    log_in(phone_page, live_server, teacher)
    expect(row(phone_page, "校规").locator(".doc-status")).to_have_text("可用")
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375 + 1, f"the page scrolls sideways ({width}px)"
    phone_page.screenshot(path=str(artifacts / "kb-phone.png"), full_page=True)
