"""Registry documents: streamed off the event loop, capped by ASSETGATE_PACKUMENT_MAX_BYTES,
reduced to what resolution needs (issue 24, item 6)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from assetgate.errors import AppError
from assetgate.packages.packument import parse_packument
from assetgate.settings import Settings
from tests.conftest import app_client
from tests.packages.upstream import FakeUpstream, Reply

pytestmark = pytest.mark.anyio


def heavy_document(name: str, versions: int, manifest_bytes: int) -> dict[str, object]:
    """A registry document shaped like a popular package's: every version carries a big manifest."""
    filler = "x" * manifest_bytes
    return {
        "name": name,
        "description": "a heavy package",
        "dist-tags": {"latest": f"1.0.{versions - 1}", "next": "1.0.0"},
        "versions": {
            f"1.0.{i}": {
                "name": name,
                "version": f"1.0.{i}",
                "readme": filler,
                "dependencies": {f"dep{j}": f"^{j}.0.0" for j in range(40)},
                "dist": {
                    "tarball": f"http://127.0.0.1:9/{name}/-/{name}-1.0.{i}.tgz",
                    "integrity": "sha512-" + "A" * 86 + "==",
                    "shasum": "0" * 40,
                },
                **({"deprecated": "old"} if i == 0 else {}),
            }
            for i in range(versions)
        },
    }


def test_a_document_is_reduced_to_what_resolution_needs() -> None:
    doc = heavy_document("heavy", 3, 100)
    doc["versions"]["9.9.9"] = {"dist": {"integrity": "sha512-x"}}  # type: ignore[index]
    packument = parse_packument("heavy", json.dumps(doc).encode())
    assert sorted(packument.dists) == ["1.0.0", "1.0.1", "1.0.2"]  # no tarball: unusable, left
    assert packument.dist_tags == {"latest": "1.0.2", "next": "1.0.0"}
    assert packument.deprecated == frozenset({"1.0.0"})
    assert packument.description == "a heavy package"
    assert packument.dists["1.0.1"].tarball.endswith("heavy-1.0.1.tgz")
    assert packument.dists["1.0.1"].shasum is None  # the sha1 is not kept beside an SRI


@pytest.mark.parametrize(
    "body",
    [
        b"{",
        b"[1, 2]",
        b'{"versions": 3}',
        b"\xff\xfe",
        b'"x"',
        b'{"versions": {}, "dist-tags": {"latest": "1.0.0"}}',
    ],
)
def test_a_broken_document_is_a_502(body: bytes) -> None:
    with pytest.raises(AppError) as caught:
        parse_packument("x", body)
    assert caught.value.status == 502


UNPUBLISHED = {
    "_id": "gone",
    "name": "gone",
    "time": {
        "created": "2020-01-01T00:00:00.000Z",
        "unpublished": {"time": "2021-01-01T00:00:00.000Z", "versions": ["1.0.0"]},
    },
}


@pytest.mark.parametrize(
    "doc", [UNPUBLISHED, {"name": "gone", "versions": {}}, {"name": "gone", "dist-tags": {}}]
)
def test_a_document_without_versions_or_tags_is_a_404_not_an_upstream_failure(
    doc: dict[str, object],
) -> None:
    with pytest.raises(AppError) as caught:
        parse_packument("gone", json.dumps(doc).encode())
    assert (caught.value.status, caught.value.message) == (404, "gone has no published versions")


async def test_an_unpublished_package_answers_404_saying_so(
    npm: httpx.AsyncClient, upstream: FakeUpstream
) -> None:
    upstream.routes["/gone"] = Reply(json.dumps(UNPUBLISHED).encode())
    for url in ("/npm/gone@latest/", "/npm/gone@1.0.0/index.js", "/npm/gone/"):
        response = await npm.get(url)
        assert response.status_code == 404, url
        assert response.json()["error"] == "gone has no published versions"


async def test_a_document_over_the_cap_is_a_502_naming_the_package(
    pkg_settings: Callable[..., Settings], upstream: FakeUpstream
) -> None:
    body = json.dumps(heavy_document("bloated", 40, 1000)).encode()
    assert len(body) > 40_000
    upstream.routes["/bloated"] = Reply(body)
    async with app_client(pkg_settings(packument_max_bytes=32_000)) as client:
        response = await client.get("/npm/bloated@^1/")
        assert response.status_code == 502
        message = response.json()["error"]
        assert "bloated" in message
        assert "ASSETGATE_PACKUMENT_MAX_BYTES" in message
        # The same document under a larger cap resolves.
    async with app_client(pkg_settings(packument_max_bytes=len(body))) as client:
        response = await client.get("/npm/bloated@^1/")
        assert response.status_code == 302
        assert response.headers["x-resolved-version"] == "1.0.39"


async def test_a_huge_document_does_not_stall_the_event_loop(
    pkg_settings: Callable[..., Settings], upstream: FakeUpstream
) -> None:
    body = json.dumps(heavy_document("huge", 3000, 12_000)).encode()  # ~40 MB, like the report
    upstream.routes["/huge"] = Reply(body)
    gaps: list[float] = []

    async def tick() -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    # The loop's gaps are under test, not the upstream deadline: 40 MB over loopback took more
    # than pkg_settings' 2 s on a loaded machine (a 502).
    settings = pkg_settings(packument_max_bytes=64 * 1024 * 1024, upstream_timeout_s=30.0)
    async with app_client(settings) as client:
        ticker = asyncio.create_task(tick())
        started = time.perf_counter()
        try:
            response = await client.get("/npm/huge@1/")
        finally:
            took = time.perf_counter() - started
            ticker.cancel()
        assert response.status_code == 302
        assert response.headers["x-resolved-version"] == "1.0.2999"
    # json.loads of the whole document on the loop was one gap of most of the request's time
    # (well over a second); streamed on a thread, the loop runs every few milliseconds. On a
    # loaded machine every gap grows with the request, hence the share as well as the bound.
    assert max(gaps) < max(0.3, 0.25 * took), f"the loop stalled {max(gaps):.2f} s of {took:.2f}"


def test_the_stale_copy_is_encoded_a_version_at_a_time_to_the_same_json() -> None:
    """``packument_text`` (no single ``json.dumps`` holding the GIL over 290k versions) writes
    exactly the document ``packument_to_json`` describes, deprecation and odd strings included."""
    from assetgate.packages.catalogs import packument_text, packument_to_json
    from assetgate.packages.versions import Dist, Packument

    packument = Packument(
        "odd",
        {"latest": "1.0.1", "beta": "2.0.0-b.1"},
        {
            "1.0.0": Dist('https://r.example/o"dd/-/odd-1.0.0.tgz', None, "0" * 40),
            "1.0.1": Dist("https://r.example/odd/-/odd-1.0.1.tgz", "sha512-AA==", None),
            "2.0.0-b.1": Dist("https://r.example/\u00e9/x.tgz", "sha512-BB==", None),
        },
        frozenset({"1.0.0"}),
        'a "quoted" \\ description',
    )
    assert json.loads(packument_text(packument)) == packument_to_json(packument)
    # and the one parser reads it back as it reads a registry's answer (stale-if-error)
    assert parse_packument("odd", packument_text(packument).encode()) == packument


def test_a_kept_copy_of_a_registry_document_is_parsed_by_the_same_rules(tmp_path: Path) -> None:
    """The stale-if-error copy goes through ``parse_packument`` too: a version that is not exact
    semver, a tag that is not sane, a version without a tarball are dropped there as well."""
    from assetgate.packages.store import Store

    store = Store(tmp_path, 1 << 20)
    store.save_packument(
        "p",
        {
            "name": "p",
            "dist-tags": {"latest": "1.0.0", "bad tag": "1.0.0"},
            "versions": {
                "1.0.0": {"dist": {"tarball": "https://r.example/p-1.0.0.tgz"}},
                "1.0.0\r\nX-Evil: 1": {"dist": {"tarball": "https://r.example/evil.tgz"}},
                "2.0.0": {"dist": {}},
            },
        },
    )
    saved = store.load_packument("p")
    store.close()
    assert saved is not None
    packument = parse_packument("p", saved[1])
    assert dict(packument.dist_tags) == {"latest": "1.0.0"}
    assert list(packument.dists) == ["1.0.0"]
