"""The real app on a loopback port (uvicorn in a thread), and real headless Chromium."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CHROMIUM_ARGS, require_binary

# ``env``: the loopback whois servers, for the whois page.
from tests.whois.conftest import env

__all__ = ["env"]


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    chromium = require_binary("chromium")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


async def open_page(browser: Any, **options: Any) -> tuple[Any, list[str]]:
    """A new page that records script errors, CSP violations and dialogs (all must stay empty)."""
    page = await browser.new_page(**options)
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"pageerror: {exc}"))
    page.on("dialog", lambda dialog: problems.append(f"dialog: {dialog.message}"))
    page.on(
        "console",
        lambda message: (
            problems.append(f"console: {message.text}")
            if message.type == "error" and "Content Security Policy" in message.text
            else None
        ),
    )
    return page, problems


def keep_screenshot(path: Path) -> None:
    """Copy a screenshot to ASSETGATE_SCREENSHOT_DIR when set (how docs/img/ is refreshed)."""
    if shot := os.environ.get("ASSETGATE_SCREENSHOT_DIR"):
        shutil.copy(path, Path(shot) / path.name)


async def fits_width(page: Any, width: int) -> bool:
    scroll = await page.evaluate("document.scrollingElement.scrollWidth")
    return int(scroll) <= width
