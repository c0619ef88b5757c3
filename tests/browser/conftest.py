"""Fixtures for the browser tests: a headless system Chromium driving the live server.

Run them in their own invocation: ``.venv/bin/python -m pytest -m browser tests/browser``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Playwright's sync API runs an asyncio loop in the test thread; the ORM calls the tests
# make (fixtures, assertions on the database) are still plain synchronous calls.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


def new_page(browser: Any, viewport: dict[str, int], *, locale: str = "zh-CN", **extra: Any) -> Any:
    """A page in a fresh context; ``locale`` is also the browser's Accept-Language."""
    # Reduced motion: the drawer opens without a transition, so screenshots are settled.
    context = browser.new_context(
        viewport=viewport, locale=locale, reduced_motion="reduce", **extra
    )
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.errors = []  # JavaScript errors, asserted empty by the tests' teardown
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    return page


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context (own cookies and localStorage) at desktop size."""
    page = new_page(browser, DESKTOP)
    yield page
    errors = list(page.errors)
    page.context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


@pytest.fixture
def phone_page(browser: Any) -> Iterator[Any]:
    page = new_page(browser, PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    yield page
    errors = list(page.errors)
    page.context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def login(page: Any, base_url: str, username: str, password: str) -> None:
    """Log in through the real login form, starting from the chat page."""
    from playwright.sync_api import expect

    page.goto(f"{base_url}/chat/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/chat/"))
    page.get_by_label("用户名").fill(username)
    page.get_by_label("密码").fill(password)
    page.get_by_role("button", name="登录").click()
    page.wait_for_url(f"{base_url}/chat/")
    # The page is ready once the agents are loaded and a conversation is shown.
    expect(page.locator("#agent-select option")).not_to_have_count(0)
    expect(page.locator("#messages")).to_have_attribute("aria-busy", "false")
