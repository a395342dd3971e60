"""What a new user saw on the pages (issue: backticks, broken images, headers broken mid-word, an
unexplained 403), checked in real Chromium at phone and desktop widths, by their screenshots."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from assetgate.settings import Settings
from tests.conftest import live_server
from tests.ui.conftest import fits_width, open_page
from tests.ui.images import RED, decode, near, png_bytes, write_halves

pytestmark = pytest.mark.anyio

VIEWPORTS = [
    pytest.param({"width": 390, "height": 844}, id="phone"),
    pytest.param({"width": 1280, "height": 900}, id="desktop"),
]
#: The light square of the playground's checkerboard behind an image (ui.css).
CHECKER = (204, 204, 204)
SIGNING_KEY = "k" * 40


def text_lines(png: bytes, dark: int = 110, skip_left: int = 0) -> int:
    """Lines of text in a screenshot: runs of pixel rows holding dark (text) pixels
    (``skip_left`` columns left out, e.g. a coloured border)."""
    image = decode(png).convert("L")
    width, height = image.size
    pixels = image.load()
    inked = [any(pixels[x, y] < dark for x in range(skip_left, width)) for y in range(height)]
    return sum(1 for y in range(height) if inked[y] and (y == 0 or not inked[y - 1]))


def count_colour(png: bytes, colour: tuple[int, int, int]) -> int:
    colours = decode(png).getcolors(maxcolors=1 << 24) or []
    return sum(n for n, c in colours if c == colour)


async def visible_broken_images(page: Any) -> list[str]:
    return await page.evaluate(
        """() => [...document.images]
            .filter((img) => img.offsetParent !== null && !(img.complete && img.naturalWidth))
            .map((img) => img.id || img.alt)"""
    )


@pytest.fixture
def root(docroot: Path) -> Path:
    write_halves(docroot / "photo.jpg", 960, 480)
    (docroot / "style.css").write_text("body {  color : red ; }\n")
    return docroot


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize(
    ("url", "ready"), [("/ui/optimizer", "#p-upscaling"), ("/ui/api", "#operations h2")]
)
async def test_help_texts_show_code_not_backticks(
    browser: Any,
    root: Path,
    make_settings: Callable[..., Settings],
    viewport: dict[str, int],
    url: str,
    ready: str,
) -> None:
    with live_server(make_settings()) as base:
        page, problems = await open_page(browser, viewport=viewport)
        await page.goto(base + url)
        await expect(page.locator(ready).first).to_be_attached(timeout=20_000)
        text = await page.locator("main").inner_text()
        assert "`" not in text
        code = page.locator("main code", has_text="resampling").first
        await code.scroll_into_view_if_needed()
        shot = decode(await code.screenshot())
        # Rendered as code: its own shaded box behind the word, not raw Markdown.
        corner = shot.getpixel((1, 1))
        assert corner != (255, 255, 255), corner
        assert all(200 <= channel < 255 for channel in corner), corner
        assert await fits_width(page, viewport["width"])
        assert problems == []


@pytest.mark.parametrize("viewport", VIEWPORTS)
async def test_css_and_missing_files_show_the_answer_not_broken_images(
    browser: Any, root: Path, make_settings: Callable[..., Settings], viewport: dict[str, int]
) -> None:
    with live_server(make_settings()) as base:
        page, problems = await open_page(browser, viewport=viewport)
        await page.goto(f"{base}/ui/optimizer?file=style.css&min=1")
        await expect(page.locator("#status")).to_have_text("Done: style.css.", timeout=20_000)
        await expect(page.locator("#text-result")).to_have_text("body{color:red}")
        assert await visible_broken_images(page) == []
        await expect(page.locator("#snippet-section")).to_be_hidden()
        await expect(page.locator("#original-figure")).to_be_hidden()
        shot = await page.screenshot(full_page=True)
        assert count_colour(shot, CHECKER) < 200  # no empty image box with its checkerboard

        await page.goto(f"{base}/ui/optimizer?file=nope.jpg&width=100")
        await expect(page.locator("#status")).to_have_text("HTTP 404: not found", timeout=20_000)
        await page.wait_for_load_state("networkidle")
        assert await visible_broken_images(page) == []
        await expect(page.locator("#snippet-section")).to_be_hidden()
        await expect(page.locator("#result-figure")).to_be_hidden()
        shot = await page.screenshot(full_page=True)
        assert count_colour(shot, CHECKER) < 200

        # A good image still shows both pictures and its snippet.
        await page.goto(f"{base}/ui/optimizer?file=photo.jpg&width=100")
        await expect(page.locator("#snippet")).to_contain_text("960w", timeout=20_000)
        await expect(page.locator("#original-figure")).to_be_visible()
        assert near(decode(await page.locator("#original").screenshot()).getpixel((2, 2)), RED)
        assert await fits_width(page, viewport["width"])
        assert problems == []


@pytest.mark.parametrize("viewport", VIEWPORTS)
async def test_convert_results_keep_headers_and_sizes_whole(
    browser: Any, make_settings: Callable[..., Settings], tmp_path: Path, viewport: dict[str, int]
) -> None:
    good = tmp_path / "holiday-photo-from-the-beach-at-sunset-with-friends.png"
    good.write_bytes(png_bytes(64, 32, RED))
    bad = tmp_path / "another-rather-long-file-name-that-is-not-an-image-at-all.png"
    bad.write_bytes(b"this is text, not a PNG " * 4)
    with live_server(make_settings()) as base:
        page, problems = await open_page(browser, viewport=viewport)
        await page.goto(f"{base}/ui/convert")
        await page.locator("#files").set_input_files([str(good), str(bad)])
        await expect(page.locator("#status")).to_have_text("1 converted, 1 failed.", timeout=20_000)
        for header in await page.locator("#results thead th").all():
            name = await header.text_content()
            assert text_lines(await header.screenshot()) == 1, name
        for cell in await page.locator("#results td.num").all():
            if (await cell.text_content() or "").strip() != "–":
                assert text_lines(await cell.screenshot()) == 1, await cell.text_content()
        assert await fits_width(page, viewport["width"])  # a wide table scrolls in its own box
        assert problems == []


@pytest.mark.parametrize("viewport", VIEWPORTS)
async def test_the_playground_explains_signing(
    browser: Any, root: Path, make_settings: Callable[..., Settings], viewport: dict[str, int]
) -> None:
    with live_server(make_settings(signing_keys=[SIGNING_KEY])) as base:
        page, problems = await open_page(browser, viewport=viewport)
        await page.goto(f"{base}/ui/optimizer?file=photo.jpg&width=100")
        await expect(page.locator("#status")).to_contain_text("HTTP 403", timeout=20_000)
        explain = page.locator("#explain")
        await expect(explain).to_be_visible()
        text = await explain.text_content() or ""
        assert "ASSETGATE_SIGNING_KEYS" in text
        assert "assetgate sign" in text
        assert "signature" in text
        # The static original needs no signature and shows; no result, no unsigned snippet.
        await expect(page.locator("#original-figure")).to_be_visible()
        await expect(page.locator("#result-figure")).to_be_hidden()
        await expect(page.locator("#snippet-section")).to_be_hidden()
        shot = await explain.screenshot()
        assert text_lines(shot, skip_left=8) >= 2  # a paragraph, not one bare status line
        assert await fits_width(page, viewport["width"])
        assert problems == []
