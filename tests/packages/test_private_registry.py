"""Private and scoped registries, for real: Verdaccio on loopback with htpasswd auth, ``@acme/*``
readable only with a token, packages published into it with ``npm publish``; public packages
from the loopback registry the other package tests use. The app reads an ``.npmrc`` as a team
has it (``registry=``, ``@acme:registry=``, ``//host:port/:_authToken=${ACME_TOKEN}``)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client, require, require_binary
from tests.packages.esm_support import installed_bundler, run_modules
from tests.packages.upstream import FakeUpstream, Registry
from tests.packages.verdaccio import Verdaccio, default_dir, installed
from tests.serve_process import pick_port

pytestmark = pytest.mark.anyio

CLIENT_TOKEN = "client-secret-" + "k" * 32


@dataclass(frozen=True)
class Private:
    server: Verdaccio
    token: str

    @property
    def host(self) -> str:
        return self.server.url.removeprefix("http://").rstrip("/")


def write_package(folder: Path, manifest: dict[str, object], files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps(manifest))
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def widget(version: str) -> tuple[dict[str, object], dict[str, str]]:
    manifest: dict[str, object] = {
        "name": "@acme/widget",
        "version": version,
        "type": "module",
        "description": "the widget of acme",
        "exports": {".": "./index.js", "./extra": "./extra.js", "./package.json": "./package.json"},
        "dependencies": {"@acme/util": "^1.0.0"},
        "peerDependencies": {"react": "^18"},
    }
    files = {
        "index.js": (
            'import React from "react";\nimport { shout } from "@acme/util";\n'
            'export const hello = (who) => shout("hello " + who) + " react " + React.version;\n'
            f"export const version = {version!r};\n"
        ),
        "extra.js": "export const extra = 42;\n",
    }
    return manifest, files


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Private]:
    node = require_binary("node")
    npm = require_binary("npm")
    require(
        installed(default_dir()), "Verdaccio is not installed: python -m tests.packages.verdaccio"
    )
    folder = tmp_path_factory.mktemp("verdaccio")
    server = Verdaccio(node, default_dir(), folder, pick_port())
    try:
        token = server.adduser("ci", "ci-password-1")
        util = {"name": "@acme/util", "version": "1.0.0", "type": "module", "main": "index.js"}
        server.publish(
            npm,
            token,
            write_package(
                folder / "util",
                util,
                {"index.js": "export const shout = (s) => s.toUpperCase() + '!';\n"},
            ),
        )
        for version in ("1.0.0", "1.1.0"):
            manifest, files = widget(version)
            server.publish(npm, token, write_package(folder / f"widget-{version}", manifest, files))
        yield Private(server, token)
    finally:
        server.stop()


def publish_public(registry: Registry) -> None:
    """React-shaped public packages (and an impostor of the private scope) on the loopback
    registry that stands for the public one."""
    registry.publish(
        "react",
        "18.3.1",
        {
            "index.js": b'export const version = "18.3.1";\nexport default { version };\n',
            "jsx-runtime.js": (
                b'import React from "react";\nexport const jsx = () => React.version;\n'
            ),
        },
        manifest={
            "exports": {
                ".": "./index.js",
                "./jsx-runtime": "./jsx-runtime.js",
                "./package.json": "./package.json",
            }
        },
    )
    registry.publish("scheduler", "0.23.2", {"index.js": b"export const tick = () => 1;\n"},
                     manifest={"main": "index.js"})  # fmt: skip
    registry.publish(
        "react-dom",
        "18.3.1",
        {
            "index.js": (
                b'import React from "react";\nimport { tick } from "scheduler";\n'
                b"export const render = () => tick() + React.version;\n"
            ),
            "client.js": (
                b'import { render } from "react-dom";\n'
                b"export const createRoot = () => ({ render });\n"
            ),
            "server.node.js": (
                b'import { Readable } from "node:stream";\nexport default Readable;\n'
            ),
        },
        manifest={
            "exports": {
                ".": "./index.js",
                "./client": "./client.js",
                "./server.node": {"node": "./server.node.js"},
                "./*": "./*",
            },
            "dependencies": {"scheduler": "^0.23.0"},
            "peerDependencies": {"react": "^18.3.1"},
        },
    )
    registry.publish(
        "shell",
        "1.0.0",
        {"index.js": b'export { hello } from "@acme/widget";\n'},
        manifest={"type": "module", "main": "index.js", "dependencies": {"@acme/widget": "^1"}},
    )
    # A public package in the private scope: never asked for, never served.
    registry.publish("@acme/widget", "9.9.9", {"index.js": b"export const impostor = true;\n"})
    for name, version in (("react", "18.3.1"), ("react-dom", "18.3.1"), ("scheduler", "0.23.2")):
        registry.add_search(name, version, f"{name}, of the react family")
    registry.add_search("@acme/widget", "9.9.9", "an impostor widget")


def npmrc(
    folder: Path, upstream: FakeUpstream, private: Private, token: str = "${ACME_TOKEN}"
) -> Path:
    path = folder / ".npmrc"
    path.write_text(
        "; the file a team already has\n"
        f"registry={upstream.url}/\n"
        f"@acme:registry={private.server.url}\n"
        f"{private.server.nerf}:_authToken={token}\n"
        "always-auth=true\n"
    )
    return path


@pytest.fixture
def app_settings(
    pkg_settings: Callable[..., Settings],
    upstream: FakeUpstream,
    registry: Registry,
    private: Private,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., Settings]:
    publish_public(registry)
    monkeypatch.setenv("ACME_TOKEN", private.token)
    path = npmrc(tmp_path, upstream, private)

    def build(**overrides: object) -> Settings:
        return pkg_settings(**{"npm_registry": None, "npmrc": path, **overrides})

    return build


@pytest.fixture
async def app(app_settings: Callable[..., Settings]) -> AsyncIterator[httpx.AsyncClient]:
    installed_bundler()
    async with app_client(app_settings()) as client:
        yield client


async def test_a_scope_comes_from_its_registry_with_its_token(
    app: httpx.AsyncClient, upstream: FakeUpstream
) -> None:
    latest = await app.get("/npm/@acme/widget@latest/index.js")
    assert latest.status_code == 302
    assert latest.headers["location"] == "/npm/@acme/widget@1.1.0/index.js"
    assert latest.headers["x-resolved-version"] == "1.1.0"
    ranged = await app.get("/npm/@acme/widget@~1.0/extra.js")
    assert ranged.headers["location"] == "/npm/@acme/widget@1.0.0/extra.js"
    file = await app.get("/npm/@acme/widget@1.1.0/index.js")
    assert file.status_code == 200, file.text
    assert "export const version = '1.1.0';" in file.text
    assert file.headers["cache-control"] == "public, max-age=31536000, immutable"
    meta = await app.get("/npm/@acme/widget@1.0.0/?meta")
    assert meta.status_code == 200
    assert {f["path"] for f in meta.json()["files"]} == {"/index.js", "/extra.js", "/package.json"}
    public = await app.get("/npm/react@18.3.1/index.js")
    assert public.status_code == 200
    # The scope was never asked of the default registry (its impostor there is never seen).
    assert not [path for path in upstream.hits if path.startswith("/@acme/")]


async def test_esm_and_an_import_map_mix_private_and_public_packages(
    app: httpx.AsyncClient, tmp_path: Path
) -> None:
    widget_module = await app.get("/npm/@acme/widget@1.1.0/+esm")
    assert widget_module.status_code == 200, widget_module.text
    assert '"/npm/react@18.3.1/+esm"' in widget_module.text  # private -> public
    assert '"/npm/@acme/util@1.0.0/+esm"' in widget_module.text  # private -> private
    shell = await app.get("/npm/shell@1.0.0/+esm")
    assert shell.status_code == 200, shell.text
    assert '"/npm/@acme/widget@1.1.0/+esm"' in shell.text  # public -> private

    response = await app.get("/npm/importmap?pkg=@acme/widget@^1&pkg=react@18&pkg=react-dom@18")
    assert response.status_code == 200, response.text
    doc = response.json()
    base = "http://testserver"
    assert doc["imports"] == {
        "@acme/util": f"{base}/npm/@acme/util@1.0.0/+esm",
        "@acme/widget": f"{base}/npm/@acme/widget@1.1.0/+esm",
        "@acme/widget/extra": f"{base}/npm/@acme/widget@1.1.0/extra/+esm",
        "react": f"{base}/npm/react@18.3.1/+esm",
        "react/jsx-runtime": f"{base}/npm/react@18.3.1/jsx-runtime/+esm",
        "react-dom": f"{base}/npm/react-dom@18.3.1/+esm",
        "react-dom/client": f"{base}/npm/react-dom@18.3.1/client/+esm",
        "scheduler": f"{base}/npm/scheduler@0.23.2/+esm",
    }
    assert sorted(doc["integrity"]) == sorted(doc["imports"].values())
    bodies = {}
    for url in doc["imports"].values():
        bodies[url.removeprefix(base)] = (await app.get(url.removeprefix(base))).content
    result = run_modules(
        tmp_path,
        bodies,
        "import { hello } from '/npm/@acme/widget@1.1.0/+esm';\n"
        "import { createRoot } from '/npm/react-dom@18.3.1/client/+esm';\n"
        "console.log(JSON.stringify({hello: hello('world'), root: createRoot().render()}));\n",
    )
    assert result == {"hello": "HELLO WORLD! react 18.3.1", "root": "118.3.1"}


async def test_a_refused_or_missing_token_is_a_502_naming_the_package_and_the_host(
    pkg_settings: Callable[..., Settings],
    upstream: FakeUpstream,
    registry: Registry,
    private: Private,
    tmp_path: Path,
) -> None:
    publish_public(registry)
    wrong = "0" * len(private.token)
    for token in (wrong, ""):
        path = npmrc(tmp_path, upstream, private, token)
        async with app_client(pkg_settings(npm_registry=None, npmrc=path)) as client:
            response = await client.get("/npm/@acme/widget@1.0.0/index.js")
            assert response.status_code == 502
            message = response.json()["error"]
            assert message.startswith(
                f"the registry at {private.host} refused access to @acme/widget"
            )
            assert "ASSETGATE_NPMRC" in message
            assert wrong not in response.text
            # The public registry is unaffected.
            assert (await client.get("/npm/react@18.3.1/index.js")).status_code == 200


async def test_search_asks_every_registry_and_keeps_what_each_serves(
    app: httpx.AsyncClient,
) -> None:
    response = await app.get("/npm/search", params={"q": "widget"})
    assert response.status_code == 200, response.text
    found = {(hit["name"], hit["version"]) for hit in response.json()["results"]}
    assert ("@acme/widget", "1.1.0") in found  # Verdaccio's, with its token
    assert ("@acme/widget", "9.9.9") not in found  # the default registry's is not served
    assert response.json()["warnings"] == []


async def test_allow_and_deny_lists_match_whole_names_everywhere(
    app_settings: Callable[..., Settings],
) -> None:
    installed_bundler()
    settings = app_settings(packages_allow="@acme/*,react,react-dom")
    async with app_client(settings) as client:
        assert (await client.get("/npm/react-dom@18.3.1/index.js")).status_code == 200
        for url in (
            "/npm/scheduler@0.23.2/index.js",  # a file
            "/npm/scheduler@latest/index.js",  # a tag
            "/npm/scheduler/",  # no version
            "/npm/scheduler@0.23.2/+esm",  # a module
            "/npm/importmap?pkg=scheduler",
        ):
            response = await client.get(url)
            assert response.status_code == 404, url
            assert (
                response.json()["error"]
                == "scheduler is not served here (ASSETGATE_PACKAGES_ALLOW)"
            )
        # A dependency outside the list: the map names it, and which package imports it.
        response = await client.get("/npm/importmap?pkg=react-dom@18.3.1")
        assert response.status_code == 404
        assert response.json()["error"] == (
            "react-dom@18.3.1 imports scheduler, which is not served here"
            " (ASSETGATE_PACKAGES_ALLOW)"
        )
        names = {hit["name"] for hit in (await client.get("/npm/search?q=react")).json()["results"]}
        assert names == {"react", "react-dom"}
    async with app_client(app_settings(packages_deny="react-dom")) as client:
        denied = await client.get("/npm/react-dom@18.3.1/index.js")
        assert denied.status_code == 404
        assert "ASSETGATE_PACKAGES_DENY" in denied.json()["error"]
        assert (await client.get("/npm/react@18.3.1/index.js")).status_code == 200  # whole names
        names = {hit["name"] for hit in (await client.get("/npm/search?q=react")).json()["results"]}
        assert names == {"react", "scheduler"}


async def test_a_client_token_guards_the_private_scope(
    app_settings: Callable[..., Settings],
) -> None:
    async with app_client(app_settings(packages_token=CLIENT_TOKEN)) as client:
        url = "/npm/@acme/widget@1.1.0/index.js"
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": CLIENT_TOKEN}):
            refused = await client.get(url, headers=headers)
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"].startswith("Bearer")
            assert "ASSETGATE_PACKAGES_TOKEN" in refused.json()["error"]
            assert CLIENT_TOKEN not in refused.text
        bearer = {"Authorization": f"Bearer {CLIENT_TOKEN}"}
        allowed = await client.get(url, headers=bearer)
        assert allowed.status_code == 200
        assert allowed.headers["cache-control"] == "private, max-age=31536000, immutable"
        assert "Authorization" in allowed.headers["vary"]
        tag = await client.get("/npm/@acme/widget@latest/index.js", headers=bearer)
        assert (tag.status_code, tag.headers["cache-control"]) == (302, "private, max-age=300")
        public = await client.get("/npm/react@18.3.1/index.js")  # not guarded
        assert (public.status_code, public.headers["cache-control"]) == (
            200,
            "public, max-age=31536000, immutable",
        )
        anonymous = await client.get("/npm/search?q=widget")
        assert "@acme/widget" not in {h["name"] for h in anonymous.json()["results"]}
        named = await client.get("/npm/search?q=widget", headers=bearer)
        assert "@acme/widget" in {h["name"] for h in named.json()["results"]}
        assert named.headers["cache-control"].startswith("private")


def _everything_in(folder: Path) -> Iterator[tuple[Path, bytes]]:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield path, path.read_bytes()


async def test_no_token_leaves_in_answers_headers_metrics_readiness_logs_or_the_store(
    app_settings: Callable[..., Settings],
    private: Private,
    upstream: FakeUpstream,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    installed_bundler()
    caplog.set_level(logging.DEBUG)  # every logger, every level
    seen: list[str] = []

    def keep(response: httpx.Response) -> None:
        seen.append(f"{response.status_code} {response.headers!r}\n{response.text}")

    settings = app_settings(packages_token=CLIENT_TOKEN, log_level="debug")
    bearer = {"Authorization": f"Bearer {CLIENT_TOKEN}"}
    async with app_client(settings) as client:
        for url in (
            "/npm/@acme/widget@latest/index.js",
            "/npm/@acme/widget@1.1.0/index.js",
            "/npm/@acme/widget@1.1.0/?meta",
            "/npm/@acme/widget@1.1.0/index.js?sri",
            "/npm/@acme/widget@1.1.0/+esm",
            "/npm/@acme/widget@1.1.0/extra/+esm?sri",
            "/npm/importmap?pkg=@acme/widget@1&pkg=react-dom@18",
            "/npm/search?q=widget",
            "/npm/search?q=acme",
            "/npm/@acme/widget@7.0.0/index.js",  # an unknown version
            "/npm/@acme/nothing@1.0.0/index.js",  # an unknown package
            "/npm/@acme/widget@1.1.0/missing.js",
            "/metrics",
            "/readyz",
        ):
            response = await client.get(url, headers=bearer)
            keep(response)
            assert response.status_code < 500, (url, response.text)
    # The scope's registry refusing a wrong token, and the scope's registry down.
    (tmp_path / "refused").mkdir()
    refused_rc = npmrc(tmp_path / "refused", upstream, private, "1" * 40)
    closed = pick_port()
    down_rc = tmp_path / "down.npmrc"
    down_rc.write_text(
        f"registry={upstream.url}/\n@acme:registry=http://127.0.0.1:{closed}/\n"
        f"//127.0.0.1:{closed}/:_authToken=${{ACME_TOKEN}}\n"
    )
    for path in (refused_rc, down_rc):
        async with app_client(app_settings(npmrc=path)) as client:
            # 1.0.0 was never fetched (1.1.0 is served from the store, needing no registry).
            for url in ("/npm/@acme/widget@1.0.0/extra.js", "/npm/search?q=acme", "/readyz"):
                response = await client.get(url)
                keep(response)
            assert seen[-3].startswith("502")
    logged = [f"{r.getMessage()} {r.__dict__!r}" for r in caplog.records]
    assert logged
    assert seen
    stored = list(_everything_in(tmp_path / "store"))
    assert any(path.suffix == ".sqlite3" for path, _ in stored)
    for secret in (private.token, CLIENT_TOKEN):
        assert not [text for text in seen if secret in text]
        assert not [text for text in logged if secret in text]
        assert not [path for path, data in stored if secret.encode() in data]


def test_the_verdaccio_install_is_pinned_with_its_override() -> None:
    require(
        installed(default_dir()), "Verdaccio is not installed: python -m tests.packages.verdaccio"
    )
    manifest = json.loads((default_dir() / "package.json").read_text())
    assert manifest["dependencies"] == {"verdaccio": "6.8.0"}
    assert manifest["overrides"] == {"node-fetch": "2.7.0"}
