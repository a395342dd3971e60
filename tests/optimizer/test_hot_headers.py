"""The full header set of every hot path, pinned: a faster path may not change what is answered.

Static pass-through, 304s, CSS/JS cache hits and an image render, each on GET and HEAD, first
request and repeat (a repeat is what the fast paths serve; an image's is a result-cache hit).
Every header is compared, none may be repeated; the ETag's value changes by design when its
derivation does, so only its shape (and the per-request id's) is pinned.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import httpx
import pytest

from assetgate.settings import Settings
from assetgate.web.caching import http_date
from tests.conftest import app_client
from tests.imaging import factory as make

pytestmark = pytest.mark.anyio

ETAG = re.compile(r'"[0-9a-f]{24}"')
CORS = {
    "access-control-allow-origin": "*",
    "access-control-expose-headers": "ETag, X-Optimizer-Cache, X-Optimizer-Status, "
    "X-Original-Size, X-Compressed-Size, X-Compression-Ratio, X-Output-Format, "
    "X-Output-Quality, X-Output-Score, X-Optimizer-Budget, Cache-Status",
}
CACHE = "public, max-age=86400, stale-while-revalidate=604800"
CSS = b"/* c */\nbody {\n  color : red ;\n}\n" * 20
IDENTITY = {"accept-encoding": "identity"}
HIT = {"cache-status": "assetgate; hit"}  # RFC 9211; a 304 is answered from the validators
BYPASS = {"cache-status": "assetgate; fwd=bypass"}  # the file as it is


@pytest.fixture
async def opt(hot: dict[str, bytes], settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings) as client:
        yield client


@pytest.fixture
def hot(docroot: Path) -> dict[str, bytes]:
    files = {
        "photo.jpg": make.jpeg(120, 90),
        "notes.txt": b"hello\n",
        "site.css": CSS,
        "big.bin": bytes(range(256)) * 2048,  # 512 KiB: over the in-memory size
    }
    for name, data in files.items():
        (docroot / name).write_bytes(data)
    return files


def assert_headers(response: httpx.Response, expected: Mapping[str, str]) -> None:
    names = [name for name, _ in response.headers.multi_items()]
    assert len(names) == len(set(names)), f"a header is repeated: {names}"
    got = {k: v for k, v in response.headers.items() if k != "date"}
    assert ETAG.fullmatch(got.pop("etag", "")), response.headers
    # Every answer carries its own request id (operations/observe.py): pinned by shape, not value.
    assert re.fullmatch(r"[0-9a-f]{32}", got.pop("x-request-id", "")), response.headers
    assert got == dict(expected)


def tags(name: str) -> dict[str, str]:
    """The cache tags of a file at the root (serving/tags.py), on every answer."""
    values = [f"path:/{name}", "part:optimizer", "dir:/"]
    return {"cache-tag": ",".join(values), "surrogate-key": " ".join(values)}


def validators(docroot: Path, name: str) -> dict[str, str]:
    return {
        **CORS,
        **tags(name),
        "last-modified": http_date(os.stat(docroot / name).st_mtime),
        "cache-control": CACHE,
        "x-content-type-options": "nosniff",
    }


async def repeated(
    client: httpx.AsyncClient, method: str, url: str, headers: Mapping[str, str] | None = None
) -> list[httpx.Response]:
    return [await client.request(method, url, headers=headers) for _ in range(3)]


@pytest.mark.parametrize(
    ("name", "media_type"),
    [
        ("photo.jpg", "image/jpeg"),
        ("notes.txt", "text/plain; charset=utf-8"),
        ("site.css", "text/css; charset=utf-8"),
        ("big.bin", "application/octet-stream"),
    ],
)
@pytest.mark.parametrize("method", ["GET", "HEAD"])
async def test_static_pass_through(
    hot: dict[str, bytes],
    opt: httpx.AsyncClient,
    docroot: Path,
    name: str,
    media_type: str,
    method: str,
) -> None:
    size = str(len(hot[name]))
    passthrough = {"x-optimizer-status": "passthrough", "x-original-size": size}
    for response in await repeated(opt, method, f"/{name}"):
        assert response.status_code == 200
        assert response.content == (hot[name] if method == "GET" else b"")
        assert_headers(
            response,
            {
                **validators(docroot, name),
                **passthrough,
                "content-type": media_type,
                "accept-ranges": "bytes",
                "content-length": size,
                **BYPASS,
            },
        )
        not_modified = await opt.request(
            method, f"/{name}", headers={"if-none-match": response.headers["etag"]}
        )
        assert not_modified.status_code == 304
        assert not_modified.content == b""
        # CSS and JS go through the CSS/JS floor, whose 304 does not repeat the pass-through fields
        kept = {} if name.endswith(".css") else passthrough
        assert_headers(not_modified, {**validators(docroot, name), **kept, **HIT})


@pytest.mark.parametrize("name", ["photo.jpg", "big.bin"])
async def test_static_range(
    hot: dict[str, bytes], opt: httpx.AsyncClient, docroot: Path, name: str
) -> None:
    size = len(hot[name])
    for response in await repeated(opt, "GET", f"/{name}", {"range": "bytes=10-19"}):
        assert response.status_code == 206
        assert response.content == hot[name][10:20]
        assert response.headers["content-range"] == f"bytes 10-19/{size}"
        assert response.headers["content-length"] == "10"


@pytest.mark.parametrize(
    ("query", "request_headers", "extra"),
    [
        ("?min=1", IDENTITY, {}),
        ("?min=1&compress=1", {"accept-encoding": "gzip"}, {"vary": "Accept-Encoding"}),
    ],
)
@pytest.mark.parametrize("method", ["GET", "HEAD"])
async def test_asset_cache_hit(
    hot: dict[str, bytes],
    opt: httpx.AsyncClient,
    docroot: Path,
    query: str,
    request_headers: dict[str, str],
    extra: dict[str, str],
    method: str,
) -> None:
    url = f"/site.css{query}"
    miss = await opt.get(url, headers=request_headers)
    assert miss.headers["x-asset-cache"] == "miss"
    size = miss.headers["content-length"]  # on the wire: httpx hands back gzip decoded
    ratio = f"{(1 - int(size) / len(CSS)) * 100:.1f}%"
    encoding = {"content-encoding": "gzip"} if "compress" in query else {}
    for response in await repeated(opt, method, url, request_headers):
        assert response.status_code == 200
        assert response.content == (miss.content if method == "GET" else b"")
        assert_headers(
            response,
            {
                **validators(docroot, "site.css"),
                **extra,
                "x-original-size": str(len(CSS)),
                "x-compressed-size": size,
                "x-compression-ratio": ratio,
                **encoding,
                "x-asset-cache": "hit",
                "content-length": size,
                "content-type": "text/css; charset=utf-8",
                **HIT,
            },
        )
        assert response.headers["etag"] == miss.headers["etag"]
        not_modified = await opt.request(
            method, url, headers={**request_headers, "if-none-match": response.headers["etag"]}
        )
        assert not_modified.status_code == 304
        assert_headers(not_modified, {**validators(docroot, "site.css"), **extra, **HIT})


@pytest.mark.parametrize(
    ("url", "accept", "output", "extra"),
    [
        ("/photo.jpg?w=50", "image/webp", "webp", {"vary": "Accept"}),
        ("/?file=photo.jpg&w=50", "image/jpeg", "jpeg", {"vary": "Accept"}),
        ("/photo.jpg?w=50&format=png", "image/webp", "png", {}),
    ],
)
@pytest.mark.parametrize("method", ["GET", "HEAD"])
async def test_image_render_and_its_304(
    hot: dict[str, bytes],
    opt: httpx.AsyncClient,
    docroot: Path,
    url: str,
    accept: str,
    output: str,
    extra: dict[str, str],
    method: str,
) -> None:
    body = (await opt.get(url, headers={"accept": accept})).content
    size = str(len(body))
    ratio = f"{(1 - len(body) / len(hot['photo.jpg'])) * 100:.1f}%"
    for response in await repeated(opt, method, url, {"accept": accept}):
        assert response.status_code == 200
        assert response.content == (body if method == "GET" else b"")
        assert_headers(
            response,
            {
                **validators(docroot, "photo.jpg"),
                **extra,
                "x-output-format": output,
                "x-optimizer-cache": "HIT",  # the first GET filled the result cache
                "x-original-size": str(len(hot["photo.jpg"])),
                "x-compressed-size": size,
                "x-compression-ratio": ratio,
                "content-length": size,
                "content-type": f"image/{output}",
                **HIT,
            },
        )
        not_modified = await opt.request(
            method, url, headers={"accept": accept, "if-none-match": response.headers["etag"]}
        )
        assert not_modified.status_code == 304
        assert_headers(not_modified, {**validators(docroot, "photo.jpg"), **extra, **HIT})


async def test_image_pass_through(
    opt: httpx.AsyncClient, hot: dict[str, bytes], docroot: Path
) -> None:
    size = str(len(hot["photo.jpg"]))
    for response in await repeated(opt, "GET", "/photo.jpg?format=jpeg"):
        assert response.content == hot["photo.jpg"]
        assert_headers(
            response,
            {
                **validators(docroot, "photo.jpg"),
                "x-output-format": "jpeg",
                "x-original-size": size,
                "x-optimizer-status": "passthrough",
                "content-type": "image/jpeg",
                "accept-ranges": "bytes",
                "content-length": size,
                **BYPASS,
            },
        )
