"""asset_response over HTTP, mounted in a tiny Starlette app of its own (no optimizer needed)."""

from __future__ import annotations

import gzip
import logging
import os
import re
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from assetgate.cache import Cache
from assetgate.cpu.workgate import WorkGate
from assetgate.errors import AppError
from assetgate.minify.minifiers import minify_css, minify_js
from assetgate.minify.pool import MinifyPool
from assetgate.minify.render import Rendered
from assetgate.minify.respond import asset_response, is_asset
from assetgate.minify.result_codec import RENDERED
from assetgate.minify.sandbox import Sandbox
from assetgate.serving.versions import FileVersions
from assetgate.web.paths import resolve_under
from assetgate.web.responses import on_app_error
from tests.cpu.gates import admitted
from tests.waiting import wait_until_async

pytestmark = pytest.mark.anyio

JS = (
    b"/*! licence */\nfunction add ( a , b ) {\n  return a + b ;   \n}\n\n\n"
    b"// note\nvar x = `t  ${ `u` }`;\n"
)
CSS = b"/* comment */\n.card  {  color : red ;  margin : 0 auto ; }\n" * 40
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"


@dataclass
class Harness:
    client: httpx.AsyncClient
    root: Path
    cache: Cache[Rendered]
    gate: WorkGate  # the minifier's door

    def write(self, name: str, data: bytes) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path


def make_app(
    root: Path, lane: MinifyPool, cache: Cache[Rendered], sources: FileVersions, max_bytes: int
) -> Starlette:
    async def serve(request: Request) -> Response:
        found = resolve_under(root, request.path_params["path"])
        if found is None or not is_asset(found.path):
            raise AppError.not_found()
        return await asset_response(
            request,
            found.path,
            source_stat=found.stat,
            pool=lane,
            versions=sources,
            cache=cache,
            cache_control="public, max-age=60",
            max_bytes=max_bytes,
            extra_headers={"Access-Control-Allow-Origin": "*"},
        )

    return Starlette(
        routes=[Route("/{path:path}", serve, methods=["GET", "HEAD"])],
        exception_handlers={AppError: on_app_error},
    )


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    async with make_harness(tmp_path) as made:
        yield made


class make_harness:
    def __init__(
        self,
        root: Path,
        *,
        max_bytes: int = 1_000_000,
        workers: int = 2,
        queue: int = 8,
        timeout_s: float = 30.0,
    ):
        self.root, self.max_bytes = root, max_bytes
        self.pool = MinifyPool(
            renders=WorkGate(workers, queue),
            minify=WorkGate(workers, queue, timeout_s=timeout_s),
            sandbox=Sandbox(workers),
        )
        self.gate = self.pool.minify
        self.cache = Cache("assets", RENDERED, memory_bytes=1_000_000)

    async def __aenter__(self) -> Harness:
        sources = FileVersions(body_budget_bytes=1_000_000)
        app = make_app(self.root, self.pool, self.cache, sources, self.max_bytes)
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://assets.test"
        )
        return Harness(self.client, self.root, self.cache, self.gate)

    async def __aexit__(self, *exc: object) -> None:
        await self.client.aclose()
        self.pool.close()


NO_GZIP = {"Accept-Encoding": "identity"}


async def test_plain_request_passes_the_file_through(harness: Harness) -> None:
    harness.write("js/app.js", JS)
    response = await harness.client.get("/js/app.js", headers=NO_GZIP)
    assert response.status_code == 200
    assert response.content == JS
    assert response.headers["content-type"] == "application/javascript; charset=utf-8"
    assert response.headers["x-optimizer-status"] == "passthrough"
    assert response.headers["cache-control"] == "public, max-age=60"
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert re.fullmatch(r'"[0-9a-f]{24}"', response.headers["etag"])
    assert response.headers["last-modified"].endswith(" GMT")
    assert "vary" not in response.headers
    assert response.headers["x-original-size"] == str(len(JS))  # as for images (spec §2.3)
    assert "x-compressed-size" not in response.headers


async def test_min_1_minifies_css_with_size_headers(harness: Harness) -> None:
    harness.write("site.css", CSS)
    response = await harness.client.get("/site.css?min=1", headers=NO_GZIP)
    assert response.status_code == 200
    assert response.content == minify_css(CSS)
    assert response.headers["content-type"] == "text/css; charset=utf-8"
    assert response.headers["x-original-size"] == str(len(CSS))
    assert response.headers["x-compressed-size"] == str(len(response.content))
    assert response.headers["content-length"] == str(len(response.content))
    expected = f"{(len(CSS) - len(response.content)) * 100 / len(CSS):.1f}%"
    assert response.headers["x-compression-ratio"] == expected
    assert "x-optimizer-status" not in response.headers
    assert "content-encoding" not in response.headers


async def test_min_1_minifies_js_keeping_the_licence(harness: Harness) -> None:
    harness.write("app.mjs", JS)
    response = await harness.client.get("/app.mjs?min=1", headers=NO_GZIP)
    assert response.content == minify_js(JS)
    assert response.content.startswith(b"/*! licence */function add(a,b)")
    assert b"`t  ${ `u` }`" in response.content
    assert response.headers["content-type"] == "application/javascript; charset=utf-8"


async def test_safe_1_tidies_and_wins_over_min(harness: Harness) -> None:
    harness.write("app.js", JS)
    safe = await harness.client.get("/app.js?safe=1", headers=NO_GZIP)
    both = await harness.client.get("/app.js?min=1&safe=1", headers=NO_GZIP)
    expected = JS.replace(b";   \n}\n\n\n", b";\n}\n")
    assert safe.content == expected
    assert both.content == expected
    assert safe.headers["etag"] == both.headers["etag"]


async def test_safe_1_on_css_changes_nothing(harness: Harness) -> None:
    harness.write("a.css", CSS)
    response = await harness.client.get("/a.css?safe=1", headers=NO_GZIP)
    assert response.content == CSS
    assert response.headers["x-optimizer-status"] == "passthrough"


async def test_compress_1_gzips_when_accepted(harness: Harness) -> None:
    harness.write("a.css", CSS)
    response = await harness.client.get(
        "/a.css?min=1&compress=1", headers={"Accept-Encoding": "br;q=1.0, gzip;q=0.8"}
    )
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["vary"] == "Accept-Encoding"
    assert response.content == minify_css(CSS)  # httpx decoded it
    raw_size = int(response.headers["content-length"])
    assert response.headers["x-compressed-size"] == str(raw_size)
    assert raw_size < len(minify_css(CSS)) / 5


@pytest.mark.parametrize("accept", ["gzip;q=0", "identity", "br", ""])
async def test_compress_1_without_gzip_acceptance_is_identity(
    harness: Harness, accept: str
) -> None:
    harness.write("a.css", CSS)
    response = await harness.client.get("/a.css?compress=1", headers={"Accept-Encoding": accept})
    assert "content-encoding" not in response.headers
    assert response.headers["vary"] == "Accept-Encoding"
    assert response.content == CSS
    assert response.headers["x-optimizer-status"] == "passthrough"


async def test_gzip_bytes_are_deterministic(harness: Harness) -> None:
    harness.write("a.js", JS * 20)
    first = await harness.client.get("/a.js?compress=1", headers={"Accept-Encoding": "gzip"})
    harness.cache.memory.clear()
    second = await harness.client.get("/a.js?compress=1", headers={"Accept-Encoding": "gzip"})
    assert second.headers["x-asset-cache"] == "miss"
    assert first.headers["etag"] == second.headers["etag"]
    raw = [await _raw_body(harness, "/a.js?compress=1") for _ in range(2)]
    assert raw[0] == raw[1]
    assert gzip.decompress(raw[0]) == JS * 20


async def _raw_body(harness: Harness, url: str) -> bytes:
    async with harness.client.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as response:
        return b"".join([chunk async for chunk in response.aiter_raw()])


@pytest.mark.parametrize(
    "query",
    ["", "?min=1", "?min=1&compress=1", "?safe=1", "?compress=1"],
)
async def test_head_has_the_get_headers_and_no_body(harness: Harness, query: str) -> None:
    harness.write("a.js", JS * 10)
    headers = {"Accept-Encoding": "gzip"}
    get = await harness.client.get(f"/a.js{query}", headers=headers)
    head = await harness.client.head(f"/a.js{query}", headers=headers)
    assert head.status_code == 200
    assert head.content == b""
    ignore = {"date", "x-asset-cache", "cache-status"}  # the cache state: a miss, then a hit
    assert {k: v for k, v in head.headers.items() if k not in ignore} == {
        k: v for k, v in get.headers.items() if k not in ignore
    }
    assert int(head.headers["content-length"]) > 0


async def test_etag_depends_on_flags_encoding_and_file(harness: Harness) -> None:
    path = harness.write("a.js", JS)
    gz = {"Accept-Encoding": "gzip"}

    async def etag(query: str, headers: dict[str, str] | None = None) -> str:
        response = await harness.client.get(f"/a.js{query}", headers=headers or NO_GZIP)
        return response.headers["etag"]

    tags = {
        "plain": await etag(""),
        "min": await etag("?min=1"),
        "safe": await etag("?safe=1"),
        "gzip": await etag("?compress=1", gz),
        "min+gzip": await etag("?min=1&compress=1", gz),
    }
    assert len(set(tags.values())) == len(tags)
    assert await etag("?safe=0&min=1&width=300") == tags["min"]  # same bytes, same tag
    assert await etag("?compress=1") == tags["plain"]  # no gzip accepted: the same bytes
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert await etag("?min=1") == tags["min"]  # the tag is the content's, not the mtime's
    path.write_bytes(JS.replace(b"add", b"sum"))  # same size, new bytes
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert await etag("?min=1") != tags["min"]


@pytest.mark.parametrize("query", ["", "?min=1&compress=1"])
async def test_conditional_requests_get_304(harness: Harness, query: str) -> None:
    harness.write("a.css", CSS)
    first = await harness.client.get(f"/a.css{query}", headers={"Accept-Encoding": "gzip"})
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    for headers in (
        {"If-None-Match": etag},
        {"If-None-Match": f'"other", W/{etag}'},
        {"If-None-Match": "*"},
        {"If-Modified-Since": modified},
    ):
        response = await harness.client.get(
            f"/a.css{query}", headers={"Accept-Encoding": "gzip", **headers}
        )
        assert response.status_code == 304, headers
        assert response.content == b""
        assert response.headers["etag"] == etag
        assert response.headers["cache-control"] == "public, max-age=60"
    stale = await harness.client.get(
        f"/a.css{query}",
        headers={"If-None-Match": '"other"', "If-Modified-Since": modified},
    )
    assert stale.status_code == 200  # If-None-Match wins over If-Modified-Since


@pytest.mark.parametrize(
    ("query", "param"), [("min=2", "min"), ("compress=true", "compress"), ("safe=", "safe")]
)
async def test_bad_flag_is_400_naming_it(harness: Harness, query: str, param: str) -> None:
    harness.write("a.js", JS)
    response = await harness.client.get(f"/a.js?{query}")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == 400
    assert body["error"].startswith(f"{param}: expected 0 or 1")


async def test_image_parameters_are_ignored(harness: Harness) -> None:
    harness.write("a.js", JS)
    response = await harness.client.get("/a.js?width=abc&format=nope&min=1", headers=NO_GZIP)
    assert response.status_code == 200
    assert response.content == minify_js(JS)


async def test_binary_content_is_415(harness: Harness) -> None:
    harness.write("fake.js", PNG)
    response = await harness.client.get("/fake.js?min=1")
    assert response.status_code == 415
    assert response.json() == {"error": "the file is not CSS or JavaScript text", "code": 415}
    head = await harness.client.head("/fake.js")
    assert head.status_code == 415
    assert head.content == b""


async def test_missing_file_is_404(harness: Harness) -> None:
    response = await harness.client.get("/nope.js?min=1")
    assert response.status_code == 404


async def test_over_the_size_cap_is_served_unchanged_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with make_harness(tmp_path, max_bytes=100) as harness:
        harness.write("big.css", CSS)
        with caplog.at_level(logging.INFO, logger="assetgate.minify"):
            response = await harness.client.get("/big.css?min=1&compress=1")
    assert response.status_code == 200
    assert response.content == CSS
    assert response.headers["x-optimizer-status"] == "passthrough"
    assert response.headers["x-minify-skipped"] == "size"
    assert "content-encoding" not in response.headers
    assert any("over the 100 byte cap" in r.getMessage() for r in caplog.records)


async def test_minifier_failure_serves_the_original_and_logs_once(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    source = "var x = `${ `a` }`;  // `\ufdd0` makes the template guard refuse\n".encode()
    harness.write("odd.js", source)
    with caplog.at_level(logging.WARNING, logger="assetgate.minify"):
        first = await harness.client.get("/odd.js?min=1", headers=NO_GZIP)
        second = await harness.client.get("/odd.js?min=1", headers=NO_GZIP)
    assert first.status_code == second.status_code == 200
    assert first.content == second.content == source
    assert first.headers["x-optimizer-status"] == "passthrough"
    assert first.headers["x-minify-skipped"] == second.headers["x-minify-skipped"] == "refused"
    warnings = [r.getMessage() for r in caplog.records if "served without minify" in r.getMessage()]
    assert len(warnings) == 1
    assert "odd.js" in warnings[0]
    assert str(harness.root) not in first.text


async def test_repeat_is_a_cache_hit(harness: Harness) -> None:
    harness.write("a.css", CSS)
    first = await harness.client.get("/a.css?min=1", headers=NO_GZIP)
    second = await harness.client.get("/a.css?min=1", headers=NO_GZIP)
    assert (first.headers["x-asset-cache"], second.headers["x-asset-cache"]) == ("miss", "hit")
    assert first.content == second.content
    assert first.headers["etag"] == second.headers["etag"]


async def test_changed_file_is_rendered_again(harness: Harness) -> None:
    path = harness.write("a.css", CSS)
    await harness.client.get("/a.css?min=1", headers=NO_GZIP)
    path.write_bytes(b"b  {  x : y  }")
    response = await harness.client.get("/a.css?min=1", headers=NO_GZIP)
    assert response.content == b"b{x:y}"
    assert response.headers["x-asset-cache"] == "miss"


async def test_cpu_work_goes_through_the_gate(tmp_path: Path) -> None:
    async with make_harness(tmp_path, workers=1, queue=0) as harness:
        harness.write("a.css", CSS)
        release = threading.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(harness.gate.run, release.wait, 5)  # the only worker is busy
            await wait_until_async(lambda: admitted(harness.gate) == 1)
            busy = await harness.client.get("/a.css?min=1")
            passthrough = await harness.client.get("/a.css")
            release.set()
        assert busy.status_code == 503
        assert busy.headers["retry-after"] == "1"
        assert passthrough.status_code == 200  # serving a file needs no CPU slot
        assert (await harness.client.get("/a.css?min=1")).status_code == 200


def test_is_asset() -> None:
    assert [is_asset(p) for p in ("a.css", "b.JS", "c.mjs", "d.png", "e")] == [
        True,
        True,
        True,
        False,
        False,
    ]
