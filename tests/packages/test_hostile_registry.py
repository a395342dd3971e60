"""Issue 24, item 9: a registry document with hostile version strings, from a loopback registry.

A version or dist-tag holding CR/LF or non-Latin-1 characters once went raw into
``X-Resolved-Version``: the client got an empty reply while the log said 302. Such entries are
dropped when the document arrives; the clean versions beside them still resolve.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.packages.upstream import Registry, json_reply

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
