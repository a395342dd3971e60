"""Images from an origin web server on loopback, and every way an origin fetch is refused."""

from __future__ import annotations

import asyncio
import gzip
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.encodings import gzip_bomb, peak_memory, stacked
from tests.errors import assert_json_error
from tests.sources.images import RED, near, pixel, quadrant_bmp, size_of
from tests.sources.servers import Origin, endless, metric, redirect_to, stalled, status
from tests.waiting import wait_until_async

pytestmark = pytest.mark.anyio


@pytest.fixture
def node(
    make_settings: Callable[..., Settings], tmp_path: Path, origin: Origin
) -> Callable[..., Settings]:
    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "root": f"{origin.base}/static",
            "origin_allow_private": True,  # the test's origin is on loopback
            "source_read_timeout_s": 2.0,
            "source_cache_dir": tmp_path / "sources",
        }
        return make_settings(**{**values, **overrides})

    return build


async def test_an_origin_file_is_served_transformed(
    node: Callable[..., Settings], origin: Origin
) -> None:
    origin.file("/static/photos/q.bmp", quadrant_bmp())
    async with app_client(node(source_ttl_s=0)) as client:
        first = await client.get("/photos/q.bmp?width=32&format=png")
        assert first.status_code == 200, first.text
        assert size_of(first.content) == (32, 24)
        assert near(pixel(first.content, 4, 4), RED)
        second = await client.get("/?file=photos/q.bmp&width=32&format=png")
        assert second.headers["etag"] == first.headers["etag"]
    assert origin.hits == ["/static/photos/q.bmp"] * 2
    assert "If-None-Match" in origin.headers[1]  # the second was a conditional GET (ttl 0)


async def test_an_origin_404_is_a_404_and_a_5xx_a_502_naming_the_source(
    node: Callable[..., Settings], origin: Origin
) -> None:
    origin.routes["/static/broken.bmp"] = status(503)
    async with app_client(node()) as client:
        missing = await client.get("/missing.bmp?width=10")
        broken = await client.get("/broken.bmp?width=10")
    assert missing.status_code == 404
    assert missing.json()["error"] == "not found"
    assert broken.status_code == 502
    assert broken.json() == {"error": "source /: answered 503", "code": 502}


async def test_a_redirect_to_another_origin_is_not_followed(
    node: Callable[..., Settings], origin: Origin, canary: Origin
) -> None:
    origin.routes["/static/moved.bmp"] = redirect_to(f"{canary.base}/x.bmp")
    async with app_client(node()) as client:
        answer = await client.get("/moved.bmp?width=10")
    assert answer.status_code == 502
    assert answer.json()["error"] == "source /: redirected to another origin (not followed)"
    assert canary.base not in answer.text
    # the canary fixture asserts it was never reached


async def test_a_same_origin_redirect_is_followed(
    node: Callable[..., Settings], origin: Origin
) -> None:
    origin.routes["/static/old.bmp"] = redirect_to("/static/new.bmp")
    origin.file("/static/new.bmp", quadrant_bmp())
    async with app_client(node()) as client:
        answer = await client.get("/old.bmp?width=16&format=png")
    assert answer.status_code == 200
    assert origin.hits == ["/static/old.bmp", "/static/new.bmp"]


async def test_a_private_address_is_refused_unless_allowed(
    node: Callable[..., Settings], origin: Origin
) -> None:
    origin.file("/static/q.bmp", quadrant_bmp())
    for host in ("127.0.0.1", "localhost"):
        root = origin.base.replace("127.0.0.1", host) + "/static"
        async with app_client(node(root=root, origin_allow_private=False)) as client:
            answer = await client.get("/q.bmp?width=10")
            ready = await client.get("/readyz")
        assert answer.status_code == 502
        assert answer.json()["error"] == (
            "source /: refused: it resolves to a private or reserved address "
            "(ASSETGATE_ORIGIN_ALLOW_PRIVATE=true allows it)"
        )
        assert ready.json()["checks"]["source /"] == (
            "refused (address not allowed: ASSETGATE_ORIGIN_ALLOW_PRIVATE)"
        )
        assert "127.0.0.1" not in answer.text + ready.text
    assert origin.hits == []


@pytest.mark.parametrize("literal", ["[::127.0.0.1]", "[::ffff:0:7f00:1]", "[64:ff9b::7f00:1]"])
async def test_ipv6_forms_of_loopback_are_refused_before_any_connection(
    node: Callable[..., Settings], origin: Origin, literal: str
) -> None:
    """Issue 35, item 12: the IPv4-compatible and SIIT forms of 127.0.0.1 passed the guard and a
    connection was attempted (answered "unreachable")."""
    root = origin.base.replace("127.0.0.1", literal) + "/static"
    async with app_client(node(root=root, origin_allow_private=False)) as client:
        answer = await client.get("/q.bmp?width=10")
    assert answer.status_code == 502
    assert answer.json()["error"] == (
        "source /: refused: it resolves to a private or reserved address"
        " (ASSETGATE_ORIGIN_ALLOW_PRIVATE=true allows it)"
    )


@pytest.mark.parametrize("declared", [None, 200 * 1024 * 1024])
async def test_a_huge_body_is_a_413_without_reading_the_rest(
    node: Callable[..., Settings], origin: Origin, declared: int | None
) -> None:
    origin.routes["/static/huge.bmp"] = endless(declared=declared)
    async with app_client(node(max_source_bytes=1024 * 1024)) as client:
        started = time.monotonic()
        answer = await client.get("/huge.bmp?width=10")
        elapsed = time.monotonic() - started
    assert answer.status_code == 413
    assert answer.json()["error"] == "source file is over the limit of 1048576 bytes"
    assert elapsed < 5
    assert list((node().source_cache_dir).rglob("*.part")) == []  # nothing half-written left


async def test_a_stalled_origin_is_a_504_in_bounded_time(
    node: Callable[..., Settings], origin: Origin
) -> None:
    origin.routes["/static/slow.bmp"] = stalled(10)
    async with app_client(node(source_read_timeout_s=1.0)) as client:
        started = time.monotonic()
        answer = await client.get("/slow.bmp?width=10")
        elapsed = time.monotonic() - started
    assert answer.status_code == 504
    assert answer.json() == {"error": "source /: no answer within 1 s", "code": 504}
    assert elapsed < 6  # the 1 s read deadline with a margin, not the 10 s stall


async def test_a_refused_connection_is_a_502(
    node: Callable[..., Settings], free_port: Callable[[], int]
) -> None:
    async with app_client(node(root=f"http://127.0.0.1:{free_port()}")) as client:
        answer = await client.get("/a.bmp?width=10")
    assert answer.status_code == 502
    assert answer.json() == {"error": "source /: unreachable", "code": 502}


async def test_mounts_pick_the_longest_prefix(
    node: Callable[..., Settings], origin: Origin, docroot: Path
) -> None:
    origin.file("/static/q.bmp", quadrant_bmp())
    (docroot / "local.bmp").write_bytes(quadrant_bmp())
    sources = {"remote/": f"{origin.base}/static", "": str(docroot)}
    async with app_client(node(sources=sources)) as client:
        remote = await client.get("/remote/q.bmp?width=16&format=png")
        local = await client.get("/local.bmp?width=16&format=png")
        missing = await client.get("/q.bmp?width=16")
        folder = await client.get("/?file=remote/&width=16")
    assert remote.status_code == 200
    assert local.status_code == 200
    assert remote.headers["etag"] == local.headers["etag"]  # same content, same ETag
    assert missing.status_code == 404
    assert folder.status_code == 404
    assert origin.hits == ["/static/q.bmp"]


async def test_the_hot_lane_replays_a_remote_copy_only_while_it_is_fresh(
    node: Callable[..., Settings], origin: Origin
) -> None:
    origin.file("/static/q.bmp", quadrant_bmp())
    url = "/q.bmp?width=16&format=png"
    ttl_s = 6.0  # the 3 requests below fit in what is left of it after 2.1 s, however busy
    async with app_client(node(source_ttl_s=ttl_s)) as client:
        asked = time.monotonic()
        first = await client.get(url)
        assert first.status_code == 200
        await asyncio.sleep(2.1)  # past the racy-timestamp window: the version is remembered
        for _ in range(3):
            assert (await client.get(url)).status_code == 200
        lane = metric((await client.get("/metrics")).text, "assetgate_hot_lane_answers_total")
        assert lane >= 1
        assert origin.hits == ["/static/q.bmp"]

        async def revalidated() -> httpx.Response | None:
            """Once the copy is due the lane steps aside and the route asks the origin."""
            answer = await client.get(url)
            return answer if len(origin.hits) == 2 else None

        again = await wait_until_async(revalidated, timeout=ttl_s + 10, interval=0.2)
        assert time.monotonic() - asked >= ttl_s  # not before the copy was due
        assert again.status_code == 200
        assert again.headers["etag"] == first.headers["etag"]
    assert origin.hits == ["/static/q.bmp"] * 2
    assert "If-None-Match" in origin.headers[1]


async def test_presets_hold_for_an_origin(
    node: Callable[..., Settings], origin: Origin, tmp_path: Path
) -> None:
    presets = tmp_path / "presets.json"
    presets.write_text('{"thumb": {"w": 20, "format": "png"}}')
    origin.file("/static/q.bmp", quadrant_bmp())
    async with app_client(node(presets=presets)) as client:
        thumb = await client.get("/q.bmp?preset=thumb")
        unknown = await client.get("/q.bmp?preset=nope")
    assert thumb.status_code == 200
    assert thumb.headers["content-type"] == "image/png"
    assert size_of(thumb.content) == (20, 15)
    assert unknown.status_code == 400


async def test_an_origin_going_down_serves_the_copy_it_holds(
    node: Callable[..., Settings], origin: Origin
) -> None:
    origin.file("/static/q.bmp", quadrant_bmp())
    async with app_client(node(source_ttl_s=0)) as client:
        assert (await client.get("/q.bmp?width=16&format=png")).status_code == 200
        origin.routes["/static/q.bmp"] = status(503)
        stale = await client.get("/q.bmp?width=18&format=png")  # asked again (ttl 0): 503
        ready = await client.get("/readyz")
        metrics = (await client.get("/metrics")).text
    assert stale.status_code == 200
    assert size_of(stale.content) == (18, 14)
    assert ready.status_code == 200
    assert metric(metrics, "assetgate_source_cache_requests_total", result="stale") == 1
    assert metric(metrics, "assetgate_source_fetch_errors_total", status="502") == 1


# --- issue 35, item 2: content codings from an origin -----------------------------------------


def coded(body: bytes, coding: str) -> Callable[[Any], None]:
    def answer(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Encoding", coding)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return answer


async def test_stacked_codings_are_refused_naming_the_source(
    node: Callable[..., Settings], origin: Origin
) -> None:
    origin.routes["/static/stacked.bmp"] = coded(stacked(quadrant_bmp()), "gzip, gzip")
    origin.routes["/static/gzipped.bmp"] = coded(gzip.compress(quadrant_bmp()), "gzip")
    async with app_client(node()) as client:
        refused = await client.get("/stacked.bmp?width=10")
        served = await client.get("/gzipped.bmp?width=32&format=png")
    assert_json_error(refused, 502, "source /: sent more than one content coding")
    assert served.status_code == 200, served.text  # one coding is undone, as HTTP says
    assert size_of(served.content) == (32, 24)


async def test_a_gzip_bomb_is_capped_on_decoded_bytes_in_small_steps(
    node: Callable[..., Settings], origin: Origin
) -> None:
    origin.routes["/static/bomb.bmp"] = coded(gzip_bomb(), "gzip")
    async with app_client(node(max_source_bytes=1024 * 1024)) as client:
        with peak_memory() as peak:
            answer = await client.get("/bomb.bmp?width=10")
    assert_json_error(answer, 413, "source file is over the limit of 1048576 bytes")
    # httpx decoded each 64 KiB read whole: 64 MiB in one call. Now a step is 256 KiB.
    assert peak[0] < 16 * 1024 * 1024
