"""POST /admin/purge on two nodes sharing SeaweedFS and Redis (real servers on loopback)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import obstore
import pytest

from assetgate.settings import Settings
from tests.conftest import RedisServer, app_client
from tests.sources.images import BLUE, RED, quadrant_bmp, solid_bmp
from tests.sources.servers import Seaweed, metric

pytestmark = pytest.mark.anyio

TOKEN = "purge-token-for-tests-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
VARIANT = "/a.bmp?width=40&format=webp"
OTHER = "/b.bmp?width=40&format=webp"


@pytest.fixture
def node(
    make_settings: Callable[..., Settings],
    tmp_path: Path,
    weed: Seaweed,
    bucket: str,
    redis_server: RedisServer,
) -> Callable[..., Settings]:
    """Settings for one node: the bucket's img/ as its root, results shared through the bucket
    and Redis, its own disk caches."""

    def build(name: str, **overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "root": f"s3://{bucket}/img",
            "s3_endpoint_url": weed.endpoint,
            "s3_path_style": True,
            "source_cache_dir": tmp_path / f"sources-{name}",
            "result_cache_dir": tmp_path / f"results-{name}",
            "result_store": f"s3://{bucket}/results",
            "result_store_key": "the nodes' shared result-store secret",
            "redis_url": redis_server.url,
            "admin_token": TOKEN,
        }
        return make_settings(**{**values, **overrides})

    return build


async def _stored(weed: Seaweed, bucket: str) -> set[str]:
    listed = await obstore.list(weed.store(bucket), prefix="results/").collect_async()
    return {str(item["path"]) for item in listed}


async def _until_stored(weed: Seaweed, bucket: str, count: int) -> set[str]:
    """Node A's background writes have landed (they never delay its answer)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = await _stored(weed, bucket)
        if len(found) >= count:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError("the result store never held what node A rendered")


async def _until(
    client: httpx.AsyncClient, url: str, status: int, within_s: float, **kwargs: Any
) -> httpx.Response:
    deadline = time.monotonic() + within_s
    while True:
        answer = await client.get(url, **kwargs)
        if answer.status_code == status or time.monotonic() >= deadline:
            return answer
        await asyncio.sleep(0.05)


def _files(root: Path) -> set[Path]:
    """The entries a node keeps on disk (not its temporary files, locks or purge bookmark)."""
    if not root.exists():
        return set()
    return {
        path
        for path in root.rglob("*")
        if path.is_file()
        and "tmp" not in path.relative_to(root).parts
        and not path.name.startswith(".")
    }


async def test_a_purge_through_one_node_empties_every_tier_on_both(
    node: Callable[..., Settings], weed: Seaweed, bucket: str, tmp_path: Path
) -> None:
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    weed.put(bucket, "img/b.bmp", solid_bmp())
    async with app_client(node("a")) as a, app_client(node("b")) as b:
        made = await a.get(VARIANT)
        assert made.status_code == 200
        assert made.headers["x-optimizer-cache"] == "MISS"
        of_a = await _until_stored(weed, bucket, 3)  # the variant, its alias, the fingerprint
        assert (await a.get(OTHER)).headers["x-optimizer-cache"] == "MISS"
        everything = await _until_stored(weed, bucket, 6)
        shared = await b.get(VARIANT)
        assert shared.status_code == 200
        assert shared.headers["x-optimizer-cache"] == "HIT"
        assert (await b.get("/a.bmp")).content == quadrant_bmp()  # B's own copy of the original
        assert (await b.get(OTHER)).headers["x-optimizer-cache"] == "HIT"
        # node C holds the variant and the original on its disk, then stops
        async with app_client(node("c")) as c:
            assert (await c.get(VARIANT)).headers["x-optimizer-cache"] == "HIT"
            assert (await c.get("/a.bmp")).status_code == 200
            deadline = time.monotonic() + 10
            while len(_files(tmp_path / "results-c")) < 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        held_by_c = _files(tmp_path / "results-c") | _files(tmp_path / "sources-c")
        assert len(held_by_c) >= 3  # the variant, the original's copy and its .meta

        obstore.delete(weed.store(bucket), "img/a.bmp")
        for refused in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            answer = await a.post("/admin/purge", json={"paths": ["/a.bmp"]}, headers=refused)
            assert answer.status_code == 401
            assert answer.json()["code"] == 401
            assert answer.headers["www-authenticate"] == "Bearer"
        assert await _stored(weed, bucket) == everything  # nothing purged
        assert (await b.get(VARIANT)).status_code == 200

        started = time.monotonic()
        purged = await a.post("/admin/purge", json={"paths": ["/a.bmp"]}, headers=AUTH)
        assert purged.status_code == 200, purged.text
        report = purged.json()
        assert report["paths"] == ["/a.bmp"]
        assert report["shared"] == {"store": 2, "redis": 0, "fingerprints": 1}
        assert len(report["nodes"]) == 2  # A and B answered; C is down
        assert report["nodes_not_answering"] == []
        assert sum(counts["memory"] for counts in report["nodes"].values()) >= 2
        assert sum(counts["copies"] for counts in report["nodes"].values()) == 2
        assert "path:/a.bmp" in report["tags"]
        for client in (a, b):
            for url in (VARIANT, "/a.bmp"):
                gone = await _until(client, url, 404, within_s=1.0)
                assert gone.status_code == 404, (url, gone.headers)
            stale = await client.get(VARIANT, headers={"If-None-Match": made.headers["etag"]})
            assert stale.status_code == 404  # never a 304 for a purged image
        assert time.monotonic() - started < 2.0
        assert await _stored(weed, bucket) == everything - of_a
        for client in (a, b):
            other = await client.get(OTHER)
            assert other.status_code == 200
            assert other.headers["x-optimizer-cache"] == "HIT"
        metrics = (await a.get("/metrics")).text
        assert metric(metrics, "assetgate_purges_total", result="done") == 1
        assert metric(metrics, "assetgate_purges_total", result="refused") == 3
        assert metric(metrics, "assetgate_purged_objects_total", tier="store") == 2
        assert metric(metrics, "assetgate_purged_objects_total", tier="fingerprints") == 1

        # C starts after the purge: the log is read before it answers, its disk forgets
        assert all(path.exists() for path in held_by_c)
        async with app_client(node("c")) as c:
            assert not any(path.exists() for path in held_by_c)
            assert (await c.get(VARIANT)).status_code == 404
            assert (await c.get(OTHER)).headers["x-optimizer-cache"] == "HIT"


async def test_a_replaced_image_is_rendered_again_and_a_prefix_reaches_every_path(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    weed.put(bucket, "img/set/a.bmp", quadrant_bmp())
    weed.put(bucket, "img/set/b.bmp", solid_bmp(BLUE))  # other bytes: other result keys
    async with app_client(node("a")) as a, app_client(node("b")) as b:
        first = await a.get("/set/a.bmp?width=40&format=png")
        assert (await a.get("/set/b.bmp?width=40&format=png")).status_code == 200
        await _until_stored(weed, bucket, 6)
        assert (await b.get("/set/a.bmp?width=40&format=png")).headers["x-optimizer-cache"] == "HIT"
        weed.put(bucket, "img/set/a.bmp", solid_bmp(RED))
        purged = await b.post("/admin/purge", json={"tags": ["dir:/set/"]}, headers=AUTH)
        assert purged.status_code == 200, purged.text
        assert purged.json()["paths"] == ["/set/a.bmp", "/set/b.bmp"]
        assert await _stored(weed, bucket) == set()
        for client in (a, b):
            again = await client.get("/set/a.bmp?width=40&format=png")
            assert again.status_code == 200
            assert again.headers["etag"] != first.headers["etag"]
            assert again.content != first.content


async def test_the_route_is_absent_without_a_token_and_checks_its_body(
    node: Callable[..., Settings], make_settings: Callable[..., Settings]
) -> None:
    async with app_client(make_settings()) as plain:
        for method in ("GET", "POST", "DELETE"):
            answer = await plain.request(method, "/admin/purge", headers=AUTH)
            assert answer.status_code == 404, method
            assert answer.json() == {"error": "not found", "code": 404}
    async with app_client(node("a")) as a:
        assert (await a.get("/admin/purge", headers=AUTH)).status_code == 405
        for body, param in (
            (b"[]", "body"),
            (b"{", "body"),
            (b"{}", "body"),
            (b'{"paths": "/a.bmp"}', "paths"),
            (b'{"paths": ["/a\\n.bmp"]}', "paths"),
            (b'{"everything": true}', "everything"),
        ):
            answer = await a.post("/admin/purge", content=body, headers=AUTH)
            assert answer.status_code == 400, body
            assert answer.json()["error"].startswith(f"{param}: "), answer.text
