"""Issue 35, items 4, 9, 10 and 11: ES module builds under attack, through the real app, the real
bundler and a loopback registry.

A slow build is a real one: ``ASSETGATE_ESM_NODE`` names a wrapper that notes its start, sleeps,
then runs node, so a build holds its place exactly as long as a test needs (the 3,000 CommonJS
files of the report took 20 s of esbuild; the wrapper stands for them without the CPU).
"""

from __future__ import annotations

import asyncio
import io
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from PIL import Image

from assetgate.packages.esm import importmap
from assetgate.settings import Settings
from tests.conftest import app_client, live_server
from tests.errors import assert_json_error
from tests.packages.esm_support import installed_bundler
from tests.packages.test_esm_http import esm_rows, processes_working_in
from tests.packages.upstream import Registry

pytestmark = pytest.mark.anyio


def slow_node(folder: Path, seconds: float) -> tuple[str, Path]:
    """A ``node`` that sleeps ``seconds`` first; the file it notes each start in."""
    node = shutil.which("node")
    assert node is not None
    launches = folder / "launches"
    wrapper = folder / "slow-node"
    wrapper.write_text(
        f'#!/bin/sh\necho start >> "{launches}"\nsleep {seconds}\nexec {node} "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper), launches


def started(launches: Path) -> int:
    return len(launches.read_text().splitlines()) if launches.exists() else 0


async def until(check: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


def publish_plain(registry: Registry, name: str, files: dict[str, bytes] | None = None) -> None:
    registry.publish(
        name,
        "1.0.0",
        files or {"index.mjs": b"export default 1;\n", "b.mjs": b"export default 2;\n"},
        manifest={"main": "index.mjs", "exports": {".": "./index.mjs", "./b": "./b.mjs"}},
    )


# --- item 4: builds have their own pool, stop when nobody waits, and costly failures stick ----


async def test_a_slow_build_leaves_the_render_threads_to_images(
    pkg_settings: Callable[..., Settings], registry: Registry, tmp_path: Path, docroot: Path
) -> None:
    installed_bundler()
    node, launches = slow_node(tmp_path, 30)
    publish_plain(registry, "slow")
    Image.new("RGB", (64, 48), (200, 10, 10)).save(docroot / "red.png")
    settings = pkg_settings(
        esm_node=node,
        esm_build_timeout_s=60,
        render_workers=1,
        render_queue_wait_s=2,
        esm_build_workers=1,
    )
    async with app_client(settings) as client:
        building = asyncio.create_task(client.get("/npm/slow@1.0.0/+esm"))
        await until(lambda: started(launches) == 1)
        image = await client.get("/red.png?width=32&format=png")
        assert image.status_code == 200, image.text  # was a 503: the build held the thread
        assert Image.open(io.BytesIO(image.content)).size == (32, 24)
        building.cancel()
        await asyncio.gather(building, return_exceptions=True)
        await until(lambda: processes_working_in(tmp_path / "store") == [])


async def test_a_build_stops_when_its_client_leaves(
    pkg_settings: Callable[..., Settings], registry: Registry, tmp_path: Path
) -> None:
    installed_bundler()
    node, launches = slow_node(tmp_path, 30)
    publish_plain(registry, "left")
    with live_server(pkg_settings(esm_node=node, esm_build_timeout_s=60)) as base:
        async with httpx.AsyncClient(base_url=base, timeout=20) as client:
            with pytest.raises(httpx.ReadTimeout):
                await client.get("/npm/left@1.0.0/+esm", timeout=3)  # waits, then leaves
            assert started(launches) == 1
            # The client is gone: its build is killed, not run to its end for nobody, and its
            # folder removed.
            await until(lambda: processes_working_in(tmp_path / "store") == [], 10)
            await until(lambda: list((tmp_path / "store" / "tmp").glob("esm-*")) == [], 10)
            assert esm_rows(tmp_path / "store") == 0
            assert (await client.get("/healthz")).status_code == 200


async def test_a_build_past_its_deadline_is_remembered_for_the_package_version(
    pkg_settings: Callable[..., Settings], registry: Registry, tmp_path: Path
) -> None:
    installed_bundler()
    node, launches = slow_node(tmp_path, 30)
    publish_plain(registry, "heavy")
    async with app_client(pkg_settings(esm_node=node, esm_build_timeout_s=1)) as client:
        first = await client.get("/npm/heavy@1.0.0/+esm")
        assert_json_error(first, 504, "ASSETGATE_ESM_BUILD_TIMEOUT_S", "heavy")
        for subpath in ("b/", "index.mjs/", "b.mjs/"):
            again = await client.get(f"/npm/heavy@1.0.0/{subpath}+esm")
            assert_json_error(again, 504, "ASSETGATE_ESM_BUILD_TIMEOUT_S")
    assert started(launches) == 1  # each new subpath used to cost another full deadline


# --- item 9: only what the module imports is pinned ------------------------------------------


async def test_declared_dependencies_never_imported_are_never_fetched(
    pkg_settings: Callable[..., Settings], registry: Registry, tmp_path: Path
) -> None:
    installed_bundler()
    registry.publish("used", "1.2.0", {"index.mjs": b"export const u = 'used';\n"},
                     manifest={"main": "index.mjs"})  # fmt: skip
    declared = {f"never-{i}": "^1.0.0" for i in range(511)}  # the report's 512 with "used"
    registry.publish(
        "wide",
        "1.0.0",
        {"index.mjs": b"import { u } from 'used';\nexport default u + '!';\n"},
        manifest={"main": "index.mjs", "dependencies": {**declared, "used": "^1.0.0"}},
    )
    async with app_client(pkg_settings()) as client:
        answer = await client.get("/npm/wide@1.0.0/+esm")
    hits = registry.upstream.hits
    assert len([path for path in hits if path.startswith("/never-")]) == 0  # were 511 fetches
    assert hits["/used"] == 1
    assert answer.status_code == 200, answer.text
    assert b'"/npm/used@1.2.0/+esm"' in answer.content
    assert b"pending-" not in answer.content


async def test_an_imported_dependency_that_cannot_be_pinned_is_named(
    pkg_settings: Callable[..., Settings], registry: Registry
) -> None:
    installed_bundler()
    registry.publish(
        "orphan",
        "1.0.0",
        {"index.mjs": b"import g from 'gone';\nexport default g;\n"},
        manifest={"main": "index.mjs", "dependencies": {"gone": "^2.0.0"}},
    )
    async with app_client(pkg_settings()) as client:
        answer = await client.get("/npm/orphan@1.0.0/+esm")
    assert_json_error(
        answer, 502, "cannot build orphan@1.0.0 as an ES module: dependency gone@^2.0.0"
    )


# --- item 11: a bare import's subpath stays inside its package ------------------------------


@pytest.mark.parametrize(
    "specifier",
    [
        "dep/../../../dep@latest/index.js",
        "dep/../../api/whois/json?domain=example.com&x=",
        "dep/index.js?x=1",
        "dep/index.js#x",
        "dep/%2e%2e/x",
        "dep/a\\\\..\\\\b",
        "wide-self/../../x@latest",
        "undeclared/../../x@latest/y.js",  # a bare name left to the page's map, climbing out
    ],
)
async def test_an_import_leaving_its_package_fails_the_build(
    pkg_settings: Callable[..., Settings], registry: Registry, tmp_path: Path, specifier: str
) -> None:
    installed_bundler()
    registry.publish(
        "dep", "1.0.0", {"index.js": b"exports.x = 1;\n"}, manifest={"main": "index.js"}
    )
    registry.publish(
        "wide-self",
        "1.0.0",
        {"index.mjs": f"import x from {specifier!r};\nexport default x;\n".encode()},
        manifest={"main": "index.mjs", "dependencies": {"dep": "^1.0.0"}},
    )
    async with app_client(pkg_settings()) as client:
        answer = await client.get("/npm/wide-self@1.0.0/+esm")
    body = assert_json_error(answer, 502, "cannot build wide-self@1.0.0 as an ES module: ")
    assert "leaves the package" in str(body["error"])
    assert esm_rows(tmp_path / "store") == 0


async def test_a_bare_import_subpath_is_normalised(
    pkg_settings: Callable[..., Settings], registry: Registry
) -> None:
    installed_bundler()
    registry.publish(
        "dep", "1.0.0", {"lib/a.js": b"exports.x = 1;\n"}, manifest={"main": "lib/a.js"}
    )
    registry.publish(
        "tidy",
        "1.0.0",
        {"index.mjs": b"import a from 'dep/./lib//a.js';\nexport default a;\n"},
        manifest={"main": "index.mjs", "dependencies": {"dep": "^1.0.0"}},
    )
    async with app_client(pkg_settings()) as client:
        answer = await client.get("/npm/tidy@1.0.0/+esm")
    assert answer.status_code == 200, answer.text
    assert b'"/npm/dep@1.0.0/lib/a.js/+esm"' in answer.content


# --- item 10: import maps count before building and have a deadline ---------------------------


def publish_chain(registry: Registry, length: int) -> None:
    for i in range(length):
        imports = f"import n from 'c{i + 1}';\nexport default [n];\n" if i + 1 < length else ""
        registry.publish(
            f"c{i}",
            "1.0.0",
            {"index.mjs": (imports or "export default [];\n").encode()},
            manifest={
                "main": "index.mjs",
                "dependencies": {f"c{i + 1}": "1.0.0"} if i + 1 < length else {},
            },
        )


async def test_an_import_map_too_deep_is_refused_before_its_builds(
    pkg_settings: Callable[..., Settings],
    registry: Registry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    installed_bundler()
    monkeypatch.setattr(importmap, "MAX_DEPTH", 3, raising=False)  # 32 in service
    publish_chain(registry, 8)
    async with app_client(pkg_settings()) as client:
        answer = await client.get("/npm/importmap", params={"pkg": "c0@1.0.0"})
    assert_json_error(answer, 400, "pkg", "at most 3 levels deep")
    assert esm_rows(tmp_path / "store") == 2 * 4  # c0..c3 built (module + import list), no more
    assert registry.upstream.hits["/c5"] == 0


async def test_an_import_map_has_a_deadline(
    pkg_settings: Callable[..., Settings], registry: Registry, tmp_path: Path
) -> None:
    installed_bundler()
    node, launches = slow_node(tmp_path, 30)
    publish_plain(registry, "late")
    settings = pkg_settings(esm_node=node, esm_build_timeout_s=60, importmap_timeout_s=1)
    async with app_client(settings) as client:
        started_at = time.monotonic()
        answer = await client.get("/npm/importmap", params={"pkg": "late@1.0.0"})
        elapsed = time.monotonic() - started_at
        assert_json_error(answer, 504, "ASSETGATE_IMPORTMAP_TIMEOUT_S")
        assert answer.headers["cache-control"] == "no-store"
        assert elapsed < 10
        # Nobody else waited for the build: it is stopped too.
        await until(lambda: processes_working_in(tmp_path / "store") == [], 10)
    assert started(launches) == 1
