"""/ui/whois in real Chromium against loopback whois servers: the table, raw text, 403 and 429."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import expect

from tests.conftest import live_server
from tests.ui.conftest import keep_screenshot, open_page
from tests.whois.conftest import Env

pytestmark = pytest.mark.anyio


async def test_record_table_raw_text_and_errors_in_words(browser, env: Env, tmp_path: Path) -> None:
    # A budget of three requests: the lookup, its raw text, the .edu refusal; the fourth is a 429.
    with live_server(env.settings(rate_limit="3/1 minute")) as base:
        page, problems = await open_page(browser)
        await page.goto(f"{base}/ui/whois?domain=example.com")
        status = page.locator("#status")
        await expect(status).to_have_text("Record of example.com.", timeout=20_000)
        table = {}
        for row in await page.locator("#record tr").all():
            table[await row.locator("th").text_content()] = await row.locator("td").text_content()
        assert table["Domain"] == "example.com"
        assert table["Registered"] == "yes"
        assert table["Registrar · name"] == "Example Registrar, Inc."
        assert table["Registrant · organization"] == "Example Holdings LLC"
        assert "clientTransferProhibited" in table["Status"]
        assert await page.locator("#raw").is_hidden()
        path = tmp_path / "whois.png"
        await page.screenshot(path=str(path), full_page=True)
        keep_screenshot(path)

        await page.locator("#show-raw").click()
        await expect(page.locator("#raw")).to_be_visible()
        assert "Registrar: Example Registrar, Inc." in (
            await page.locator("#raw").text_content() or ""
        )

        # Keyboard only: type a restricted domain and press Enter.
        await page.locator("#domain").fill("example.edu")
        await page.locator("#domain").press("Enter")
        await expect(status).to_have_text(
            "Whois of .edu domains is not available here: this top-level domain is restricted."
        )
        assert await page.locator("#record").is_hidden()
        assert "domain=example.edu" in page.url

        await page.locator("#domain").fill("example.net")
        await page.locator("#domain").press("Enter")
        await expect(status).to_contain_text("Too many lookups from your address. Wait ")
        text = await status.text_content() or ""
        seconds = int(text.split("Wait ")[1].split(" ")[0])
        assert 1 <= seconds <= 60
        assert problems == []
