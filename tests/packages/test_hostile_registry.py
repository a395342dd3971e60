"""Issue 24, item 9: hostile registry and library catalog answers, from loopback upstreams.

A version or dist-tag holding CR/LF or non-Latin-1 characters once went raw into
``X-Resolved-Version``: the client got an empty reply while the log said 302. Such entries are
dropped when the document arrives; the clean versions beside them still resolve.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from assetgate.packages import ingest
from assetgate.settings import Settings
from tests.conftest import app_client
from tests.encodings import gzip_bomb, peak_memory, stacked, stacked_bomb
from tests.errors import assert_json_error
from tests.packages.test_files_http import store_rows
from tests.packages.upstream import (
    FakeUpstream,
    LibraryCatalog,
    Registry,
    Reply,
    json_reply,
    sri512,
)

pytestmark = pytest.mark.anyio

HOSTILE = ["1.0.0\r\nX-Injected: 1", "1.0.0-\u0431\u0435\u0442\u0430", "1.0.0\n", " 1.0.0"]


def poison(registry: Registry, name: str) -> None:
    doc: dict[str, Any] = registry.docs[name]
    clean = doc["versions"]["0.9.0"]
    for version in HOSTILE:
        doc["versions"][version] = {**clean, "version": version}
    doc["dist-tags"] = {
        "latest": HOSTILE[0],
        "beta": HOSTILE[1],
        "stable": "0.9.0",
        "bad\r\nname": "0.9.0",
    }
    registry.upstream.routes[f"/{name}"] = json_reply(doc)


async def test_hostile_versions_and_tags_never_reach_a_header(
    npm: httpx.AsyncClient, registry: Registry
) -> None:
    registry.publish("poisoned", "0.9.0", {"index.js": b"export {}"})
    poison(registry, "poisoned")
    stable = await npm.get("/npm/poisoned@stable/index.js")
    assert stable.status_code == 302
    assert stable.headers["x-resolved-version"] == "0.9.0"
    ranged = await npm.get("/npm/poisoned@^1.0.0-0/index.js")  # would match the hostile ones
    assert ranged.status_code == 404
    assert ranged.headers["content-type"].startswith("application/json")
    for spec in ("latest", "beta", ""):
        response = await npm.get(f"/npm/poisoned@{spec}/index.js".replace("@/", "/"))
        for value in response.headers.values():
            assert "\r" not in value
            assert "\n" not in value
            assert value.isascii()
        # The dropped tags leave nothing to resolve: a JSON 404, or the highest clean version.
        if response.status_code == 302:
            assert response.headers["x-resolved-version"] == "0.9.0"
        else:
            assert response.status_code == 404
            assert "error" in response.json()
    meta = await npm.get("/npm/poisoned@0.9.0/?meta")
    assert meta.status_code == 200


async def test_library_files_without_a_catalog_sri(
    npm: httpx.AsyncClient, catalog: LibraryCatalog, tmp_path: Path
) -> None:
    """A script the catalog gives no hash for is refused; another file is served but no
    integrity is ever published for it (issue 24, item 9)."""
    png = b"\x89PNG\r\n\x1a\nnot really"
    files = {"x.min.js": b"x()", "x.css": b".x{}", "logo.png": png, "ok.js": b"ok()"}
    catalog.add("nosri", "1.0.0", files, sri={"ok.js": sri512(b"ok()")})
    for path in ("x.min.js", "x.css"):
        refused = await npm.get(f"/npm/lib/nosri@1.0.0/{path}")
        assert refused.status_code == 502
        assert refused.json()["error"] == (
            f"library catalog: no integrity value for {path}; a script or style sheet"
            " is not served unverified"
        )
    assert store_rows(tmp_path / "store", "files") == 0
    image = await npm.get("/npm/lib/nosri@1.0.0/logo.png")
    assert image.status_code == 200
    assert image.content == png
    unvouched = await npm.get("/npm/lib/nosri@1.0.0/logo.png?sri")
    assert unvouched.status_code == 404
    assert "integrity" not in unvouched.json()
    assert unvouched.json()["error"] == "no integrity: the library catalog publishes none for it"
    vouched = await npm.get("/npm/lib/nosri@1.0.0/ok.js?sri")
    assert vouched.status_code == 200
    assert vouched.json()["integrity"] == sri512(b"ok()")


# --- issue 35, item 2: content codings from the registry and the catalog ----------------------


async def test_stacked_codings_from_the_registry_are_refused(
    npm: httpx.AsyncClient, registry: Registry, upstream: FakeUpstream
) -> None:
    registry.publish("stack", "1.0.0", {"index.js": b"export {}"})
    doc = json.dumps(registry.docs["stack"]).encode()
    upstream.routes["/stack"] = Reply(stacked(doc), headers={"Content-Encoding": "gzip, gzip"})
    refused = await npm.get("/npm/stack@^1/index.js")
    assert_json_error(refused, 502, "registry: upstream sent more than one content coding")
    registry.publish("onegzip", "1.0.0", {"index.js": b"export {}"})
    doc = json.dumps(registry.docs["onegzip"]).encode()
    upstream.routes["/onegzip"] = Reply(gzip.compress(doc), headers={"Content-Encoding": "gzip"})
    served = await npm.get("/npm/onegzip@1.0.0/index.js")  # one coding is what HTTP allows
    assert served.status_code == 200
    assert served.content == b"export {}"


async def test_a_registry_bomb_is_capped_on_decoded_bytes(
    pkg_settings: Callable[..., Settings], registry: Registry, upstream: FakeUpstream
) -> None:
    registry.publish("bomb", "1.0.0", {"index.js": b"export {}"})
    upstream.routes["/bomb"] = Reply(stacked_bomb(), headers={"Content-Encoding": "gzip, gzip"})
    upstream.routes["/bomb2"] = Reply(gzip_bomb(), headers={"Content-Encoding": "gzip"})
    async with app_client(pkg_settings(packument_max_bytes=1024 * 1024)) as client:
        with peak_memory() as peak:
            stacked_answer = await client.get("/npm/bomb@^1/index.js")
            bomb_answer = await client.get("/npm/bomb2@^1/index.js")
    assert_json_error(stacked_answer, 502, "more than one content coding")
    assert_json_error(bomb_answer, 502, "larger than ASSETGATE_PACKUMENT_MAX_BYTES")
    assert peak[0] < 16 * 1024 * 1024  # each decoded step is small; nothing whole is kept


async def test_stacked_codings_from_the_search_catalogs_are_a_warning(
    npm: httpx.AsyncClient, registry: Registry, catalog: LibraryCatalog, upstream: FakeUpstream
) -> None:
    registry.add_search("lodash", "4.17.21", "Lodash.")
    catalog.add("lodashlib", "1.0.0", {"l.js": b"l()"})
    answer = json.dumps({"objects": registry.search_objects, "total": 1, "time": "now"})
    upstream.routes["/-/v1/search"] = Reply(
        stacked(answer.encode()), headers={"Content-Encoding": "gzip, gzip"}
    )
    found = await npm.get("/npm/search", params={"q": "lodash"})
    assert found.status_code == 200
    body = found.json()
    assert [hit["name"] for hit in body["results"]] == ["lodashlib"]
    assert len(body["warnings"]) == 1
    assert "npm" in body["warnings"][0]


# --- issue 35, item 8: a huge package document is resolved off the event loop -----------------


async def test_a_range_over_many_versions_is_resolved_off_the_event_loop(
    npm: httpx.AsyncClient, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A range whose answer is not ``latest`` scans every version: with 290k versions that held
    the event loop 6-7 s (``/healthz`` waited). The scan now runs on a worker thread."""
    registry.publish("many", "1.0.0", {"index.js": b"one"})
    doc: dict[str, Any] = registry.docs["many"]
    first = doc["versions"]["1.0.0"]
    for minor in range(2000):
        version = f"2.{minor}.0"
        doc["versions"][version] = {**first, "version": version}
    doc["dist-tags"]["latest"] = "2.1999.0"
    registry.upstream.routes["/many"] = json_reply(doc)
    scanned_on: list[str] = []
    original = ingest.resolve_version

    def watched(packument: Any, spec: str) -> str | None:
        scanned_on.append(threading.current_thread().name)
        return original(packument, spec)

    monkeypatch.setattr(ingest, "resolve_version", watched)
    answer = await npm.get("/npm/many@^1.0.0/index.js")
    assert answer.status_code == 302
    assert answer.headers["x-resolved-version"] == "1.0.0"
    assert scanned_on
    assert threading.main_thread().name not in scanned_on  # was the event loop's thread
    latest = await npm.get("/npm/many@^2.0.0/index.js")  # latest satisfies: no scan at all
    assert latest.headers["x-resolved-version"] == "2.1999.0"
    assert len(scanned_on) == 1
