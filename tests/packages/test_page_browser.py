"""The /npm search page in real headless Chromium against the real app and loopback catalogs."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from assetgate.packages.esm.bundler import Bundler, locate
from assetgate.settings import Settings
from tests.conftest import CHROMIUM_ARGS, live_server, require_binary
from tests.packages.upstream import LibraryCatalog, Registry, sri512

pytestmark = pytest.mark.slow  # Chromium

HOSTILE = "<img src=x onerror=\"document.title='pwned'\"><b>bold</b>"


@pytest.fixture
def live_app(pkg_settings: Callable[..., Settings]) -> Iterator[str]:
    with live_server(pkg_settings()) as base:
        yield base


def test_search_page_renders_escaped_results(
    live_app: str, registry: Registry, catalog: LibraryCatalog, tmp_path: Path
) -> None:
    chromium = require_binary("chromium")
    from playwright.sync_api import expect, sync_playwright

    registry.publish(
        "widget", "1.2.0", {"dist/widget.min.js": b"w()"}, manifest={"main": "dist/widget.min.js"}
    )
    registry.add_search("widget", "1.2.0", "A tiny widget")
    registry.add_search("widget-evil", "6.6.6", HOSTILE)
    catalog.add("widget-css", "3.0.0", {"widget.min.css": b".w{}"}, description="Widget styles")
    # Put "widget" in the store first: its result is "ready" and the page shows its SRI.
    assert httpx.get(f"{live_app}/npm/widget@1.2.0/dist/widget.min.js").status_code == 200

    page_response = httpx.get(f"{live_app}/npm")
    assert page_response.status_code == 200
    csp = page_response.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp.split("style-src")[0]

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}"))
            page.goto(f"{live_app}/npm")
            page.locator("#q").press_sequentially("widget", delay=30)
            expect(page.locator("#results .result")).to_have_count(3)
            names = page.locator("#results .name").all_text_contents()
            kinds = page.locator("#results .kind").all_text_contents()
            assert names == ["widget", "widget-css", "widget-evil"]
            assert kinds == ["package", "library", "package"]
            evil = page.locator("#results .result").nth(2)
            assert evil.locator(".description").text_content() == HOSTILE
            assert page.locator("#results img").count() == 0
            assert page.locator("#results .description b").count() == 0
            assert page.title() != "pwned"

            ready = page.locator("#results .result").nth(0)
            assert ready.locator(".ready").is_visible()
            expect(ready.locator(".tag")).to_contain_text("integrity=")
            tag = ready.locator(".tag").text_content()
            assert tag == (
                f'<script src="{live_app}/npm/widget@1.2.0/dist/widget.min.js" '
                f'integrity="{sri512(b"w()")}" crossorigin="anonymous"></script>'
            )
            css_tag = page.locator("#results .result").nth(1).locator(".tag").text_content()
            assert css_tag == (
                f'<link rel="stylesheet" href="{live_app}/npm/lib/widget-css@3.0.0/widget.min.css">'
            )
            assert page.locator("#status").text_content() == "3 of 3 results for “widget”"
            assert page.locator("#warnings").is_hidden()
            page.screenshot(path=str(tmp_path / "npm-search.png"), full_page=True)
            assert errors == []
        finally:
            browser.close()
    assert (tmp_path / "npm-search.png").stat().st_size > 1000
    if shot := os.environ.get("ASSETGATE_SCREENSHOT_DIR"):
        shutil.copy(tmp_path / "npm-search.png", shot)


REACT_INDEX = (
    b"'use strict';\nif (process.env.NODE_ENV === 'production') {\n"
    b"  module.exports = require('./cjs/react.production.min.js');\n} else {\n"
    b"  module.exports = require('./cjs/react.development.js');\n}\n"
)
UMD = (
    b"(function (g, f) { typeof exports === 'object' && typeof module !== 'undefined' ?"
    b" f(exports) : (g = g || self, f(g.Umd = {})); }(this, function (exports) {"
    b" exports.version = '1'; }));\n"
)


def test_a_commonjs_default_file_is_offered_as_a_module_import(
    live_app: str, registry: Registry
) -> None:
    # Issue 36, item 7: the copy-ready <script src> of react's CommonJS index.js threw
    # "process is not defined"; a UMD build keeps its <script src> with integrity.
    chromium = require_binary("chromium")
    from playwright.sync_api import expect, sync_playwright

    registry.publish(
        "reactish",
        "1.0.0",
        {
            "index.js": REACT_INDEX,
            "cjs/react.production.min.js": b"exports.flavour = 'production';",
            "cjs/react.development.js": b"exports.flavour = 'development';",
        },
        manifest={"main": "index.js"},
    )
    registry.publish("umdish", "1.0.0", {"umd/umdish.js": UMD}, manifest={"main": "umd/umdish.js"})
    registry.add_search("reactish", "1.0.0", "CommonJS like react")
    registry.add_search("umdish", "1.0.0", "A UMD build")
    for pinned in ("/npm/reactish@1.0.0/index.js", "/npm/umdish@1.0.0/umd/umdish.js"):
        assert httpx.get(f"{live_app}{pinned}").status_code == 200  # ready: in the store

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{live_app}/npm?q=ish")
            expect(page.locator("#results .result")).to_have_count(2)
            assert page.locator("#results .name").all_text_contents() == ["reactish", "umdish"]
            cjs, umd = (
                page.locator("#results .result").nth(0),
                page.locator("#results .result").nth(1),
            )
            expect(cjs.locator(".tag")).to_contain_text('type="module"')
            assert cjs.locator(".tag").text_content() == (
                '<script type="module">\n'
                f'import * as pkg from "{live_app}/npm/reactish@1.0.0/+esm";\n'
                "</script>"
            )
            assert cjs.locator(".module-note").is_visible()
            assert "CommonJS" in (cjs.locator(".module-note").text_content() or "")
            assert "UMD build" in (cjs.locator(".module-note").text_content() or "")
            expect(umd.locator(".tag")).to_contain_text("integrity=")
            assert umd.locator(".tag").text_content() == (
                f'<script src="{live_app}/npm/umdish@1.0.0/umd/umdish.js" '
                f'integrity="{sri512(UMD)}" crossorigin="anonymous"></script>'
            )
            assert umd.locator(".module-note").is_hidden()
            assert errors == []
            if isinstance(locate(None, "node", 20.0, 2 * 1024**3), Bundler):
                # The offered snippet runs: its +esm module imports in this browser.
                url = f"{live_app}/npm/reactish@1.0.0/+esm"
                namespace = page.evaluate("async (url) => JSON.stringify(await import(url))", url)
                assert "production" in namespace or "development" in namespace, namespace
        finally:
            browser.close()


def test_search_page_says_which_catalog_failed(
    pkg_settings: Callable[..., Settings],
    free_port: Callable[[], int],
    catalog: LibraryCatalog,
) -> None:
    chromium = require_binary("chromium")
    from playwright.sync_api import expect, sync_playwright

    catalog.add("widget-css", "3.0.0", {"widget.min.css": b".w{}"}, description="Widget styles")
    settings = pkg_settings(npm_registry=f"http://127.0.0.1:{free_port()}/")
    with live_server(settings) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{base}/npm")
            page.locator("#q").press_sequentially("widget", delay=30)
            expect(page.locator("#results .result")).to_have_count(1)
            expect(page.locator("#warnings")).to_be_visible()
            assert page.locator("#warnings").text_content() == (
                "Incomplete results. npm: searching the npm registry failed; "
                "results are from the other catalog only"
            )
        finally:
            browser.close()
