"""Real packages from the configured npm registry, built into ES modules, in headless Chromium.

A page whose only scripts are the import map from ``/npm/importmap`` and one module importing
bare names; the test reads what the page shows. Every module is checked by the browser against
the map's ``integrity``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from assetgate.packages.registry import pick_registry
from assetgate.settings import Settings
from tests.conftest import CHROMIUM_ARGS, live_server, require, require_binary
from tests.packages.esm_support import installed_bundler

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # Chromium and the bundler

REACT = """
import React, { useState, useEffect } from "react";
import { createRoot } from "react-dom/client";
function Counter() {
  const [count, setCount] = useState(0);
  useEffect(() => { if (count < 3) setCount(count + 1); }, [count]);
  return React.createElement("p", { id: "react" }, `react ${React.version} count ${count}`);
}
createRoot(document.getElementById("root")).render(React.createElement(Counter));
"""

OTHERS = """
import { h, render } from "preact";
import { useState } from "preact/hooks";
import htm from "htm";
import { chunk, sum } from "lodash-es";
import * as d3 from "d3";
import * as THREE from "three";
import { createApp, h as vh, ref } from "vue";
const out = (id, text) => {
  const p = document.createElement("p");
  p.id = id;
  p.textContent = text;
  document.body.append(p);
};

const html = htm.bind(h);
function Hello() { const [who] = useState("htm"); return html`<b id="preact">preact ${who}</b>`; }
render(html`<${Hello} />`, document.getElementById("preact-root"));

out("lodash", `lodash ${sum(chunk([1, 2, 3, 4, 5, 6], 2).map((c) => c.length))}`);

const x = d3.scaleLinear().domain([0, 10]).range([0, 100]);
d3.select("#chart").append("svg").selectAll("rect").data([1, 5, 10]).join("rect")
  .attr("width", (d) => x(d)).attr("height", 5);
out("d3", `d3 ${x(5)} ${d3.sum([1, 2, 3])}`);

const scene = new THREE.Scene();
scene.add(new THREE.Mesh(new THREE.BoxGeometry(1, 1, 1), new THREE.MeshBasicMaterial()));
out("three", `three r${THREE.REVISION} children ${scene.children.length}`);

const app = createApp({
  setup() { const n = ref(41); return () => vh("i", { id: "vue" }, `vue ${n.value + 1}`); },
});
app.mount("#vue-root");
"""


@pytest.fixture(scope="module")
def real_registry_app() -> Iterator[str]:
    installed_bundler()
    require_binary("chromium")
    registry = pick_registry(None, os.environ)
    require(registry is not None, "no npm registry is configured on this machine")
    with tempfile.TemporaryDirectory(prefix="assetgate-esm-") as folder:
        root = Path(folder)
        settings = Settings(
            root=root,
            store=root / "store",
            result_cache_dir=root / "results",
            work_dir=root,
            npm_registry=registry,
            upstream_timeout_s=30.0,
            render_queue_wait_s=120.0,
        )
        with live_server(settings) as base:
            yield base


def show(base: str, packages: list[str], module: str) -> tuple[dict[str, object], object]:
    """The import map for ``packages``, and a Chromium page running ``module`` with it."""
    query = "&".join(f"pkg={p}" for p in packages)
    response = httpx.get(f"{base}/npm/importmap?{query}", timeout=240)
    assert response.status_code == 200, response.text
    import_map = response.json()
    page_html = (
        "<!doctype html><meta charset=utf-8><div id=root></div><div id=preact-root></div>"
        "<div id=chart></div><div id=vue-root></div>"
        f'<script type="importmap">{json.dumps(import_map)}</script>'
        f'<script type="module">{module}</script>'
    )
    return import_map, page_html


def run_page(
    base: str, page_html: str, expect_texts: dict[str, str], counts: dict[str, int] | None = None
) -> list[str]:
    from playwright.sync_api import expect, sync_playwright

    errors: list[str] = []
    loaded: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=require_binary("chromium"), args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("requestfinished", lambda r: loaded.append(r.url))
            # The page itself on the service's origin (so it may load the modules), from here.
            page.route(
                f"{base}/esm-test-page",
                lambda route: route.fulfill(body=page_html, content_type="text/html"),
            )
            page.goto(f"{base}/esm-test-page")
            for element, text in expect_texts.items():
                expect(page.locator(f"#{element}")).to_have_text(text, timeout=60_000)
            for selector, count in (counts or {}).items():
                expect(page.locator(selector)).to_have_count(count)
        finally:
            browser.close()
    assert errors == []
    return loaded


def test_react_and_react_dom_client_render_with_one_react(real_registry_app: str) -> None:
    base = real_registry_app
    import_map, page_html = show(base, ["react@^18", "react-dom@18.3.1/client"], REACT)
    imports = import_map["imports"]
    assert isinstance(imports, dict)
    assert imports["react"] == f"{base}/npm/react@18.3.1/+esm"  # the range, pinned
    assert imports["react-dom/client"] == f"{base}/npm/react-dom@18.3.1/client/+esm"
    assert imports["scheduler"].startswith(f"{base}/npm/scheduler@0.23.")  # transitive, pinned
    integrity = import_map["integrity"]
    assert isinstance(integrity, dict)
    assert set(integrity) == set(imports.values())
    # A hook that runs three effects: with two copies of React the first useState throws.
    loaded = run_page(base, page_html, {"react": "react 18.3.1 count 3"})
    react_loads = [u for u in loaded if "/npm/react@" in u]
    assert react_loads == [f"{base}/npm/react@18.3.1/+esm"]


def test_preact_htm_lodash_d3_three_and_vue_work_in_the_browser(real_registry_app: str) -> None:
    base = real_registry_app
    wanted = [
        "preact@10",
        "preact@10/hooks",
        "htm@3",
        "lodash-es@4",
        "d3@7",
        "three@0.170.0",
        "vue@3",
    ]
    import_map, page_html = show(base, wanted, OTHERS)
    imports = import_map["imports"]
    assert isinstance(imports, dict)
    assert imports["d3-scale"].startswith(f"{base}/npm/d3-scale@4.")  # d3's own modules
    assert "@vue/runtime-dom" in imports
    run_page(
        base,
        page_html,
        {
            "preact": "preact htm",
            "lodash": "lodash 6",
            "d3": "d3 50 6",
            "three": "three r170 children 1",
            "vue": "vue 42",
        },
        {"#chart svg rect": 3, "#preact-root b": 1},
    )


PREACT_HTM = """
import { render } from "preact";
import { useState } from "preact/hooks";
import { html } from "htm/preact";
function Hello() { const [who] = useState("hooks"); return html`<b id="preact">preact ${who}</b>`; }
render(html`<${Hello} />`, document.getElementById("preact-root"));
"""


def test_a_listed_package_brings_its_exported_subpaths_and_an_undeclared_peer_stays_bare(
    real_registry_app: str,
) -> None:
    """``pkg=react@18&pkg=react-dom@18`` maps ``react-dom/client`` (the entry every tutorial
    imports), ``preact`` brings ``preact/hooks``, and ``htm/preact``'s import of ``preact`` (no
    dependency of htm) stays bare, for the same map to resolve to the one preact."""
    base = real_registry_app
    import_map, page_html = show(base, ["react@18", "react-dom@18"], REACT)
    imports = import_map["imports"]
    assert isinstance(imports, dict)
    assert imports["react-dom/client"] == f"{base}/npm/react-dom@18.3.1/client/+esm"
    assert "react/jsx-runtime" in imports
    assert "react-dom/server.node" not in imports  # node only: not offered to browsers
    run_page(base, page_html, {"react": "react 18.3.1 count 3"})

    import_map, page_html = show(base, ["preact@10", "htm@3"], PREACT_HTM)
    imports = import_map["imports"]
    assert isinstance(imports, dict)
    assert imports["preact/hooks"].startswith(f"{base}/npm/preact@10.")
    assert imports["htm/preact"].startswith(f"{base}/npm/htm@3.")
    loaded = run_page(base, page_html, {"preact": "preact hooks"})
    entries = {
        u for u in loaded if "/npm/preact@" in u and u.endswith("/+esm") and u.count("/") == 5
    }
    assert entries == {imports["preact"]}  # one preact, for the page, the hooks and htm
