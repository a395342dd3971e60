"""/ui/ and /ui/api in real Chromium: the links, health, and every operation of /openapi.json."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from playwright.async_api import expect

from assetgate.settings import Settings
from tests.conftest import live_server
from tests.ui.conftest import fits_width, open_page

pytestmark = pytest.mark.anyio

HREFS = "els => els.map(e => e.getAttribute('href'))"
METHODS = ("get", "head", "post", "put", "patch", "delete", "options")


async def test_home_links_every_page_and_shows_health(
    browser, make_settings: Callable[..., Settings]
) -> None:
    with live_server(make_settings()) as base:
        page, problems = await open_page(browser, viewport={"width": 390, "height": 844})
        await page.goto(f"{base}/ui/")
        await expect(page.locator("#health")).to_have_text("ok")
        links = await page.eval_on_selector_all("main a", HREFS)
        for target in (
            "/ui/optimizer", "/ui/convert", "/ui/whois", "/ui/api", "/npm",
            "/openapi.json", "/healthz", "/metrics",
        ):  # fmt: skip
            assert target in links, target
        nav = await page.eval_on_selector_all("nav a", HREFS)
        assert nav == ["/ui/", "/ui/optimizer", "/ui/convert", "/ui/whois", "/ui/api", "/npm"]
        assert await fits_width(page, 390)
        # Keyboard: Tab reaches the first nav link and Enter follows it.
        await page.keyboard.press("Tab")
        await page.keyboard.press("Tab")
        await page.keyboard.press("Enter")
        await page.wait_for_url(f"{base}/ui/optimizer")
        assert problems == []


async def test_api_page_renders_every_operation(
    browser, make_settings: Callable[..., Settings]
) -> None:
    with live_server(make_settings()) as base:
        document = httpx.get(f"{base}/openapi.json").json()
        expected = [
            f"{method.upper()} {path}"
            for path, item in document["paths"].items()
            for method in METHODS
            if method in item
        ]
        page, problems = await open_page(browser)
        await page.goto(f"{base}/ui/api")
        headings = page.locator("#operations h2")
        await expect(headings).to_have_count(len(expected))
        assert await headings.all_text_contents() == expected
        assert await page.locator("#title").text_content() == "assetgate API 1.2.2"
        optimize = page.locator("#optimizeFile")
        width_row = optimize.locator("tr", has=page.locator("td", has_text="width")).first
        cells = await width_row.locator("td").all_text_contents()
        assert cells[:4] == ["width", "query", "no", "integer, 1..50000"]
        convert = await page.locator("#convertToWebp").text_content() or ""
        assert "multipart/form-data" in convert
        assert await page.locator("#toc a").count() == len(expected)
        assert problems == []
