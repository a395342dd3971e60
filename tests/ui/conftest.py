"""The real app on a loopback port (uvicorn in a thread), and real headless Chromium."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from assetgate.app import create_app
from assetgate.settings import Settings
from tests.conftest import require_binary
from tests.whois.conftest import env  # noqa: F401  (the loopback whois servers, for the whois page)

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def live_server(settings: Settings) -> Iterator[str]:
    """The app with its lifespan on 127.0.0.1:<free port>; yields the base URL."""
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=0, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        assert thread.is_alive(), "uvicorn stopped while starting"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


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
