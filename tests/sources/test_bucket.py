"""Images from an S3-compatible bucket (a real SeaweedFS on loopback), through the real app."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import obstore
import pytest
import redis.asyncio

from assetgate.cache.objects import OVERHEAD
from assetgate.cache.prefetch import PREFETCH_TASK
from assetgate.optimizer.signed import sign_url
from assetgate.serving.versions import fingerprint_bytes
from assetgate.settings import Settings
from tests.conftest import RedisServer, app_client
from tests.sources.images import BLUE, RED, near, pixel, quadrant_bmp, size_of, solid_bmp
from tests.sources.servers import SECRET_KEY, Seaweed, metric
from tests.waiting import wait_until_async

pytestmark = pytest.mark.anyio


@pytest.fixture
def node(
    make_settings: Callable[..., Settings], tmp_path: Path, weed: Seaweed, bucket: str
) -> Callable[..., Settings]:
    """Settings for one node serving ``bucket``/img, with its own disk caches."""

    def build(name: str = "a", **overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "root": f"s3://{bucket}/img",
            "s3_endpoint_url": weed.endpoint,
            "s3_path_style": True,
            "source_cache_dir": tmp_path / f"sources-{name}",
            "result_cache_dir": tmp_path / f"results-{name}",
            # What every node shares when a result store is set (required then).
            "result_store_key": "the nodes' shared result-store secret",
        }
        return make_settings(**{**values, **overrides})

    return build


async def test_an_object_is_served_transformed_through_both_url_forms(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    weed.put(bucket, "img/photos/q.bmp", quadrant_bmp())
    async with app_client(node()) as client:
        public = await client.get("/photos/q.bmp?width=32&format=png")
        assert public.status_code == 200, public.text
        assert public.headers["content-type"] == "image/png"
        assert size_of(public.content) == (32, 24)
        assert near(pixel(public.content, 4, 4), RED)
        assert near(pixel(public.content, 4, 20), BLUE)
        query = await client.get("/", params={"file": "photos/q.bmp", "width": "32", "f": "png"})
        assert query.status_code == 200
        assert query.headers["etag"] == public.headers["etag"]
        assert query.content == public.content
        again = await client.get(
            "/photos/q.bmp?width=32&format=png", headers={"If-None-Match": public.headers["etag"]}
        )
        assert again.status_code == 304
        plain = await client.get("/photos/q.bmp")
        assert plain.status_code == 200
        assert plain.content == quadrant_bmp()


@pytest.mark.parametrize(
    "url",
    [
        "/photos/missing.bmp?width=10",
        "/?file=../img/photos/q.bmp&width=10",
        "/?file=/photos/q.bmp",
        "/cache/q.bmp?width=10",
        "/?file=photos/%2e%2e/q.bmp",
        "/?file=.hidden.bmp",
    ],
)
async def test_path_rules_hold_for_a_bucket(
    node: Callable[..., Settings], weed: Seaweed, bucket: str, url: str
) -> None:
    weed.put(bucket, "img/photos/q.bmp", quadrant_bmp())
    weed.put(bucket, "img/cache/q.bmp", quadrant_bmp())
    weed.put(bucket, "q.bmp", quadrant_bmp())  # outside the prefix: never reachable
    async with app_client(node()) as client:
        answer = await client.get(url)
    assert answer.status_code == 404
    assert answer.json() == {"error": "not found", "code": 404}


async def test_two_nodes_agree_on_the_etag_and_a_same_size_rewrite_changes_it(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    url = "/a.bmp?width=32&format=png"
    async with app_client(node("a", source_ttl_s=0)) as a, app_client(node("b")) as b:
        first_a, first_b = await a.get(url), await b.get(url)
        assert first_a.status_code == first_b.status_code == 200
        assert first_a.headers["etag"] == first_b.headers["etag"]
        assert len(solid_bmp()) == len(quadrant_bmp())
        weed.put(bucket, "img/a.bmp", solid_bmp(BLUE))
        rewritten = await a.get(url)
        assert rewritten.status_code == 200
        assert rewritten.headers["etag"] != first_a.headers["etag"]
        assert near(pixel(rewritten.content, 4, 4), BLUE)
        stale = await a.get(url, headers={"If-None-Match": first_a.headers["etag"]})
        assert stale.status_code == 200


async def test_a_node_answers_what_another_rendered_from_the_result_store(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    store = {"result_store": f"s3://{bucket}/results"}
    url = "/a.bmp?width=40&format=webp"
    async with app_client(node("a", **store)) as a, app_client(node("b", **store)) as b:
        made = await a.get(url)
        assert made.status_code == 200
        assert made.headers["x-optimizer-cache"] == "MISS"
        await _until_stored(weed, bucket, 3)  # the variant, its alias, the fingerprint
        shared = await b.get(url)
        assert shared.status_code == 200, shared.text
        assert shared.headers["x-optimizer-cache"] == "HIT"
        assert shared.headers["etag"] == made.headers["etag"]
        assert shared.content == made.content
        metrics = (await b.get("/metrics")).text
        assert metric(metrics, "assetgate_cache_requests_total", cache="images", result="miss") == 0
        # one read of the result store: the variant's alias, read beside the fingerprint
        assert metric(metrics, "assetgate_result_store_requests_total", result="hit") == 1
        assert metric(metrics, "assetgate_result_store_requests_total", result="miss") == 0
        # node B never fetched the source: A shared its fingerprint
        assert metric(metrics, "assetgate_source_fetch_bytes_total", source="/") == 0
        assert metric(metrics, "assetgate_source_cache_requests_total", result="miss") == 0
        held = await b.get(url)  # from memory: no store read started
        assert held.headers["x-optimizer-cache"] == "HIT"
        assert held.content == made.content
        conditional = await b.get(url, headers={"If-None-Match": made.headers["etag"]})
        assert conditional.status_code == 304
        unknown = await b.get(url.replace("40", "41"), headers={"If-None-Match": '"other"'})
        assert unknown.status_code == 200  # conditional: no alias read, the long way
        metrics = (await b.get("/metrics")).text
        assert metric(metrics, "assetgate_result_store_requests_total", result="hit") == 1
        # the variant's key, missed by the shared answer and the render's lookup; no alias read
        assert metric(metrics, "assetgate_result_store_requests_total", result="miss") == 2
        assert _prefetches() == []  # no read left running
        other = await b.get("/a.bmp?width=30&format=png")  # not rendered anywhere: B renders
        assert other.status_code == 200
        assert other.headers["x-optimizer-cache"] == "MISS"
        assert size_of(other.content) == (30, 22)
        ready = await b.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["checks"]["result_store"] == "ok"
        assert ready.json()["checks"]["source /"] == "ok"


async def test_node_b_answers_with_node_a_s_headers(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    # Node B's answer from the store is served by the same steps as node A's kept rendering
    # (serving.answer): the same fields with the same values, on the 200, HEAD and the 304.
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    store = {"result_store": f"s3://{bucket}/results"}
    url = "/a.bmp?width=40"  # negotiated: Vary: Accept
    accept = {"Accept": "image/webp,image/*"}
    async with app_client(node("a", **store)) as a, app_client(node("b", **store)) as b:
        made = await a.get(url, headers=accept)
        assert made.headers["x-optimizer-cache"] == "MISS"
        await _until_stored(weed, bucket, 3)  # the variant, its alias, the fingerprint
        answers = {}
        for name, client in (("a", a), ("b", b)):
            got = await client.get(url, headers=accept)
            head = await client.head(url, headers=accept)
            etag = {**accept, "If-None-Match": made.headers["etag"]}
            not_modified = await client.get(url, headers=etag)
            answers[name] = (got, head, not_modified)
    for mine, theirs in zip(answers["a"], answers["b"], strict=True):
        assert mine.status_code == theirs.status_code
        assert mine.content == theirs.content
        assert _fields(mine.headers) == _fields(theirs.headers)
    got, head, not_modified = answers["b"]
    assert (got.status_code, head.status_code, not_modified.status_code) == (200, 200, 304)
    assert got.headers["x-optimizer-cache"] == "HIT"
    assert got.headers["cache-status"] == not_modified.headers["cache-status"] == "assetgate; hit"
    assert got.headers["vary"] == "Accept"
    assert head.content == b""


def _fields(headers: Any) -> list[tuple[str, str]]:
    """An answer's header fields but those every answer has its own of (id, date, rate limit)."""
    own = ("x-request-id", "date", "ratelimit", "ratelimit-policy", "server")
    return sorted((k.lower(), v) for k, v in headers.multi_items() if k.lower() not in own)


def _prefetches() -> list[asyncio.Task[object]]:
    return [task for task in asyncio.all_tasks() if task.get_name() == PREFETCH_TASK]


async def _until_stored(weed: Seaweed, bucket: str, count: int = 1) -> None:
    """The background writes of node A have landed (they never delay A's answer)."""
    store = weed.store(bucket)

    async def stored() -> bool:
        return len(await obstore.list(store, prefix="results/").collect_async()) >= count

    await wait_until_async(stored, timeout=30, interval=0.05, message="node A's result stored")


async def test_a_damaged_stored_result_is_a_miss(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    store = {"result_store": f"s3://{bucket}/results"}
    url = "/a.bmp?width=40&format=png"
    async with app_client(node("a", **store)) as a:
        made = await a.get(url)
        assert made.status_code == 200
    await _until_stored(weed, bucket, count=3)
    listed = await obstore.list(weed.store(bucket), prefix="results/").collect_async()
    damaged = [item["path"] for item in listed if "/sources/" not in item["path"]]
    assert len(damaged) == 2  # the variant and its alias
    for key in damaged:
        whole = bytes(await (await obstore.get_async(weed.store(bucket), key)).bytes_async())
        weed.put(bucket, key, whole[: len(whole) // 2])  # short: length and digest disagree
    async with app_client(node("b", **store)) as b:
        answer = await b.get(url)
        assert answer.status_code == 200
        assert answer.headers["x-optimizer-cache"] == "MISS"
        assert answer.content == made.content


async def test_an_entry_moved_under_another_variants_name_is_never_served(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    """Issue 35, item 5: anyone with write access to the bucket put another answer under a
    variant's name and node B served it as a hit under the real ETag (the digest was unkeyed).
    Now the MAC covers the name: node B renders, and its answer is the right one."""
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    store = {"result_store": f"s3://{bucket}/results"}
    target, other = "/a.bmp?width=40&format=png", "/a.bmp?width=20&format=png"
    bucket_store = weed.store(bucket)

    async def variants() -> set[str]:
        listed = await obstore.list(bucket_store, prefix="results/").collect_async()
        return {item["path"] for item in listed if "/sources/" not in item["path"]}

    async with app_client(node("a", **store)) as a:
        made = await a.get(target)
        assert made.status_code == 200
        await _until_stored(weed, bucket, count=3)
        targets = await variants()
        assert (await a.get(other)).status_code == 200
        await _until_stored(weed, bucket, count=5)
    planted = sorted(await variants() - targets)[0]
    forged = bytes(await (await obstore.get_async(bucket_store, planted)).bytes_async())
    for name in targets:  # the variant and its alias now hold the other variant's entry
        weed.put(bucket, name, forged)
    async with app_client(node("b", **store)) as b:
        answer = await b.get(target)
    assert answer.status_code == 200
    assert answer.headers["x-optimizer-cache"] == "MISS"
    assert answer.content == made.content
    assert size_of(answer.content) == (40, 30)


async def test_an_alias_left_from_an_older_version_is_never_served(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    """The object is rewritten (same size) and node A shares the new version's fingerprint
    without rendering the variant again: its alias still holds the old version's ETag and
    pixels. Node B renders the new version."""
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    store = {"result_store": f"s3://{bucket}/results"}
    url = "/a.bmp?width=40&format=png"
    async with app_client(node("a", source_ttl_s=0, **store)) as a:
        old = await a.get(url)
        assert near(pixel(old.content, 4, 4), RED)
        await _until_stored(weed, bucket, 3)
        weed.put(bucket, "img/a.bmp", solid_bmp(BLUE))
        other = await a.get("/a.bmp?width=30&format=png")  # fetches the new version, shares it
        assert near(pixel(other.content, 4, 4), BLUE)
        await _until_shared(weed, bucket, fingerprint_bytes(solid_bmp(BLUE)))
    async with app_client(node("b", **store)) as b:
        answer = await b.get(url)
    assert answer.status_code == 200
    assert answer.headers["x-optimizer-cache"] == "MISS"
    assert answer.headers["etag"] != old.headers["etag"]
    assert near(pixel(answer.content, 4, 4), BLUE)


async def _until_shared(weed: Seaweed, bucket: str, fingerprint: str) -> None:
    """Node A's index entry for the object names ``fingerprint``."""
    store = weed.store(bucket)

    async def shared() -> bool:
        for item in await obstore.list(store, prefix="results/sources/").collect_async():
            entry = await (await obstore.get_async(store, item["path"])).bytes_async()
            if json.loads(bytes(entry)[OVERHEAD:])["fingerprint"] == fingerprint:
                return True
        return False

    await wait_until_async(shared, timeout=30, interval=0.05, message="the new fingerprint shared")


async def test_a_refused_store_connection_is_a_502_not_a_timeout(
    node: Callable[..., Settings], free_port: Callable[[], int]
) -> None:
    """Issue 35, item 13: obstore's error text names its ``retry_timeout`` setting, and a refused
    connection was answered 504 "no answer within 20 s" in 0.08 s."""
    async with app_client(node(s3_endpoint_url=f"http://127.0.0.1:{free_port()}")) as client:
        answer = await client.get("/a.bmp?width=10")
    assert answer.status_code == 502
    assert answer.json() == {"error": "source /: unreachable", "code": 502}


async def test_a_store_that_never_answers_is_a_504_after_the_deadline(
    node: Callable[..., Settings],
) -> None:
    with socket.socket() as silent:  # accepts connections (the kernel's backlog), answers nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}"
        async with app_client(node(s3_endpoint_url=endpoint, source_read_timeout_s=1.0)) as client:
            started = time.monotonic()
            answer = await client.get("/a.bmp?width=10")
            elapsed = time.monotonic() - started
    assert answer.status_code == 504
    assert answer.json() == {"error": "source /: no answer within 1 s", "code": 504}
    assert 0.9 < elapsed < 5


async def test_wrong_credentials_are_a_502_naming_the_source_and_nothing_else(
    node: Callable[..., Settings],
    weed: Seaweed,
    bucket: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    wrong = "wrong-secret-" + "x" * 20
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", wrong)
    caplog.set_level(logging.DEBUG)
    async with app_client(node()) as client:
        answer = await client.get("/a.bmp?width=10")
        ready = await client.get("/readyz")
    assert answer.status_code == 502
    assert answer.json() == {
        "error": "source /: the store refused the credentials",
        "code": 502,
    }
    assert ready.status_code == 200  # degraded, still serving what it holds
    assert ready.json()["degraded"] == ["source /"]
    # The npm registry the operator configured is said at start (issue 36): not the store's.
    logged = "\n".join(r.getMessage() for r in caplog.records if "npm registry" not in r.msg)
    for text in (answer.text, ready.text, logged):
        for secret in (wrong, SECRET_KEY, weed.endpoint, "127.0.0.1", bucket, "Signature"):
            assert secret not in text


async def test_source_cache_answers_without_fetching_again(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    async with app_client(node(source_ttl_s=300)) as client:
        for width in (10, 20, 30):
            assert (await client.get(f"/a.bmp?width={width}")).status_code == 200
        text = (await client.get("/metrics")).text
    assert metric(text, "assetgate_source_cache_requests_total", source="/", result="miss") == 1
    assert metric(text, "assetgate_source_cache_requests_total", source="/", result="hit") == 2
    assert metric(text, "assetgate_source_fetch_bytes_total", source="/", kind="s3") == len(
        quadrant_bmp()
    )


async def test_an_object_over_the_size_cap_is_a_413(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    weed.put(bucket, "img/big.bmp", quadrant_bmp(400, 300))
    async with app_client(node(max_source_bytes=10_000)) as client:
        answer = await client.get("/big.bmp?width=10")
    assert answer.status_code == 413
    assert answer.json()["error"] == "source file is over the limit of 10000 bytes"


async def test_with_redis_the_shared_fingerprint_is_read_from_redis(
    node: Callable[..., Settings],
    weed: Seaweed,
    bucket: str,
    redis_server: RedisServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A loaded CI worker once took over the 0.5 s a Redis read may take (node B's first, its
    # connection included) and node B fell back to the bucket, as designed; this test is about
    # where the fingerprint comes from when Redis answers, so Redis gets time to answer.
    monkeypatch.setattr("assetgate.cache.shared.OP_TIMEOUT_S", 5.0)
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    shared = {"result_store": f"s3://{bucket}/results", "redis_url": redis_server.url}
    url = "/a.bmp?width=40&format=png"
    async with app_client(node("a", **shared)) as a:
        made = await a.get(url)
        assert made.headers["x-optimizer-cache"] == "MISS"
        await _until_stored(weed, bucket, count=3)
    store = weed.store(bucket)
    listed = await obstore.list(store, prefix="results/sources/").collect_async()
    assert len(listed) == 1
    await obstore.delete_async(store, listed[0]["path"])  # only Redis knows the fingerprint now
    async with app_client(node("b", **shared)) as b:
        from_redis = await b.get(url)
        metrics = (await b.get("/metrics")).text
    assert from_redis.headers["x-optimizer-cache"] == "HIT"
    assert from_redis.headers["etag"] == made.headers["etag"]
    assert metric(metrics, "assetgate_source_fetch_bytes_total", source="/") == 0
    client = redis.asyncio.Redis.from_url(redis_server.url)
    try:
        keys = await client.keys("assetgate:cache:sources/*")
        assert len(keys) == 1
        assert 0 < await client.pttl(keys[0]) <= 300_000  # kept for the source TTL only
    finally:
        await client.aclose()


async def test_plain_files_and_css_from_a_bucket_keep_their_media_types(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    css = b".card {\n    color : #336699 ;\n}\n"
    weed.put(bucket, "img/site.css", css)
    weed.put(bucket, "img/q.bmp", quadrant_bmp())
    async with app_client(node()) as client:
        plain = await client.get("/q.bmp")
        style = await client.get("/site.css")
        minified = await client.get("/site.css?min=1")
    assert plain.headers["content-type"] == "image/bmp"
    assert plain.content == quadrant_bmp()
    assert style.headers["content-type"].startswith("text/css")
    assert style.content == css
    assert minified.status_code == 200
    assert minified.content == b".card{color:#336699}"


async def test_signed_urls_hold_for_a_bucket_and_refuse_before_any_fetch(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    weed.put(bucket, "img/q.bmp", quadrant_bmp())
    key = "k" * 32
    async with app_client(node(signing_keys=[key])) as client:
        unsigned = await client.get("/q.bmp?width=16")
        metrics = (await client.get("/metrics")).text
        assert unsigned.status_code == 403
        assert metric(metrics, "assetgate_source_cache_requests_total", result="miss") == 0
        signed = await client.get(sign_url("/q.bmp?width=16&format=png", key))
    assert signed.status_code == 200
    assert size_of(signed.content) == (16, 12)


async def test_a_node_names_a_negotiated_avif_as_the_node_that_rendered_it(
    node: Callable[..., Settings], weed: Seaweed, bucket: str
) -> None:
    """With ASSETGATE_AUTO_FORMATS=avif,webp an AVIF-accepting client gets AVIF from either
    node: node B looks the variant up under the format node A negotiated, never under WebP's."""
    weed.put(bucket, "img/a.bmp", quadrant_bmp())
    settings = {"result_store": f"s3://{bucket}/results", "auto_formats": ["avif", "webp"]}
    url, accept = "/a.bmp?width=40", {"Accept": "image/avif,image/webp,*/*;q=0.8"}
    async with app_client(node("a", **settings)) as a, app_client(node("b", **settings)) as b:
        made = await a.get(url, headers=accept)
        assert made.status_code == 200, made.text
        assert made.headers["content-type"] == "image/avif"
        webp = await a.get(url, headers={"Accept": "image/webp,*/*;q=0.8"})  # both in the store
        assert webp.headers["content-type"] == "image/webp"
        await _until_stored(weed, bucket, 5)  # two variants, their aliases, the fingerprint
        shared = await b.get(url, headers=accept)
        assert shared.status_code == 200, shared.text
        assert shared.headers["content-type"] == "image/avif"
        assert shared.headers["x-optimizer-cache"] == "HIT"
        assert shared.headers["etag"] == made.headers["etag"]
        assert shared.content == made.content
        metrics = (await b.get("/metrics")).text
        assert metric(metrics, "assetgate_source_fetch_bytes_total", source="/") == 0


async def test_two_nodes_asked_for_one_cold_variant_at_once_render_it_once(
    node: Callable[..., Settings], weed: Seaweed, bucket: str, redis_server: RedisServer
) -> None:
    weed.put(bucket, "img/a.bmp", quadrant_bmp(800, 600))
    shared = {"result_store": f"s3://{bucket}/results", "redis_url": redis_server.url}
    async with app_client(node("a", **shared)) as a, app_client(node("b", **shared)) as b:
        for width, client in ((10, a), (11, b)):  # each renders one, so each holds the source
            assert (await client.get(f"/a.bmp?width={width}")).status_code == 200
        url = "/a.bmp?width=300&format=webp&sharpen=true"
        first, second = await asyncio.gather(a.get(url), b.get(url))
        renders = 0.0
        for client in (a, b):
            text = (await client.get("/metrics")).text
            renders += metric(text, "assetgate_cache_requests_total", cache="images", result="miss")
    assert first.status_code == second.status_code == 200
    assert sorted([first.headers["x-optimizer-cache"], second.headers["x-optimizer-cache"]]) == [
        "HIT",
        "MISS",
    ]
    assert first.content == second.content
    assert renders == 2 + 1  # the two width=10 renders, then one for both nodes


async def test_a_large_copy_is_fingerprinted_while_it_is_written_not_read_again(
    node: Callable[..., Settings], weed: Seaweed, bucket: str, docroot: Path
) -> None:
    big = quadrant_bmp(400, 300)
    assert len(big) > 256 * 1024
    weed.put(bucket, "img/big.bmp", big)
    (docroot / "big.bmp").write_bytes(big)
    url = "/big.bmp?width=40&format=png"
    remote = app_client(node())
    async with remote as client:
        from_bucket = await client.get(url)
        again = await client.get(url)
    async with app_client(node(root=docroot)) as client:
        from_disk = await client.get(url)
    assert from_bucket.status_code == again.status_code == 200
    assert remote.state["resources"].versions.fingerprinted == 0  # hashed while it streamed
    assert from_bucket.headers["etag"] == from_disk.headers["etag"]  # the same content hash
    assert again.headers["x-optimizer-cache"] == "HIT"
