"""``.npmrc`` reading, registry choice and credentials (pure), what may be served, and which
exported subpaths an import map offers."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from assetgate.errors import AppError
from assetgate.packages.esm.exports import exported_subpaths
from assetgate.packages.npmrc import NpmrcError, nerf_dart, parse_npmrc
from assetgate.packages.policy import ServePolicy
from assetgate.packages.registry import Registries, load_registries

TOKEN = "npm_s3cr3tT0ken"
RC = """\
# a team's file
registry = https://mirror.invalid/npm/
@acme:registry=http://127.0.0.1:4873
@Other:registry="https://other.invalid/"
//127.0.0.1:4873/:_authToken=${NPM_TOKEN}
//mirror.invalid/npm/:_auth=dXNlcjpwYXNz
//other.invalid/:username=bob
//other.invalid/:_password=aHVudGVyMg==
//elsewhere.invalid/:_authToken=${MISSING?}
always-auth=true
"""


def never() -> str | None:
    raise AssertionError("npm must not be asked")


def test_an_npmrc_names_registries_and_credentials_by_nerf_dart() -> None:
    rc = parse_npmrc(RC, {"NPM_TOKEN": TOKEN})
    assert rc.registry == "https://mirror.invalid/npm/"
    assert rc.scopes == {"@acme": "http://127.0.0.1:4873/", "@other": "https://other.invalid/"}
    registries = Registries(rc.registry, rc.scopes, rc.credentials)
    assert registries.for_package("@acme/widget") == "http://127.0.0.1:4873/"
    assert registries.for_package("@acmex/widget") == "https://mirror.invalid/npm/"
    assert registries.for_package("react") == "https://mirror.invalid/npm/"
    assert registries.headers("http://127.0.0.1:4873/@acme%2fwidget") == {
        "Authorization": f"Bearer {TOKEN}"
    }
    assert registries.headers("https://mirror.invalid/npm/react") == {
        "Authorization": "Basic dXNlcjpwYXNz"
    }
    basic = base64.b64encode(b"bob:hunter2").decode()
    assert registries.headers("https://other.invalid:443/x") == {"Authorization": f"Basic {basic}"}
    # Never to another port, host or path than the one it was written for.
    for url in (
        "http://127.0.0.1:4874/@acme%2fwidget",
        "http://127.0.0.2:4873/x",
        "https://mirror.invalid/other/react",
        "https://elsewhere.invalid/x",  # ${MISSING?}: empty, so no credential
    ):
        assert registries.headers(url) == {}, url
    assert TOKEN not in repr(rc)
    assert TOKEN not in repr(registries)


def test_the_longest_nerf_dart_wins_and_default_ports_fold() -> None:
    rc = parse_npmrc("//h.invalid/:_authToken=short\n//h.invalid/deep/:_authToken=long\n", {})
    registries = Registries("https://h.invalid/", {}, rc.credentials)
    assert registries.headers("https://h.invalid/deep/x")["Authorization"] == "Bearer long"
    assert registries.headers("https://h.invalid/x")["Authorization"] == "Bearer short"
    assert nerf_dart("HTTPS://H.invalid:443/a?b#c") == "//h.invalid/a"
    assert nerf_dart("http://h.invalid:8080") == "//h.invalid:8080/"


def test_env_references_expand_as_npm_does_and_escapes_stay() -> None:
    rc = parse_npmrc(
        "registry=${BASE}\n//h.invalid/:_authToken=\\${LITERAL}\n", {"BASE": "http://h.invalid"}
    )
    assert rc.registry == "http://h.invalid/"
    registries = Registries(rc.registry, {}, rc.credentials)
    assert registries.headers("http://h.invalid/x") == {"Authorization": "Bearer ${LITERAL}"}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (
            "//h/:_authToken=${NPM_TOKEN}\n",
            "line 1 (//h/:_authToken) uses ${NPM_TOKEN}, which is not set",
        ),
        ("registry=ftp://h.invalid/\n", "line 1 (registry): expected an http(s) URL"),
        (
            f"registry=https://u:{TOKEN}@h.invalid/\n",
            "credentials belong in a //host/:_authToken line",
        ),
        ("@Bad Scope:registry=https://h.invalid/\n", "expected @scope:registry=<url>"),
        ("//h/:username=u\n//h/:_password=%%%\n", "_password is not base64"),
    ],
)
def test_a_wrong_npmrc_names_the_line_and_never_the_value(text: str, fragment: str) -> None:
    with pytest.raises(NpmrcError) as caught:
        parse_npmrc(text, {})
    assert fragment in str(caught.value)
    assert str(caught.value).startswith("ASSETGATE_NPMRC line ")
    assert TOKEN not in str(caught.value)


def test_registry_precedence(tmp_path: Path) -> None:
    rc = tmp_path / ".npmrc"
    rc.write_text("registry=http://127.0.0.9:1/\n@acme:registry=http://127.0.0.8:1/\n")
    env = {"npm_config_registry": "http://127.0.0.7:1/"}
    chosen = load_registries("http://127.0.0.6:1", rc, env, never)
    assert (chosen.default, dict(chosen.scopes)) == (
        "http://127.0.0.6:1/",  # ASSETGATE_NPM_REGISTRY first
        {"@acme": "http://127.0.0.8:1/"},
    )
    assert load_registries(None, rc, env, never).default == "http://127.0.0.9:1/"  # then the file
    rc.write_text("@acme:registry=http://127.0.0.8:1/\n")
    assert load_registries(None, rc, env, never).default == "http://127.0.0.7:1/"  # then npm's
    assert load_registries(None, None, {}, lambda: "http://127.0.0.5:1").default == (
        "http://127.0.0.5:1/"
    )
    with pytest.raises(NpmrcError, match="ASSETGATE_NPMRC cannot be read"):
        load_registries(None, tmp_path / "absent", {}, never)


def test_allow_and_deny_globs_match_whole_names() -> None:
    policy = ServePolicy.build(["@acme/*", "react", "react-dom"], ["react-dom"], None, [], [])
    assert policy.refusal("react") is None
    assert policy.refusal("@acme/widget") is None
    assert policy.refusal("react-dom") == "ASSETGATE_PACKAGES_DENY"
    assert policy.refusal("react-dom-extra") == "ASSETGATE_PACKAGES_ALLOW"
    assert policy.refusal("@acme") == "ASSETGATE_PACKAGES_ALLOW"
    assert policy.refusal("@acmex/widget") == "ASSETGATE_PACKAGES_ALLOW"
    with pytest.raises(AppError) as caught:
        policy.check("preact")
    assert (caught.value.status, caught.value.message) == (
        404,
        "preact is not served here (ASSETGATE_PACKAGES_ALLOW)",
    )
    assert ServePolicy.build([], [], None, [], []).refusal("anything") is None


def test_the_client_token_guards_the_npmrc_scopes_unless_told_otherwise() -> None:
    secret = "t" * 40
    policy = ServePolicy.build([], [], secret, [], ["@acme"])
    assert policy.guards("@acme/widget")
    assert not policy.guards("react")
    assert ServePolicy.build([], [], secret, [], []).guards("react")  # no scope: everything
    assert not ServePolicy.build([], [], secret, ["@x/*"], ["@acme"]).guards("@acme/widget")
    assert not ServePolicy.build([], [], None, [], ["@acme"]).guards("@acme/widget")
    assert policy.authorized({"authorization": f"Bearer {secret}"})
    assert not policy.authorized({"authorization": secret})
    assert secret not in repr(policy)


def test_exported_subpaths_are_the_modules_a_page_may_import() -> None:
    react_dom = {
        "exports": {
            ".": {"browser": "./index.js", "default": "./index.js"},
            "./client": "./client.js",
            "./server": {"deno": "./s.js", "worker": "./s.js", "browser": "./server.browser.js"},
            "./server.node": {"node": "./server.node.js"},
            "./profiling": ["./profiling.js"],
            "./package.json": "./package.json",
            "./styles.css": "./styles.css",
            "./hidden": {"browser": None, "default": "./h.js"},
            "./*": "./*",
            "./lib/": "./lib/",
            "./../escape": "./x.js",
        }
    }
    assert exported_subpaths(react_dom) == ["client", "server", "profiling"]
    assert exported_subpaths({"exports": "./index.js"}) == []
    assert exported_subpaths({"exports": {"import": "./a.mjs", "require": "./a.js"}}) == []
    assert exported_subpaths({"main": "index.js"}) == []
    many = {"exports": {f"./m{i}": f"./m{i}.js" for i in range(100)}}
    assert len(exported_subpaths(many)) == 32
