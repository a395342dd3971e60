"""The page's own headers, the OpenAPI entries, and single flight across two app instances."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.packages.upstream import FakeUpstream, Registry

pytestmark = pytest.mark.anyio


async def test_page_headers_and_assets(npm: httpx.AsyncClient) -> None:
    page = await npm.get("/npm")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src 'self'" in csp
    assert "connect-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert b'src="/npm/_assets/search.js"' in page.content
    again = await npm.get("/npm", headers={"If-None-Match": page.headers["etag"]})
    assert again.status_code == 304
    assert (await npm.get("/npm/")).status_code == 200
    script = await npm.get("/npm/_assets/search.js")
    assert script.headers["content-type"] == "application/javascript; charset=utf-8"
    assert b"textContent" in script.content
    assert b".innerHTML" not in script.content
    assert (await npm.get("/npm/_assets/search.html")).status_code == 404
    assert (await npm.get("/npm/_assets/../search.js")).status_code == 404
    assert (await npm.post("/npm")).status_code == 405


async def test_openapi_declares_the_package_routes(npm: httpx.AsyncClient) -> None:
    paths = (await npm.get("/openapi.json")).json()["paths"]
    search = paths["/npm/search"]["get"]
    params = {p["name"]: p for p in search["parameters"]}
    assert params["q"]["schema"]["minLength"] == 2
    assert params["q"]["schema"]["maxLength"] == 80
    assert (params["limit"]["schema"]["minimum"], params["limit"]["schema"]["maximum"]) == (1, 20)
    assert params["limit"]["schema"]["default"] == 12
    assert set(search["responses"]) >= {"200", "400", "405", "502"}
    assert "/npm" in paths
    assert "/npm/{package}@{version}/" in paths
    assert "/npm/lib/{library}@{version}/{path}" in paths


async def test_two_app_instances_on_one_store_download_once(
    pkg_settings: Callable[..., Settings], registry: Registry, upstream: FakeUpstream
) -> None:
    """Each instance has its own in-process single flight; the store's flock makes the second
    one wait and then find the version committed by the first (as two worker processes do)."""
    registry.publish("shared", "1.0.0", {"index.js": b"shared"}, delay_s=0.4)
    settings = pkg_settings()
    async with app_client(settings) as one, app_client(settings) as two:
        replies = await asyncio.gather(
            one.get("/npm/shared@1.0.0/index.js"), two.get("/npm/shared@1.0.0/index.js")
        )
    assert [r.content for r in replies] == [b"shared", b"shared"]
    assert upstream.hits[registry.tarball_path("shared", "1.0.0")] == 1
