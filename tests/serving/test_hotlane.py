"""The hot lane replays a route's answer exactly, and never when something else would decide it.

The files are written once and aged past ``FileVersions``' settle time (a version younger than that
is never remembered, so never replayed). Whether an answer came from the lane is read from
``assetgate_hot_lane_answers_total``; what it answered is compared with the long way's.
"""

from __future__ import annotations

import gzip
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.types import Scope

from assetgate.optimizer.routes import OptimizerState
from assetgate.optimizer.signed import sign_url
from assetgate.resources import Resources
from assetgate.serving.hotlane import HotLane, file_body
from assetgate.serving.prepared import Prepared
from assetgate.serving.versions import FileVersion, FileVersions
from assetgate.settings import Settings
from assetgate.web.paths import locate
from tests.conftest import app_client
from tests.imaging import factory as make

pytestmark = pytest.mark.anyio

SETTLE_S = 2.1  # serving.files.Sources' default settle time, and a little
CSS = b"/* c */\nbody {\n  color : red ;\n}\n" * 40
FILES = {
    name: data
    for name, data in {
        **{f"{stem}.jpg": make.jpeg(80, 60, quality=90 - n) for n, stem in enumerate("abcdefg")},
        "other.jpg": make.jpeg(40, 30),
        "photo.png": make.png(96, 64),
        "site.css": CSS,
    }.items()
}


@pytest.fixture(scope="module")
def aged_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hotlane") / "root"
    root.mkdir()
    for name, data in FILES.items():
        (root / name).write_bytes(data)
    (root / "link.jpg").symlink_to("a.jpg")
    time.sleep(SETTLE_S)
    return root


@asynccontextmanager
async def served(
    root: Path, tmp_path: Path, **overrides: Any
) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, Any]]]:
    """The app over ASGI, and what its lifespan built."""
    settings = Settings(
        root=root,
        store=tmp_path / "store",
        result_cache_dir=tmp_path / "results",
        work_dir=tmp_path,
        **overrides,
    )
    app = app_client(settings)
    async with app as client:
        yield client, app.state


def replayed(state: dict[str, Any]) -> float:
    res: Resources = state["resources"]
    value = res.metrics.registry.get_sample_value("assetgate_hot_lane_answers_total")
    assert value is not None
    return value


def fixed(response: httpx.Response) -> list[tuple[str, str]]:
    """Every header but the per-request ones, in order."""
    return [(k, v) for k, v in response.headers.multi_items() if k not in ("date", "x-request-id")]


async def test_a_repeat_static_file_is_replayed_byte_for_byte(
    aged_root: Path, tmp_path: Path
) -> None:
    async with served(aged_root, tmp_path) as (client, state):
        first = await client.get("/b.jpg")
        assert replayed(state) == 0
        again = await client.get("/b.jpg")
        head = await client.head("/b.jpg")
        assert replayed(state) == 2
    assert first.status_code == again.status_code == head.status_code == 200
    assert again.content == first.content == FILES["b.jpg"]
    assert fixed(again) == fixed(first) == fixed(head)
    assert head.content == b""
    assert again.headers["x-request-id"] != first.headers["x-request-id"]


async def test_a_repeat_304_is_replayed_with_the_routes_headers(
    aged_root: Path, tmp_path: Path
) -> None:
    async with served(aged_root, tmp_path) as (client, state):
        etag = (await client.get("/c.jpg")).headers["etag"]
        first = await client.get("/c.jpg", headers={"if-none-match": etag})
        before = replayed(state)
        again = await client.get("/c.jpg", headers={"if-none-match": etag})
        since = await client.get(
            "/c.jpg", headers={"if-modified-since": first.headers["last-modified"]}
        )
        stale = await client.get("/c.jpg", headers={"if-none-match": '"0000"'})
        assert replayed(state) == before + 3
    assert first.status_code == again.status_code == since.status_code == 304
    assert fixed(again) == fixed(first)
    assert again.content == b""
    assert stale.status_code == 200
    assert stale.content == FILES["c.jpg"]


async def test_a_rewritten_file_is_never_answered_from_its_replay(
    aged_root: Path, tmp_path: Path
) -> None:
    """Same size, same mtime: the stat identity still moves (ctime), so the long way answers."""
    path = aged_root / "d.jpg"
    async with served(aged_root, tmp_path) as (client, state):
        old = await client.get("/d.jpg")
        await client.get("/d.jpg")
        assert replayed(state) == 1
        info = os.stat(path)
        new_bytes = bytes(reversed(FILES["d.jpg"]))
        path.write_bytes(new_bytes)
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
        new = await client.get("/d.jpg")
        revalidated = await client.get("/d.jpg", headers={"if-none-match": old.headers["etag"]})
        assert replayed(state) == 1
    assert new.content == new_bytes
    assert new.headers["etag"] != old.headers["etag"]
    assert revalidated.status_code == 200
    assert revalidated.content == new_bytes


async def test_range_and_other_methods_go_the_long_way(aged_root: Path, tmp_path: Path) -> None:
    async with served(aged_root, tmp_path) as (client, state):
        await client.get("/e.jpg")
        await client.get("/e.jpg")
        assert replayed(state) == 1
        ranged = await client.get("/e.jpg", headers={"range": "bytes=0-9"})
        posted = await client.post("/e.jpg")
        assert replayed(state) == 1
    assert ranged.status_code == 206
    assert ranged.content == FILES["e.jpg"][:10]
    assert posted.status_code == 405
    assert posted.headers["allow"]


async def test_a_path_through_a_symlink_is_never_replayed(aged_root: Path, tmp_path: Path) -> None:
    link = aged_root / "link.jpg"
    async with served(aged_root, tmp_path) as (client, state):
        for _ in range(3):
            assert (await client.get("/link.jpg")).content == FILES["a.jpg"]
        assert replayed(state) == 0
        link.unlink()
        link.symlink_to("f.jpg")
        retargeted = await client.get("/link.jpg")
    assert retargeted.content == FILES["f.jpg"]


async def test_accept_decides_which_rendering_is_replayed(aged_root: Path, tmp_path: Path) -> None:
    url = "/photo.png?width=48"
    webp, no_webp = {"accept": "image/webp,*/*"}, {"accept": "image/jpeg"}
    async with served(aged_root, tmp_path) as (client, state):
        await client.get(url, headers=webp)
        await client.get(url, headers=no_webp)
        hits = [await client.get(url, headers=h) for h in (webp, no_webp, webp)]
        assert replayed(state) == 3
    assert [r.headers["x-optimizer-cache"] for r in hits] == ["HIT"] * 3
    assert hits[0].content[8:12] == b"WEBP"
    assert hits[2].content == hits[0].content
    assert hits[1].content[:8] == b"\x89PNG\r\n\x1a\n"  # no WebP asked: the source's format
    assert all(r.headers["vary"] == "Accept" for r in hits)


async def test_a_rendering_no_longer_held_goes_the_long_way(
    aged_root: Path, tmp_path: Path
) -> None:
    url = "/g.jpg?width=40&format=webp"
    async with served(aged_root, tmp_path) as (client, state):
        first = await client.get(url)
        await client.get(url)
        assert replayed(state) == 1
        optimizer: OptimizerState = state["optimizer"]
        assert optimizer.results is not None
        optimizer.results.memory.clear()  # the memory tier forgot it; the disk tier has it
        from_disk = await client.get(url)
        assert replayed(state) == 1
    assert first.headers["x-optimizer-cache"] == "MISS"
    assert from_disk.headers["x-optimizer-cache"] == "HIT"
    assert from_disk.content == first.content


async def test_a_rendering_no_cache_holds_costs_the_lane_no_lstat(
    aged_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the result cache off nothing is kept to replay a 200 from: the lane sends such a
    request on without checking the file (the route's path check stats it once), and still
    answers a conditional repeat with its 304."""
    from assetgate.serving import hotlane

    checked: list[str] = []

    def counting(real: str, depth: int) -> os.stat_result | None:
        checked.append(real)
        return hotlane_still_direct(real, depth)

    hotlane_still_direct = hotlane.still_direct
    monkeypatch.setattr(hotlane, "still_direct", counting)
    url = "/f.jpg?width=40&format=jpeg"
    async with served(aged_root, tmp_path, result_cache_bytes=0) as (client, state):
        first = await client.get(url)
        again = await client.get(url)
        assert checked == []
        assert replayed(state) == 0
        revalidated = await client.get(url, headers={"if-none-match": first.headers["etag"]})
        assert replayed(state) == 1
        assert len(checked) == 1
    assert first.headers["x-optimizer-cache"] == again.headers["x-optimizer-cache"] == "BYPASS"
    assert again.content == first.content
    assert revalidated.status_code == 304


async def test_gzip_or_not_is_decided_per_request(aged_root: Path, tmp_path: Path) -> None:
    url = "/site.css?min=1&compress=1"
    gz, plain = {"accept-encoding": "gzip"}, {"accept-encoding": "identity"}
    async with served(aged_root, tmp_path) as (client, state):
        for headers in (gz, plain):
            await client.get(url, headers=headers)
            await client.get(url, headers=headers)
        zipped = await client.get(url, headers=gz)
        unzipped = await client.get(url, headers=plain)
        assert replayed(state) == 4
    assert zipped.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in unzipped.headers
    assert zipped.headers["x-asset-cache"] == unzipped.headers["x-asset-cache"] == "hit"
    # httpx decoded the gzip body: both are the same minified stylesheet
    assert zipped.content == unzipped.content
    assert len(unzipped.content) < len(CSS)
    assert gzip.decompress(gzip.compress(unzipped.content)) == zipped.content


async def test_a_rate_limited_optimizer_is_never_replayed(aged_root: Path, tmp_path: Path) -> None:
    async with served(
        aged_root, tmp_path, rate_limit="3/minute", rate_limit_parts=["optimizer"]
    ) as (client, state):
        statuses = [(await client.get("/b.jpg")).status_code for _ in range(5)]
        assert replayed(state) == 0
    assert statuses == [200, 200, 200, 429, 429]


async def test_a_signed_url_is_replayed_only_with_its_signature(
    aged_root: Path, tmp_path: Path
) -> None:
    key = "k" * 32
    url = sign_url("/c.jpg?width=30&format=jpeg", key)
    async with served(aged_root, tmp_path, signing_keys=[key]) as (client, state):
        assert (await client.get(url)).status_code == 200
        assert (await client.get(url)).status_code == 200
        assert replayed(state) == 1
        forged = await client.get(url[:-3] + "AAA")
        unsigned = await client.get("/c.jpg?width=30&format=jpeg")
    assert forged.status_code == unsigned.status_code == 403


def _scope(path: str) -> Scope:
    return {"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": []}


async def test_the_lane_is_bounded(aged_root: Path) -> None:
    sources = FileVersions(body_budget_bytes=1 << 20, settle_s=0)
    lane = HotLane(sources, entries=2)
    for name in ("a.jpg", "b.jpg", "c.jpg"):
        found = locate(str(aged_root), name)
        assert found is not None
        source = await sources.identify(found.real, found.stat)
        source.prepare("v", _prepared)
        lane.offer(_scope("/" + name), found, source, "v", file_body)
    assert len(lane) == 2
    assert lane.answer(_scope("/a.jpg")) is None
    answer = lane.answer(_scope("/c.jpg"))
    assert answer is not None
    assert answer[0] == 200
    assert answer[2] == FILES["c.jpg"]


def _prepared(source: FileVersion) -> Prepared:
    headers = {"ETag": '"x"', "Last-Modified": source.last_modified}
    return Prepared.build('"x"', source.mtime, headers, {"Content-Length": str(source.size)})


async def test_a_directory_swapped_for_a_link_leaving_the_root_ends_the_replay(
    tmp_path: Path,
) -> None:
    """Issue 24, item 9: the file keeps its stat identity when its directory is moved out and a
    symlink put in its place; only a check of every component tells the replay to stop."""
    root = tmp_path / "root"
    (root / "deep" / "sub").mkdir(parents=True)
    (root / "deep" / "sub" / "x.jpg").write_bytes(FILES["a.jpg"])
    (root / "deep" / "sub" / "x.css").write_bytes(CSS)
    time.sleep(SETTLE_S)
    outside = tmp_path / "outside"
    async with served(root, tmp_path) as (client, state):
        for url in ("/deep/sub/x.jpg", "/deep/sub/x.css?min=1"):
            for _ in range(3):
                assert (await client.get(url)).status_code == 200
        assert replayed(state) == 4
        (root / "deep" / "sub").rename(outside)
        (root / "deep" / "sub").symlink_to(outside)
        answers = [await client.get(url) for url in ("/deep/sub/x.jpg", "/deep/sub/x.css?min=1")]
        assert replayed(state) == 4  # neither was replayed
    assert [r.status_code for r in answers] == [404, 404]  # the gate: a link leaving the root
