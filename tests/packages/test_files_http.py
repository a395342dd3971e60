"""Pinned files, redirects and the store through the real app against a loopback registry."""

from __future__ import annotations

import asyncio
import base64
import gzip
import hashlib
import io
import json
import sqlite3
import tarfile
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.packages.upstream import FakeUpstream, LibraryCatalog, Registry, make_tarball, sri512

pytestmark = pytest.mark.anyio

JS = b"/* demo */\nexport function hello() {\n  return 'hello';\n}\n"
PINNED = "public, max-age=31536000, immutable"


def store_rows(store: Path, table: str) -> int:
    with sqlite3.connect(store / "index.sqlite3") as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def blob_files(store: Path) -> int:
    return sum(1 for p in (store / "blobs").rglob("*") if p.is_file())


@pytest.fixture
def demo(registry: Registry) -> bytes:
    files = {
        "dist/demo.js": JS,
        "dist/demo.min.js": b"export function hello(){return'hello'}",
        "dist/demo.mjs": b"export{}",
        "dist/demo.cjs": b"module.exports={}",
        "dist/demo.css": b"body { color: red; }\n",
        "dist/big.css": b"".join(b".c%d {  color: red;  margin: 0; }\n" % i for i in range(200)),
        "dist/demo.js.map": b'{"version":3}',
        "dist/demo.wasm": b"\x00asm\x01\x00\x00\x00",
        "dist/font.woff2": b"wOF2",
        "dist/logo.png": b"\x89PNG\r\n\x1a\n",
        "dist/logo.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>",
        "docs/index.html": b"<script>alert(document.cookie)</script>",
        "README.md": b"# demo",
        "LICENSE": b"MIT",
        "data.bin": b"\x00\x01",
    }
    registry.publish("demo", "1.0.0", files, manifest={"main": "dist/demo.js"})
    registry.publish(
        "demo", "1.1.0", files, manifest={"main": "dist/demo.js"}, tags={"latest": "1.1.0"}
    )
    return registry.publish(
        "demo",
        "2.0.0-beta.1",
        files,
        manifest={"main": "dist/demo.js"},
        tags={"beta": "2.0.0-beta.1"},
    )


async def test_range_and_tag_redirect_to_the_exact_version(
    npm: httpx.AsyncClient, demo: bytes
) -> None:
    cases = {
        "/npm/demo@^1/": "/npm/demo@1.1.0/",
        "/npm/demo@latest/dist/demo.js": "/npm/demo@1.1.0/dist/demo.js",
        "/npm/demo@beta/": "/npm/demo@2.0.0-beta.1/",
        "/npm/demo@~1.0/dist/": "/npm/demo@1.0.0/dist/",
        "/npm/demo/dist/demo.js?min=1": "/npm/demo@1.1.0/dist/demo.js?min=1",
        "/npm/demo": "/npm/demo@1.1.0/",
        "/npm/demo@1/": "/npm/demo@1.1.0/",
    }
    for url, location in cases.items():
        response = await npm.get(url)
        assert response.status_code == 302, url
        assert response.headers["location"] == location
        assert response.headers["cache-control"] == "public, max-age=300"
        assert response.headers["x-resolved-version"] == location.split("@")[1].split("/")[0]
        assert response.headers["access-control-allow-origin"] == "*"


async def test_openapi_lists_the_redirect_of_a_range_or_tag(
    npm: httpx.AsyncClient, demo: bytes
) -> None:
    """``/npm/demo@^1/dist/demo.js`` answers 302; the operation it belongs to must say so."""
    paths = (await npm.get("/openapi.json")).json()["paths"]
    cases = {
        "/npm/demo@^1/": "/npm/{package}@{version}/",
        "/npm/demo@latest/dist/demo.js": "/npm/{package}@{version}/{path}",
    }
    for url, template in cases.items():
        response = await npm.get(url)
        assert response.status_code == 302, url
        declared = paths[template]["get"]["responses"]
        assert str(response.status_code) in declared, template
        headers = declared["302"].get("headers", {})
        assert {"Location", "X-Resolved-Version"} <= set(headers), template


async def test_default_file_redirect_and_reason(npm: httpx.AsyncClient, demo: bytes) -> None:
    response = await npm.get("/npm/demo@1.0.0/")
    assert response.status_code == 302
    assert response.headers["location"] == "/npm/demo@1.0.0/dist/demo.min.js"
    assert response.headers["x-default-file-reason"] == "main+min-sibling"
    assert response.headers["cache-control"] == "public, max-age=86400"
    same = await npm.get("/npm/demo@1.0.0")
    assert same.headers["location"] == "/npm/demo@1.0.0/dist/demo.min.js"
    followed = await npm.get("/npm/demo@^1.0.0/", follow_redirects=True)
    assert followed.status_code == 200
    assert followed.url.path == "/npm/demo@1.1.0/dist/demo.min.js"


async def test_pinned_file_headers(npm: httpx.AsyncClient, demo: bytes) -> None:
    response = await npm.get("/npm/demo@1.0.0/dist/demo.js")
    assert response.status_code == 200
    assert response.content == JS
    digest = hashlib.sha256(JS).hexdigest()
    headers = response.headers
    assert headers["content-type"] == "application/javascript; charset=utf-8"
    assert headers["cache-control"] == PINNED
    assert headers["etag"] == f'"{digest}"'
    assert (
        headers["content-digest"] == f"sha-256=:{base64.b64encode(bytes.fromhex(digest)).decode()}:"
    )
    assert headers["access-control-allow-origin"] == "*"
    assert headers["cross-origin-resource-policy"] == "cross-origin"
    assert headers["timing-allow-origin"] == "*"
    assert headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in headers["content-security-policy"]
    assert "default-src 'none'" in headers["content-security-policy"]
    assert headers["content-length"] == str(len(JS))

    again = await npm.get(
        "/npm/demo@1.0.0/dist/demo.js", headers={"If-None-Match": headers["etag"]}
    )
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == headers["etag"]
    head = await npm.head("/npm/demo@1.0.0/dist/demo.js")
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == str(len(JS))
    ranged = await npm.get("/npm/demo@1.0.0/dist/demo.js", headers={"Range": "bytes=0-9"})
    assert ranged.status_code == 206
    assert ranged.content == JS[:10]


@pytest.mark.parametrize(
    ("path", "media"),
    [
        ("dist/demo.mjs", "application/javascript; charset=utf-8"),
        ("dist/demo.cjs", "application/javascript; charset=utf-8"),
        ("dist/demo.css", "text/css; charset=utf-8"),
        ("dist/demo.js.map", "application/json; charset=utf-8"),
        ("dist/demo.wasm", "application/wasm"),
        ("dist/font.woff2", "font/woff2"),
        ("dist/logo.png", "image/png"),
        ("dist/logo.svg", "image/svg+xml"),
        ("docs/index.html", "text/plain; charset=utf-8"),
        ("README.md", "text/plain; charset=utf-8"),
        ("LICENSE", "text/plain; charset=utf-8"),
        ("data.bin", "application/octet-stream"),
    ],
)
async def test_content_types(npm: httpx.AsyncClient, demo: bytes, path: str, media: str) -> None:
    response = await npm.get(f"/npm/demo@1.0.0/{path}")
    assert response.status_code == 200
    assert response.headers["content-type"] == media
    assert "sandbox" in response.headers["content-security-policy"]


async def test_misses_are_404_with_a_short_cache(npm: httpx.AsyncClient, demo: bytes) -> None:
    for url in [
        "/npm/demo@1.0.0/missing.js",
        "/npm/demo@9.9.9/",
        "/npm/demo@^9/",
        "/npm/nosuchpkg@1.0.0/",
        "/npm/demo@1.0.0/%2e%2e/%2e%2e/etc/passwd",
        "/npm/demo@1.0.0/nothing-here/",
        "/npm/.bad@1.0.0/",
    ]:
        response = await npm.get(url)
        assert response.status_code == 404, url
        assert response.json()["code"] == 404
        assert response.headers["cache-control"] == "public, max-age=60"


async def test_methods(npm: httpx.AsyncClient, demo: bytes) -> None:
    post = await npm.post("/npm/demo@1.0.0/dist/demo.js")
    assert post.status_code == 405
    assert post.json()["code"] == 405
    options = await npm.options("/npm/demo@1.0.0/dist/demo.js")
    assert options.status_code == 204
    assert options.headers["access-control-allow-origin"] == "*"


async def test_listing_and_sri(npm: httpx.AsyncClient, demo: bytes) -> None:
    meta = (await npm.get("/npm/demo@1.0.0/?meta")).json()
    assert meta["package"] == "demo"
    assert meta["version"] == "1.0.0"
    by_path = {f["path"]: f for f in meta["files"]}
    assert by_path["/dist/demo.js"]["integrity"] == sri512(JS)
    assert by_path["/dist/demo.js"]["sha256"] == hashlib.sha256(JS).hexdigest()
    assert by_path["/dist/demo.js"]["size"] == len(JS)
    sub = (await npm.get("/npm/demo@1.0.0/docs/?meta")).json()
    assert [f["path"] for f in sub["files"]] == ["/docs/index.html"]
    sri = (await npm.get("/npm/demo@1.0.0/?sri")).json()
    assert sri["url"] == "/npm/demo@1.0.0/dist/demo.min.js"
    assert sri["integrity"] == sri512(b"export function hello(){return'hello'}")
    assert sri["module"] == "esm"


REACT_INDEX = (
    b"'use strict';\nif (process.env.NODE_ENV === 'production') {\n"
    b"  module.exports = require('./cjs/react.production.min.js');\n} else {\n"
    b"  module.exports = require('./cjs/react.development.js');\n}\n"
)
UMD = (
    b"(function (g, f) { typeof exports === 'object' && typeof module !== 'undefined' ?"
    b" f(exports) : (g = g || self, f(g.Umd = {})); }(this, function (exports) {"
    b" exports.version = '1'; }));\n"
)


async def test_sri_says_which_default_files_a_script_tag_cannot_run(
    npm: httpx.AsyncClient, registry: Registry
) -> None:
    # Issue 36, item 7: react's CommonJS index.js threw "process is not defined" from the page's
    # <script src>; the page reads ``module`` here and offers the +esm import for it instead.
    registry.publish("reactish", "1.0.0", {"index.js": REACT_INDEX}, manifest={"main": "index.js"})
    registry.publish("umdish", "1.0.0", {"umd/umdish.js": UMD}, manifest={"main": "umd/umdish.js"})
    registry.publish("cssish", "1.0.0", {"a.css": b"a{}"}, manifest={"style": "a.css"})
    cjs = (await npm.get("/npm/reactish@1.0.0/?sri")).json()
    assert (cjs["url"], cjs["module"]) == ("/npm/reactish@1.0.0/index.js", "commonjs")
    assert cjs["integrity"] == sri512(REACT_INDEX)
    umd = (await npm.get("/npm/umdish@1.0.0/?sri")).json()
    assert (umd["url"], umd["module"]) == ("/npm/umdish@1.0.0/umd/umdish.js", "script")
    css = (await npm.get("/npm/cssish@1.0.0/?sri")).json()
    assert css["url"] == "/npm/cssish@1.0.0/a.css"
    assert "module" not in css


async def test_min_on_a_package_file_goes_through_the_asset_pipeline(
    npm: httpx.AsyncClient, demo: bytes
) -> None:
    response = await npm.get("/npm/demo@1.0.0/dist/demo.js?min=1")
    assert response.status_code == 200
    assert response.headers["cache-control"] == PINNED
    assert response.headers["access-control-allow-origin"] == "*"
    assert len(response.content) < len(JS)
    assert b"hello" in response.content
    gz = await npm.get(
        "/npm/demo@1.0.0/dist/big.css?min=1&compress=1", headers={"Accept-Encoding": "gzip"}
    )
    assert gz.status_code == 200
    assert gz.headers.get("content-encoding") == "gzip"
    assert gz.content.startswith(b".c0{")  # httpx decoded the gzip body
    assert int(gz.headers["content-length"]) < 2000
    bad = await npm.get("/npm/demo@1.0.0/dist/demo.js?min=2")
    assert bad.status_code == 400


async def test_scoped_packages(npm: httpx.AsyncClient, registry: Registry) -> None:
    registry.publish(
        "@popperjs/core",
        "2.11.8",
        {"dist/umd/popper.min.js": b"popper", "lib/index.js": b"node"},
        manifest={"unpkg": "dist/umd/popper.min.js", "main": "lib/index.js"},
    )
    response = await npm.get("/npm/@popperjs/core@2/")
    assert response.headers["location"] == "/npm/@popperjs/core@2.11.8/"
    response = await npm.get("/npm/@popperjs/core@2.11.8/")
    assert response.headers["location"] == "/npm/@popperjs/core@2.11.8/dist/umd/popper.min.js"
    assert response.headers["x-default-file-reason"] == "unpkg"
    file = await npm.get("/npm/@popperjs/core@2.11.8/dist/umd/popper.min.js")
    assert file.content == b"popper"
    encoded = await npm.get("/npm/%40popperjs/core@2.11.8/lib/index.js")
    assert encoded.content == b"node"


async def test_a_package_named_lib_and_the_library_route(
    npm: httpx.AsyncClient, registry: Registry, catalog: LibraryCatalog
) -> None:
    registry.publish("lib", "1.0.0", {"index.js": b"the lib package", "jquery.js": b"lib's own"})
    catalog.add("jquery", "3.7.1", {"jquery.min.js": b"/*! jQuery */"})
    assert (await npm.get("/npm/lib@1.0.0/index.js")).content == b"the lib package"
    latest = await npm.get("/npm/lib/jquery.js")
    assert latest.status_code == 302
    assert latest.headers["location"] == "/npm/lib@1.0.0/jquery.js"
    assert (await npm.get("/npm/lib@1.0.0/")).headers["location"] == "/npm/lib@1.0.0/index.js"
    library = await npm.get("/npm/lib/jquery@3.7.1/jquery.min.js")
    assert library.status_code == 200
    assert library.content == b"/*! jQuery */"
    assert library.headers["cache-control"] == PINNED
    assert library.headers["content-type"] == "application/javascript; charset=utf-8"


async def test_library_files_are_verified_against_the_catalog_sri(
    npm: httpx.AsyncClient, catalog: LibraryCatalog, upstream: FakeUpstream, tmp_path: Path
) -> None:
    catalog.add("bad", "1.0.0", {"bad.js": b"tampered"}, sri={"bad.js": sri512(b"original")})
    response = await npm.get("/npm/lib/bad@1.0.0/bad.js")
    assert response.status_code == 502
    assert "integrity" in response.json()["error"]
    assert store_rows(tmp_path / "store", "files") == 0
    assert blob_files(tmp_path / "store") == 0
    assert (await npm.get("/npm/lib/bad@1.0.0/other.js")).status_code == 404  # not in the list
    assert (await npm.get("/npm/lib/bad@9.9.9/bad.js")).status_code == 404
    assert (await npm.get("/npm/lib/bad@1.0.0/")).status_code == 404


@pytest.mark.parametrize(
    "sri", ["sha512-AAAA", "sha512-not base64!", "md5-1B2M2Y8AsgTpgAmY7PhCfg=="]
)
async def test_an_unusable_catalog_sri_is_502_and_nothing_is_stored(
    npm: httpx.AsyncClient, catalog: LibraryCatalog, tmp_path: Path, sri: str
) -> None:
    catalog.add("odd", "1.0.0", {"odd.js": b"bad()"}, sri={"odd.js": sri})
    response = await npm.get("/npm/lib/odd@1.0.0/odd.js")
    assert response.status_code == 502
    assert response.json() == {
        "error": "library catalog: unusable integrity value for odd.js",
        "code": 502,
    }
    assert store_rows(tmp_path / "store", "files") == 0


async def test_integrity_mismatch_is_502_and_nothing_is_stored(
    npm: httpx.AsyncClient, registry: Registry, upstream: FakeUpstream, tmp_path: Path
) -> None:
    registry.publish("evil", "1.0.0", {"index.js": b"x"}, integrity=sri512(b"something else"))
    response = await npm.get("/npm/evil@1.0.0/index.js")
    assert response.status_code == 502
    assert response.json() == {
        "error": "tarball failed its integrity check; nothing was stored",
        "code": 502,
    }
    assert store_rows(tmp_path / "store", "versions") == 0
    assert blob_files(tmp_path / "store") == 0
    assert list((tmp_path / "store" / "tmp").iterdir()) == []
    again = await npm.get("/npm/evil@1.0.0/index.js")
    assert again.status_code == 502
    assert upstream.hits[registry.tarball_path("evil", "1.0.0")] == 1  # failure remembered


async def test_shasum_is_used_when_integrity_is_absent(
    npm: httpx.AsyncClient, registry: Registry
) -> None:
    registry.publish("old", "0.1.0", {"index.js": b"old"}, integrity="")
    assert (await npm.get("/npm/old@0.1.0/index.js")).content == b"old"


async def test_hostile_tarballs_through_http(
    npm: httpx.AsyncClient, registry: Registry, tmp_path: Path
) -> None:
    def hostile(archive: tarfile.TarFile) -> None:
        for name in ("package/../../escape.js", "/etc/evil.js"):
            info = tarfile.TarInfo(name)
            info.size = 4
            archive.addfile(info, io.BytesIO(b"evil"))
        link = tarfile.TarInfo("package/link.js")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        archive.addfile(link)
        hard = tarfile.TarInfo("package/hard.js")
        hard.type = tarfile.LNKTYPE
        hard.linkname = "package/index.js"
        archive.addfile(hard)

    data = make_tarball({"index.js": b"safe", "package.json": b"{}"}, extra=hostile)
    registry.publish("hostile", "1.0.0", tarball=data)
    assert (await npm.get("/npm/hostile@1.0.0/index.js")).content == b"safe"
    for path in ("link.js", "hard.js", "escape.js", "../escape.js", "etc/evil.js"):
        assert (await npm.get(f"/npm/hostile@1.0.0/{path}")).status_code == 404
    assert not list(tmp_path.rglob("escape.js"))

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as archive:
        for index in range(40):
            info = tarfile.TarInfo(f"package/zeros{index}.bin")
            info.size = 1024 * 1024
            archive.addfile(info, io.BytesIO(bytes(info.size)))
    registry.publish("bomb", "1.0.0", tarball=gzip.compress(raw.getvalue()))
    response = await npm.get("/npm/bomb@1.0.0/zeros0.bin")
    assert response.status_code == 413
    assert store_rows(tmp_path / "store", "versions") == 1  # only "hostile"


async def test_tarball_on_another_origin_is_never_contacted(
    npm: httpx.AsyncClient, registry: Registry, upstream: FakeUpstream
) -> None:
    registry.publish(
        "moved", "1.0.0", {"index.js": b"here"}, tarball_url="http://127.0.0.2:9/moved.tgz"
    )
    assert (await npm.get("/npm/moved@1.0.0/index.js")).content == b"here"
    assert upstream.hits[registry.tarball_path("moved", "1.0.0")] == 1


async def test_concurrent_first_requests_share_one_download(
    npm: httpx.AsyncClient, registry: Registry, upstream: FakeUpstream
) -> None:
    registry.publish("busy", "1.0.0", {"index.js": b"busy"}, delay_s=0.3)
    responses = await asyncio.gather(*(npm.get("/npm/busy@1.0.0/index.js") for _ in range(8)))
    assert [r.status_code for r in responses] == [200] * 8
    assert upstream.hits[registry.tarball_path("busy", "1.0.0")] == 1
    assert upstream.hits["/busy"] == 1


async def test_pinned_files_and_stale_aliases_survive_an_outage(
    pkg_settings: Callable[..., Settings], registry: Registry, upstream: FakeUpstream
) -> None:
    registry.publish("sturdy", "1.0.0", {"index.js": b"sturdy"})
    settings = pkg_settings()
    async with app_client(settings) as client:
        assert (await client.get("/npm/sturdy@1.0.0/index.js")).status_code == 200
    upstream.down = True
    async with app_client(settings) as client:  # a fresh process: nothing in memory
        assert (await client.get("/npm/sturdy@1.0.0/index.js")).content == b"sturdy"
        alias = await client.get("/npm/sturdy@^1/index.js")
        assert alias.status_code == 302
        assert alias.headers["location"] == "/npm/sturdy@1.0.0/index.js"
        missing = await client.get("/npm/never-seen@^1/")
        assert missing.status_code == 502


async def test_store_budget_evicts_least_recently_used(
    pkg_settings: Callable[..., Settings], registry: Registry, tmp_path: Path
) -> None:
    big = bytes(range(256)) * 40  # 10 KiB, incompressible enough
    registry.publish("one", "1.0.0", {"a.bin": big + b"1"})
    registry.publish("two", "1.0.0", {"a.bin": big + b"2"})
    async with app_client(pkg_settings(store_max_bytes=15_000)) as client:
        assert (await client.get("/npm/one@1.0.0/a.bin")).status_code == 200
        assert (await client.get("/npm/two@1.0.0/a.bin")).status_code == 200
        with sqlite3.connect(tmp_path / "store" / "index.sqlite3") as db:
            names = [r[0] for r in db.execute("SELECT name FROM versions")]
        assert names == ["two"]
        again = await client.get("/npm/one@1.0.0/a.bin")  # fetched again on demand
        assert again.status_code == 200
        assert again.content == big + b"1"


async def test_packument_json_is_not_trusted_blindly(
    npm: httpx.AsyncClient, upstream: FakeUpstream
) -> None:
    from tests.packages.upstream import Reply

    upstream.routes["/weird"] = Reply(json.dumps(["not", "a", "packument"]).encode())
    response = await npm.get("/npm/weird@^1/")
    assert response.status_code == 502
    assert response.json()["code"] == 502


async def test_folder_below_the_root_is_an_escaped_html_list(
    npm: httpx.AsyncClient, registry: Registry
) -> None:
    registry.publish("folder", "1.0.0", {"dist/a.js": b"a", "dist/<b>&.js": b"b", "c.js": b"c"})
    response = await npm.get("/npm/folder@1.0.0/dist/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert "script-src" not in response.headers["content-security-policy"]
    assert "default-src 'none'" in response.headers["content-security-policy"]
    text = response.text
    assert '<a href="/npm/folder@1.0.0/dist/a.js">a.js</a>' in text
    assert "&lt;b&gt;&amp;.js" in text
    assert "<b>" not in text
    assert "c.js" not in text
    head = await npm.head("/npm/folder@1.0.0/dist/")  # the GET's headers, Content-Length too
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == response.headers["content-length"]
    assert head.headers["content-length"] == str(len(response.content))


async def test_a_package_file_is_tagged_by_package_and_version(
    npm: httpx.AsyncClient, demo: bytes
) -> None:
    for url in ("/npm/demo@1.0.0/dist/demo.js", "/npm/demo@1.0.0/dist/demo.css?min=1"):
        response = await npm.get(url)
        assert response.status_code == 200, url
        tags = response.headers["cache-tag"].split(",")
        path = url.split("?")[0]
        assert tags[:4] == [f"path:{path}", "part:packages", "npm:demo", "npm:demo@1.0.0"]
        assert "dir:/npm/demo@1.0.0/dist/" in tags
        assert response.headers["surrogate-key"].split(" ") == tags
