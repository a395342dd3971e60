"""/npm is one of the pages: the same navigation bar, and ``?q=`` in its address is its search
(opened from a link, kept while typing), in real Chromium at phone and desktop widths."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from PIL import Image

from assetgate.settings import Settings
from tests.conftest import CHROMIUM_ARGS, live_server, require_binary
from tests.packages.upstream import LibraryCatalog, Registry

pytestmark = pytest.mark.slow  # Chromium

PAGES = ["Home", "Optimizer", "Convert", "Whois", "API", "Packages"]


def dark_pixels(png: bytes) -> int:
    image = Image.open(io.BytesIO(png)).convert("L")
    return sum(n for n, level in (image.getcolors(maxcolors=256) or []) if level < 128)


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1280, 900)], ids=["phone", "desktop"])
def test_npm_has_the_navigation_and_reads_q(
    pkg_settings: Callable[..., Settings],
    registry: Registry,
    catalog: LibraryCatalog,
    width: int,
    height: int,
) -> None:
    chromium = require_binary("chromium")
    from playwright.sync_api import expect, sync_playwright

    registry.add_search("widget", "1.2.0", "A tiny widget")
    catalog.add("widget-css", "3.0.0", {"widget.min.css": b".w{}"}, description="Widget styles")
    with live_server(pkg_settings()) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{base}/npm?q=widget")
            expect(page.locator("#results .result")).to_have_count(2)
            assert page.locator("#q").input_value() == "widget"
            assert page.locator("#status").text_content() == "2 of 2 results for “widget”"

            nav = page.locator("nav a")
            assert nav.all_text_contents() == PAGES
            assert page.locator("nav a[aria-current=page]").text_content() == "Packages"
            assert page.locator("nav a", has_text="Optimizer").get_attribute("href") == (
                "/ui/optimizer"
            )
            # The bar is drawn at the top, inside the viewport, and the page does not overflow.
            box = page.locator("nav").bounding_box()
            assert box is not None
            assert box["y"] == 0
            assert box["width"] <= width
            assert dark_pixels(page.locator("nav").screenshot()) > 100
            assert page.evaluate("document.scrollingElement.scrollWidth") <= width

            # Typing keeps the address current, so the search can be linked or reloaded.
            page.locator("#q").fill("widget-css")
            expect(page.locator("#results .result")).to_have_count(1)
            assert page.url == f"{base}/npm?q=widget-css"
            page.reload()
            expect(page.locator("#results .result")).to_have_count(1)
            assert page.locator("#q").input_value() == "widget-css"
            assert errors == []
        finally:
            browser.close()
