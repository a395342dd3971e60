"""``+esm`` modules and import maps through the real app, the real bundler and a loopback
registry; built modules are then run in node to see what they really export."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.packages.esm_support import installed_bundler, run_modules
from tests.packages.upstream import Registry

pytestmark = pytest.mark.anyio

PINNED = "public, max-age=31536000, immutable"


def esm_rows(store: Path) -> int:
    with sqlite3.connect(store / "index.sqlite3") as db:
        return int(db.execute("SELECT COUNT(*) FROM files WHERE ns='esm'").fetchone()[0])


def sri(body: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(body).digest()).decode()


@pytest.fixture
async def esm(pkg_settings: Callable[..., Settings]) -> AsyncIterator[httpx.AsyncClient]:
    installed_bundler()
    async with app_client(pkg_settings()) as client:
        yield client


def publish_commonjs_family(registry: Registry) -> None:
    """``app`` (CommonJS) needs ``dep@^1`` (CommonJS) and peer ``peer`` (ESM); 1.1.0 is newest."""
    for version in ("1.0.0", "1.1.0"):
        registry.publish(
            "dep",
            version,
            {"index.js": f"exports.twice = (n) => n * 2; exports.v = {version!r};".encode()},
            manifest={"main": "index.js"},
            tags={"latest": version},
        )
    registry.publish(
        "peer",
        "2.0.0",
        {"index.mjs": b"export const tag = 'peer';\nexport default 'P';"},
        manifest={"module": "index.mjs", "main": "index.mjs"},
    )
    registry.publish(
        "app",
        "1.0.0",
        {
            "index.js": b"'use strict';\nmodule.exports = require('./lib/real.js');\n",
            "lib/real.js": (
                b"const dep = require('dep');\nconst peer = require('peer');\n"
                b"exports.four = () => dep.twice(2);\nexports.depVersion = dep.v;\n"
                b"exports.peerTag = peer.tag;\nexports['odd-name'] = 1;\n"
                b"if (process.env.NODE_ENV !== 'production') { exports.dev = true; }\n"
            ),
            "extra.mjs": b"import { four } from 'app';\nexport const eight = four() * 2;\n",
        },
        manifest={
            "main": "index.js",
            "exports": {".": "./index.js", "./extra": "./extra.mjs"},
            "dependencies": {"dep": "^1.0.0"},
            "peerDependencies": {"peer": ">=2"},
        },
    )


async def test_commonjs_becomes_a_module_with_named_exports_and_pinned_imports(
    esm: httpx.AsyncClient, registry: Registry, tmp_path: Path
) -> None:
    publish_commonjs_family(registry)
    urls = [
        "/npm/app@1.0.0/+esm",
        "/npm/app@1.0.0/extra/+esm",
        "/npm/dep@1.1.0/+esm",
        "/npm/peer@2.0.0/+esm",
    ]
    bodies: dict[str, bytes] = {}
    for url in urls:
        response = await esm.get(url)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/javascript")
        assert response.headers["cache-control"] == PINNED
        assert response.headers["access-control-allow-origin"] == "*"
        assert response.headers["etag"] == f'"{hashlib.sha256(response.content).hexdigest()}"'
        bodies[url] = response.content
    app = bodies["/npm/app@1.0.0/+esm"].decode()
    assert '"/npm/dep@1.1.0/+esm"' in app  # the range ^1.0.0, pinned to the newest
    assert '"/npm/peer@2.0.0/+esm"' in app
    assert "require(" not in app.replace("__require", "")  # no require left for the browser
    assert '"/npm/app@1.0.0/+esm"' in bodies["/npm/app@1.0.0/extra/+esm"].decode()  # itself

    result = run_modules(
        tmp_path,
        bodies,
        "import app, * as ns from '/npm/app@1.0.0/+esm';\n"
        "import { eight } from '/npm/app@1.0.0/extra/+esm';\n"
        "console.log(JSON.stringify({names: Object.keys(ns), four: ns.four(),"
        " dep: ns.depVersion, peer: ns.peerTag, odd: ns['odd-name'], eight,"
        " same: app.four === ns.four, dev: 'dev' in app}));\n",
    )
    assert result == {
        "names": ["default", "depVersion", "dev", "four", "odd-name", "peerTag"],
        "four": 4,
        "dep": "1.1.0",
        "peer": "peer",
        "odd": 1,
        "eight": 8,
        "same": True,
        "dev": False,  # built for production: the development branch is gone
    }


async def test_ranges_redirect_and_sri_matches_the_body(
    esm: httpx.AsyncClient, registry: Registry
) -> None:
    publish_commonjs_family(registry)
    moved = await esm.get("/npm/app@^1/extra/+esm")
    assert moved.status_code == 302
    assert moved.headers["location"] == "/npm/app@1.0.0/extra/+esm"
    body = (await esm.get("/npm/app@1.0.0/extra/+esm")).content
    answer = (await esm.get("/npm/app@1.0.0/extra/+esm?sri")).json()
    assert answer == {"url": "/npm/app@1.0.0/extra/+esm", "integrity": sri(body), "size": len(body)}
    missing = await esm.get("/npm/app@1.0.0/nothing-here/+esm")
    assert missing.status_code == 404
    assert "app/nothing-here" in missing.json()["error"]


async def test_concurrent_first_requests_share_one_build(
    esm: httpx.AsyncClient, registry: Registry, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    publish_commonjs_family(registry)
    caplog.set_level(logging.INFO, logger="assetgate.packages")
    answers = await asyncio.gather(*(esm.get("/npm/dep@1.0.0/+esm") for _ in range(6)))
    assert {a.status_code for a in answers} == {200}
    assert len({a.content for a in answers}) == 1
    assert esm_rows(tmp_path / "store") == 2  # one module and its import list
    assert registry.upstream.hits["/dep/-/dep-1.0.0.tgz"] == 1
    builds = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ES module ")]
    assert len(builds) == 1
    assert builds[0].startswith("ES module /npm/dep@1.0.0/+esm built in ")


@pytest.mark.parametrize(
    ("source", "first_line"),
    [
        (b"import x from './missing.js';\nexport default x;\n", 'Could not resolve "./missing.js"'),
        (b"export const = 1;\n", 'Expected identifier but found "="'),
        # require() of a name that is no dependency (an import of one stays a bare import).
        (b"export default require('undeclared');", 'Could not resolve "undeclared"'),
    ],
)
async def test_a_package_that_cannot_be_built_is_a_502_and_nothing_is_stored(
    esm: httpx.AsyncClient,
    registry: Registry,
    tmp_path: Path,
    source: bytes,
    first_line: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry.publish("broken", "1.0.0", {"index.mjs": source}, manifest={"main": "index.mjs"})
    caplog.set_level(logging.WARNING, logger="assetgate.packages")
    for _ in range(3):  # the later ones are the remembered failure
        response = await esm.get("/npm/broken@1.0.0/+esm")
        assert response.status_code == 502
        assert response.headers["content-type"] == "application/json"
        assert response.headers["cache-control"] == "no-store"
        message = response.json()["error"]
        assert message.startswith("cannot build broken@1.0.0 as an ES module: ")
        assert first_line in message
        assert "/tmp" not in message
        assert str(tmp_path) not in message
    assert esm_rows(tmp_path / "store") == 0
    builds = [r for r in caplog.records if r.getMessage().startswith("ES module build of broken")]
    assert len(builds) == 1  # built once, then remembered


async def test_an_import_of_a_name_the_package_does_not_declare_stays_bare(
    esm: httpx.AsyncClient, registry: Registry, tmp_path: Path
) -> None:
    """htm/preact imports ``preact`` without declaring it: the module keeps ``import "preact"``
    for the page's import map (it used to be a 502), and loads where the name resolves."""
    registry.publish(
        "optpeer",
        "1.0.0",
        {"i.mjs": b"import { h } from 'undeclared-peer';\nexport const tag = () => h('b');\n"},
        manifest={"main": "i.mjs", "peerDependenciesMeta": {"undeclared-peer": {"optional": True}}},
    )
    response = await esm.get("/npm/optpeer@1.0.0/+esm")
    assert response.status_code == 200, response.text
    assert '"undeclared-peer"' in response.text
    (tmp_path / "node_modules" / "undeclared-peer").mkdir(parents=True)
    (tmp_path / "node_modules" / "undeclared-peer" / "package.json").write_text(
        '{"name": "undeclared-peer", "type": "module", "main": "i.js"}'
    )
    (tmp_path / "node_modules" / "undeclared-peer" / "i.js").write_text(
        "export const h = (t) => `<${t}>`;"
    )
    result = run_modules(
        tmp_path,
        {"/npm/optpeer@1.0.0/+esm": response.content},
        "import { tag } from '/npm/optpeer@1.0.0/+esm';\nconsole.log(JSON.stringify(tag()));\n",
    )
    assert result == "<b>"


async def test_a_package_cannot_bundle_a_file_outside_itself(
    esm: httpx.AsyncClient, registry: Registry, tmp_path: Path
) -> None:
    (tmp_path / "secret.js").write_text("export default 'TOP SECRET';")
    # The build folder is <store>/tmp/esm-*/node_modules/sneaky: five levels below tmp_path.
    for name, target in (
        ("sneaky", "../../../../../secret.js"),
        ("abs", str(tmp_path / "secret.js")),
    ):
        registry.publish(
            name,
            "1.0.0",
            {"i.mjs": f"export {{ default }} from {target!r};".encode()},
            manifest={"main": "i.mjs"},
        )
        response = await esm.get(f"/npm/{name}@1.0.0/+esm")
        assert response.status_code == 502
        assert f"is not a file of {name} nor a dependency" in response.json()["error"]
        assert "TOP SECRET" not in response.text
    assert esm_rows(tmp_path / "store") == 0


async def test_without_the_bundler_esm_is_a_501_naming_it(
    pkg_settings: Callable[..., Settings], registry: Registry, tmp_path: Path
) -> None:
    publish_commonjs_family(registry)
    async with app_client(pkg_settings(esm_bundler_dir=tmp_path / "nowhere")) as client:
        for url in ("/npm/dep@1.0.0/+esm", "/npm/importmap?pkg=dep@1.0.0"):
            response = await client.get(url)
            assert response.status_code == 501
            assert "esbuild" in response.json()["error"]
            assert "ASSETGATE_ESM_BUNDLER_DIR" in response.json()["error"]
        plain = await client.get("/npm/dep@1.0.0/index.js")  # files are still served
        assert plain.status_code == 200


async def test_import_map_pins_ranges_scopes_conflicts_and_lists_integrity(
    esm: httpx.AsyncClient, registry: Registry
) -> None:
    for version in ("1.0.0", "2.0.0", "2.1.0"):
        registry.publish(
            "c",
            version,
            {"i.mjs": f"export const v = {version!r};".encode()},
            manifest={"main": "i.mjs"},
        )
    for name, wants in (("a", "^2"), ("b", "^1")):
        registry.publish(
            name,
            "1.0.0",
            {"i.mjs": b"export { v } from 'c';"},
            manifest={"main": "i.mjs", "dependencies": {"c": wants}},
        )
    response = await esm.get("/npm/importmap?pkg=a@^1&pkg=b")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/importmap+json"
    assert response.headers["cache-control"] == "public, max-age=300"  # a range was asked
    doc = response.json()
    base = "http://testserver"
    assert doc["imports"] == {
        "a": f"{base}/npm/a@1.0.0/+esm",
        "b": f"{base}/npm/b@1.0.0/+esm",
        "c": f"{base}/npm/c@2.1.0/+esm",
    }
    assert doc["scopes"] == {f"{base}/npm/b@1.0.0/": {"c": f"{base}/npm/c@1.0.0/+esm"}}
    assert sorted(doc["integrity"]) == sorted(
        f"{base}{u}"
        for u in (
            "/npm/a@1.0.0/+esm",
            "/npm/b@1.0.0/+esm",
            "/npm/c@1.0.0/+esm",
            "/npm/c@2.1.0/+esm",
        )
    )
    for url, integrity in doc["integrity"].items():
        body = (await esm.get(url.removeprefix(base))).content
        assert integrity == sri(body)


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("", "pkg: required"),
        ("?pkg=", "pkg: expected"),
        ("?pkg=a/../b", "pkg: expected"),
        ("?pkg=%252e", "pkg: expected"),
        ("?" + "&".join(["pkg=a"] * 33), "at most 32"),
    ],
)
async def test_import_map_refuses_bad_requests(
    esm: httpx.AsyncClient, query: str, fragment: str
) -> None:
    response = await esm.get("/npm/importmap" + query)
    assert response.status_code == 400
    assert fragment in response.json()["error"]


async def test_min_files_the_package_lacks_come_from_the_minifier_and_meta_on_the_root(
    esm: httpx.AsyncClient, registry: Registry
) -> None:
    source = b"/* comment */\nfunction hello ( name ) {\n    return 'hi ' + name ;\n}\n"
    registry.publish(
        "plain",
        "1.0.0",
        {
            "dist/a.js": source,
            "dist/b.min.js": b"b()",
            "dist/s.css": b"a {  color : red ; }\n",
            "dist/\u00e9t\u00e9.js": b"var  x = 1 ;",
        },
    )
    made = await esm.get("/npm/plain@1.0.0/dist/a.min.js")
    assert made.status_code == 200
    assert made.headers["x-minified-from"] == "dist/a.js"
    assert made.headers["content-type"].startswith("application/javascript")
    assert made.headers["cache-control"] == PINNED
    assert made.content == b"function hello(name){return'hi '+name;}"
    css = await esm.get("/npm/plain@1.0.0/dist/s.min.css")
    assert css.status_code == 200
    assert css.content == b"a{color:red}"
    assert (await esm.get("/npm/plain@1.0.0/dist/b.min.js")).content == b"b()"  # its own file
    assert (await esm.get("/npm/plain@1.0.0/dist/none.min.js")).status_code == 404
    odd = await esm.get("/npm/plain@1.0.0/dist/%C3%A9t%C3%A9.min.js")  # a name beyond Latin-1
    assert odd.status_code == 200
    assert odd.headers["x-minified-from"] == "dist/%C3%A9t%C3%A9.js"
    for root in ("/npm/plain@1.0.0?meta", "/npm/plain@1.0.0/?meta"):
        listing = await esm.get(root)
        assert listing.status_code == 200
        paths = [f["path"] for f in listing.json()["files"]]
        assert paths == [
            "/dist/a.js",
            "/dist/b.min.js",
            "/dist/s.css",
            "/dist/\u00e9t\u00e9.js",
            "/package.json",
        ]


def processes_working_in(folder: Path) -> list[int]:
    """Processes whose working directory is below ``folder`` (the bundler runs in its build
    folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = (entry / "cwd").resolve()
        except OSError:
            continue
        if cwd.is_relative_to(folder):
            found.append(int(entry.name))
    return found


async def test_a_build_past_its_deadline_is_killed_and_named(
    pkg_settings: Callable[..., Settings], registry: Registry, tmp_path: Path
) -> None:
    installed_bundler()
    publish_commonjs_family(registry)
    async with app_client(pkg_settings(esm_build_timeout_s=0.05)) as client:
        response = await client.get("/npm/dep@1.0.0/+esm")
        assert response.status_code == 504
        assert "ASSETGATE_ESM_BUILD_TIMEOUT_S" in response.json()["error"]
        assert "dep" in response.json()["error"]
    assert esm_rows(tmp_path / "store") == 0
    assert processes_working_in(tmp_path) == []  # node and esbuild are gone
    assert list((tmp_path / "store" / "tmp").glob("esm-*")) == []  # so is the build folder


async def test_the_memory_bound_applies_to_the_bundler(
    pkg_settings: Callable[..., Settings], registry: Registry, tmp_path: Path
) -> None:
    installed_bundler()
    publish_commonjs_family(registry)
    # 512 MiB of address space is less than node reserves at start: the bound is really set.
    async with app_client(pkg_settings(esm_build_memory_bytes=512 * 1024 * 1024)) as client:
        response = await client.get("/npm/dep@1.0.0/+esm")
        assert response.status_code == 502
        message = response.json()["error"]
        assert message.startswith("cannot build dep@1.0.0 as an ES module: the bundler stopped")
        assert "ASSETGATE_ESM_BUILD_MEMORY_BYTES" in message
    assert esm_rows(tmp_path / "store") == 0
    assert processes_working_in(tmp_path) == []


def test_only_names_and_ranges_npm_accepts_become_externals() -> None:
    from assetgate.packages.esm.modules import dependency_ranges

    manifest = {
        "dependencies": {"ok": "^1.0.0", "../../escape": "1.0.0", "q": '1" + alert(1) + "'},
        "peerDependencies": {"ok": ">=0.5", "@scope/peer": "2.x", "bad\nname": "1"},
        "optionalDependencies": {"opt": "", "git": "git+https://example.invalid/x.git"},
    }
    assert dependency_ranges(manifest) == {
        "opt": "",
        "ok": "^1.0.0",  # dependencies win over the peer range
        "@scope/peer": "2.x",
    }


async def test_two_app_instances_on_one_store_build_once(
    pkg_settings: Callable[..., Settings],
    registry: Registry,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """As two worker processes: each has its own single flight; the store's flock makes the
    second wait and find the module the first one kept."""
    installed_bundler()
    publish_commonjs_family(registry)
    caplog.set_level(logging.INFO, logger="assetgate.packages")
    settings = pkg_settings()
    async with app_client(settings) as one, app_client(settings) as two:
        replies = await asyncio.gather(
            *(client.get("/npm/app@1.0.0/+esm") for client in (one, two, one, two))
        )
    assert {r.status_code for r in replies} == {200}
    assert len({r.content for r in replies}) == 1
    builds = [r for r in caplog.records if r.getMessage().startswith("ES module /npm/app@")]
    assert len(builds) == 1
    assert esm_rows(tmp_path / "store") == 2


async def test_import_map_urls_use_the_public_url_never_the_host_header(
    pkg_settings: Callable[..., Settings], registry: Registry
) -> None:
    installed_bundler()
    registry.publish("solo", "1.0.0", {"i.mjs": b"export const s = 1;"}, manifest={"main": "i.mjs"})
    forged = {"Host": "attacker.example"}
    async with app_client(pkg_settings()) as client:  # unset: the request's own address
        follows = await client.get("/npm/importmap?pkg=solo@1.0.0", headers=forged)
    assert follows.json()["imports"] == {"solo": "http://attacker.example/npm/solo@1.0.0/+esm"}
    settings = pkg_settings(public_url="https://cdn.example.com/assets/")
    async with app_client(settings) as client:
        pinned = await client.get("/npm/importmap?pkg=solo@1.0.0", headers=forged)
    assert pinned.status_code == 200, pinned.text
    url = "https://cdn.example.com/assets/npm/solo@1.0.0/+esm"
    assert pinned.json()["imports"] == {"solo": url}
    assert list(pinned.json()["integrity"]) == [url]


@pytest.mark.parametrize(
    "bad",
    ["cdn.example.com", "ftp://cdn.example.com", "https://u:p@cdn.example.com", "https://x/?q"],
)
def test_a_bad_public_url_is_refused_at_start(bad: str) -> None:
    with pytest.raises(ValueError, match="public_url"):
        Settings(public_url=bad)
