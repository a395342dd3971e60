"""Issue 24, item 9: hostile registry and library catalog answers, from loopback upstreams.

A version or dist-tag holding CR/LF or non-Latin-1 characters once went raw into
``X-Resolved-Version``: the client got an empty reply while the log said 302. Such entries are
dropped when the document arrives; the clean versions beside them still resolve.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.packages.test_files_http import store_rows
from tests.packages.upstream import LibraryCatalog, Registry, json_reply, sri512

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
