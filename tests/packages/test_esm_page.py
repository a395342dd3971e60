"""The search page's import map snippet in headless Chromium, then pasted into a page."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from assetgate.settings import Settings
from tests.conftest import CHROMIUM_ARGS, live_server, require_binary
from tests.packages.esm_support import installed_bundler
from tests.packages.upstream import LibraryCatalog, Registry

pytestmark = pytest.mark.slow  # Chromium and the bundler


def test_search_page_offers_a_copy_ready_import_map(
    pkg_settings: Callable[..., Settings], registry: Registry, catalog: LibraryCatalog
) -> None:
    installed_bundler()
    chromium = require_binary("chromium")
    from playwright.sync_api import expect, sync_playwright

    registry.publish(
        "greet",
        "1.0.0",
        {"i.js": b"exports.hello = (n) => 'hello ' + n;"},
        manifest={"main": "i.js"},
    )
    registry.publish(
        "widget",
        "2.0.0",
        {"w.mjs": b"export { hello } from 'greet';"},
        manifest={"main": "w.mjs", "dependencies": {"greet": "^1"}},
    )
    registry.add_search("widget", "2.0.0", "A widget")
    catalog.add("widget-css", "3.0.0", {"widget.min.css": b".w{}"}, description="Widget styles")
    with live_server(pkg_settings()) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{base}/npm")
            page.locator("#q").press_sequentially("widget", delay=30)
            expect(page.locator("#results .result")).to_have_count(2)
            package, library = page.locator("#results .result").all()
            assert library.locator(".esm").is_hidden()  # a catalog file is no npm package
            package.locator(".show-map").click()
            snippet = package.locator(".map")
            expect(snippet).to_contain_text('"integrity"', timeout=30_000)
            text = snippet.text_content() or ""
            assert text.startswith('<script type="importmap">\n{\n  "imports": {\n')
            assert f'"widget": "{base}/npm/widget@2.0.0/+esm"' in text
            assert f'"greet": "{base}/npm/greet@1.0.0/+esm"' in text
            assert text.endswith(
                '<script type="module">\nimport * as pkg from "widget";\n</script>'
            )
            expect(package.locator(".copy-map")).to_be_visible()

            # Pasted into a page of the same origin with a module of its own, it works.
            script_map = text.split('<script type="module">')[0]
            body = script_map + (
                '<p id="out"></p><script type="module">import { hello } from "widget";'
                'document.getElementById("out").textContent = hello("map");</script>'
            )
            page.route(f"{base}/pasted", lambda r: r.fulfill(body=body, content_type="text/html"))
            page.goto(f"{base}/pasted")
            expect(page.locator("#out")).to_have_text("hello map")
            assert errors == []
        finally:
            browser.close()
