"""``GET /npm/search`` through the real app against loopback catalogs: every §7.1 row."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.packages.upstream import FakeUpstream, LibraryCatalog, Registry, Reply

pytestmark = pytest.mark.anyio

RESULT_KEYS = {"name", "version", "description", "kind", "url", "ready"}


@pytest.fixture
def catalogs(registry: Registry, catalog: LibraryCatalog) -> None:
    registry.add_search("lodash", "4.17.21", "Lodash modular utilities.")
    registry.add_search("lodash-es", "4.17.21", "Lodash exported as ES modules.")
    registry.add_search("@scope/lodash-plugin", "1.0.0", "<img src=x onerror=alert(1)>")
    catalog.add("lodash.js", "4.17.21", {"lodash.min.js": b"/*lodash*/"}, description="")
    catalog.add("lodash-fp", "0.10.4", {"lodash-fp.min.js": b"fp"}, description="fp lodash")


def assert_error(response: httpx.Response, status: int, param: str | None = None) -> None:
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["code"] == status
    assert isinstance(body["error"], str)
    if param is not None:
        assert body["error"].startswith(param)
    assert "Traceback" not in response.text
    assert "/tmp" not in response.text


async def test_shape_merge_rank_and_total(npm: httpx.AsyncClient, catalogs: None) -> None:
    response = await npm.get("/npm/search", params={"q": "lodash"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"service", "query", "total", "results", "warnings"}
    assert body["warnings"] == []  # both catalogs answered
    assert body["query"] == "lodash"
    assert isinstance(body["service"], str)
    for item in body["results"]:
        assert set(item) == RESULT_KEYS
        assert item["kind"] in ("package", "library")
        assert isinstance(item["ready"], bool)
    names = [(r["name"], r["kind"]) for r in body["results"]]
    # lodash (npm) + lodash.js (catalog) of the same version -> one "lodash" package entry.
    assert names == [
        ("lodash", "package"),
        ("lodash-es", "package"),
        ("lodash-fp", "library"),
        ("@scope/lodash-plugin", "package"),
    ]
    assert body["total"] == 4
    first = body["results"][0]
    assert first == {
        "name": "lodash",
        "version": "4.17.21",
        "description": "Lodash modular utilities.",
        "kind": "package",
        "url": "/npm/lodash@4.17.21/",
        "ready": False,
    }
    library = body["results"][2]
    assert library["url"] == "/npm/lib/lodash-fp@0.10.4/lodash-fp.min.js"
    # Attacker-controlled text is data in JSON, returned as it came.
    assert body["results"][3]["description"] == "<img src=x onerror=alert(1)>"


async def test_limit_truncates_but_total_counts_everything(
    npm: httpx.AsyncClient, catalogs: None
) -> None:
    body = (await npm.get("/npm/search", params={"q": "lodash", "limit": "2"})).json()
    assert len(body["results"]) == 2
    assert body["total"] == 4


async def test_default_limit_is_12_and_upstream_size_is_doubled(
    npm: httpx.AsyncClient, registry: Registry, upstream: FakeUpstream
) -> None:
    for index in range(30):
        registry.add_search(f"pkg{index:02d}", "1.0.0")
    seen: list[str] = []
    original = upstream.routes["/-/v1/search"]
    assert callable(original)

    def spy(query: dict[str, list[str]]) -> Reply:
        seen.append(query["size"][0])
        return original(query)

    upstream.routes["/-/v1/search"] = spy
    body = (await npm.get("/npm/search", params={"q": "pkg"})).json()
    assert len(body["results"]) == 12
    assert seen == ["24"]


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({}, "q"),
        ({"q": ""}, "q"),
        ({"q": "a"}, "q"),
        ({"q": " a "}, "q"),
        ({"q": "x" * 81}, "q"),
        ({"q": "ok", "limit": "0"}, "limit"),
        ({"q": "ok", "limit": "21"}, "limit"),
        ({"q": "ok", "limit": "1.5"}, "limit"),
        ({"q": "ok", "limit": "abc"}, "limit"),
        ({"q": "ok", "limit": ""}, "limit"),
    ],
)
async def test_400_names_the_parameter(
    npm: httpx.AsyncClient, params: dict[str, str], param: str, upstream: FakeUpstream
) -> None:
    assert_error(await npm.get("/npm/search", params=params), 400, param)
    assert sum(upstream.hits.values()) == 0  # nothing asked upstream for a bad request


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
async def test_405(npm: httpx.AsyncClient, method: str) -> None:
    response = await npm.request(method, "/npm/search", params={"q": "lodash"})
    assert_error(response, 405)
    assert set(response.headers["allow"].replace(" ", "").split(",")) == {"GET", "HEAD", "OPTIONS"}


async def test_head_and_options(npm: httpx.AsyncClient, catalogs: None) -> None:
    head = await npm.head("/npm/search", params={"q": "lodash"})
    assert head.status_code == 200
    assert head.content == b""
    options = await npm.options("/npm/search")
    assert options.status_code == 204
    assert "GET" in options.headers["allow"]


async def test_502_when_every_catalog_fails(
    npm: httpx.AsyncClient, upstream: FakeUpstream, catalogs: None
) -> None:
    upstream.down = True
    assert_error(await npm.get("/npm/search", params={"q": "lodash"}), 502)


async def test_502_when_every_catalog_is_unreachable(
    pkg_settings: Callable[..., Settings],
) -> None:
    settings = pkg_settings(
        npm_registry="http://127.0.0.1:9/",
        library_api="http://127.0.0.1:9",
        library_files="http://127.0.0.1:9/libs",
    )
    async with app_client(settings) as client:
        assert_error(await client.get("/npm/search", params={"q": "lodash"}), 502)


async def test_partial_results_when_npm_fails(
    pkg_settings: Callable[..., Settings], catalogs: None
) -> None:
    async with app_client(pkg_settings(npm_registry="http://127.0.0.1:9/")) as client:
        response = await client.get("/npm/search", params={"q": "lodash"})
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    assert [r["kind"] for r in response.json()["results"]] == ["library", "library"]
    assert response.json()["warnings"] == [
        "npm: searching the npm registry failed; results are from the other catalog only"
    ]


async def test_partial_results_when_the_library_catalog_fails(
    npm: httpx.AsyncClient, upstream: FakeUpstream, catalogs: None
) -> None:
    upstream.routes["/cdnjs/libraries"] = Reply(b"<html>oops</html>", content_type="text/html")
    response = await npm.get("/npm/search", params={"q": "lodash"})
    assert response.status_code == 200
    assert {r["kind"] for r in response.json()["results"]} == {"package"}
    assert response.json()["warnings"] == [
        "library: searching the library catalog failed; results are from the other catalog only"
    ]


async def test_a_slow_catalog_times_out_into_partial_results(
    pkg_settings: Callable[..., Settings], upstream: FakeUpstream, catalogs: None
) -> None:
    original = upstream.routes["/cdnjs/libraries"]
    assert callable(original)

    def slow(query: dict[str, list[str]]) -> Reply:
        reply = original(query)
        reply.delay_s = 8.0
        return reply

    upstream.routes["/cdnjs/libraries"] = slow
    async with app_client(pkg_settings(upstream_timeout_s=0.5)) as client:
        started = time.monotonic()
        response = await client.get("/npm/search", params={"q": "lodash"})
        elapsed = time.monotonic() - started
    assert response.status_code == 200
    assert {r["kind"] for r in response.json()["results"]} == {"package"}
    assert response.json()["warnings"] == [
        "library: searching the library catalog timed out; results are from the other catalog only"
    ]
    assert elapsed < 5  # the 0.5 s deadline with a busy machine's margin, not the 8 s catalog


async def test_registry_without_search_falls_back_to_an_exact_name_lookup(
    npm: httpx.AsyncClient, registry: Registry, upstream: FakeUpstream
) -> None:
    del upstream.routes["/-/v1/search"]
    registry.publish("left-pad", "1.3.0", {"index.js": b"x"}, description="String left pad")
    body = (await npm.get("/npm/search", params={"q": "left-pad"})).json()
    assert body["results"] == [
        {
            "name": "left-pad",
            "version": "1.3.0",
            "description": "String left pad",
            "kind": "package",
            "url": "/npm/left-pad@1.3.0/",
            "ready": False,
        }
    ]
    body = (await npm.get("/npm/search", params={"q": "no such thing"})).json()
    assert body == {
        "service": body["service"],
        "query": "no such thing",
        "total": 0,
        "results": [],
        "warnings": [],
    }


async def test_answers_are_cached_but_ready_is_fresh(
    npm: httpx.AsyncClient, registry: Registry, upstream: FakeUpstream, catalog: LibraryCatalog
) -> None:
    registry.publish("tiny", "1.0.0", {"tiny.js": b"t"}, manifest={"main": "tiny.js"})
    registry.add_search("tiny", "1.0.0", "tiny")
    catalog.add("tinylib", "2.0.0", {"tinylib.min.js": b"tl"})
    first = (await npm.get("/npm/search", params={"q": "tiny"})).json()
    assert [r["ready"] for r in first["results"]] == [False, False]
    assert (await npm.get("/npm/tiny@1.0.0/tiny.js")).status_code == 200
    assert (await npm.get("/npm/lib/tinylib@2.0.0/tinylib.min.js")).status_code == 200
    hits_before = upstream.hits["/-/v1/search"]
    second = (await npm.get("/npm/search", params={"q": "TINY"})).json()
    assert upstream.hits["/-/v1/search"] == hits_before  # served from the answer cache
    assert [r["ready"] for r in second["results"]] == [True, True]


async def test_registry_comes_from_npm_config_registry_when_not_set(
    pkg_settings: Callable[..., Settings],
    registry: Registry,
    upstream: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry.add_search("from-env", "1.0.0", "found through npm_config_registry")
    monkeypatch.delenv("ASSETGATE_NPM_REGISTRY", raising=False)
    monkeypatch.setenv("npm_config_registry", upstream.url)
    async with app_client(pkg_settings(npm_registry=None)) as client:
        body = (await client.get("/npm/search", params={"q": "from-env"})).json()
    assert [r["name"] for r in body["results"]] == ["from-env"]
