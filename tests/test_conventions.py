"""What every part gets from its declaration (``part.Part``), through the real app.

A made-up part declared here is labelled, counted and listed like the shipped ones without a line
of the floors below changing; and on every route of every shipped part HEAD is GET without its
body, a method the part does not take is the JSON 405 with ``Allow``, and ``OPTIONS`` is the
CORS preflight on the parts that had one (optimizer, packages) and a 405 elsewhere.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
import pyvips
from prometheus_client.parser import text_string_to_metric_families
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from assetgate.app import PARTS, create_app
from assetgate.cli.serve import welcome
from assetgate.operations.logs import ACCESS_LOGGER, JsonFormatter
from assetgate.operations.upstreams import Upstream
from assetgate.packages.bodies import CROSS_ORIGIN
from assetgate.part import PageLink, Part
from assetgate.resources import resources
from assetgate.settings import Settings
from assetgate.web.http import DEFAULT_ALLOW_HEADERS, PREFLIGHT_MAX_AGE_S
from tests.conftest import app_client
from tests.serve_process import pick_port
from tests.whois.fakes import WhoisServer

pytestmark = pytest.mark.anyio

# --- a part the floors below have never heard of -------------------------------------------------

#: Nothing listens there: the made-up part's upstream fails at connect.
EXTRA_UPSTREAM = f"http://127.0.0.1:{pick_port()}"


async def extra_hello(request: Request) -> Response:
    return PlainTextResponse("hello from the extra part")


async def extra_fetch(request: Request) -> Response:
    try:
        await resources(request).http.get(f"{EXTRA_UPSTREAM}/thing")
    except httpx.TransportError:
        return PlainTextResponse("upstream down", status_code=502)
    return PlainTextResponse("upstream answered")


EXTRA = Part(
    name="extra",
    prefixes=("/extra",),
    endpoints={"/extra/fetch": extra_fetch, "/extra/{rest:path}": extra_hello},
    methods=("GET", "HEAD"),
    pages=(PageLink("/extra/", "a made-up part"),),
    upstreams=(Upstream("extra upstream", urls=lambda settings: (EXTRA_UPSTREAM,)),),
)


def access_line(record: logging.LogRecord) -> dict[str, object]:
    line: dict[str, object] = json.loads(JsonFormatter().format(record))
    return line


def samples(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {
        tuple(sorted(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    }


async def test_a_new_part_is_labelled_counted_and_listed_by_its_declaration(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = app_client(settings)
    ctx.app = create_app(settings, parts=(EXTRA, *PARTS))  # before the optimizer's catch-all
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        async with ctx as client:
            hello = await client.get("/extra/page")
            fetched = await client.get("/extra/fetch")
            refused = await client.post("/extra/page")
            metrics = (await client.get("/metrics")).text
    assert (hello.status_code, hello.text) == (200, "hello from the extra part")
    assert fetched.status_code == 502
    assert (refused.status_code, refused.headers["allow"]) == (405, "GET, HEAD")
    lines = [access_line(r) for r in caplog.records if r.name == ACCESS_LOGGER]
    logged = {(line["path"], line["interface"], line["status"]) for line in lines}
    assert ("/extra/page", "extra", 200) in logged
    assert ("/extra/fetch", "extra", 502) in logged
    requests = samples(metrics, "assetgate_requests_total")
    assert requests[(("interface", "extra"), ("status", "200"))] == 1
    assert requests[(("interface", "extra"), ("status", "405"))] == 1
    errors = samples(metrics, "assetgate_upstream_errors_total")
    assert errors[(("upstream", "extra upstream"),)] == 1
    assert f"/extra/{' ' * 10} a made-up part" in welcome(settings, parts=(EXTRA, *PARTS))


async def test_without_the_part_its_paths_are_the_catch_alls(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        async with app_client(settings) as client:
            missing = await client.get("/extra/page")
    assert missing.status_code == 404
    [line] = [access_line(r) for r in caplog.records if r.name == ACCESS_LOGGER]
    assert line["interface"] == "optimizer"
    assert "/extra/" not in welcome(settings)


# --- HEAD, 405 and OPTIONS on every route of every part ------------------------------------------

#: Requests answered by each route of each part (the test fails when a route has none).
SAMPLES: dict[str, tuple[str, ...]] = {
    "/": ("/?file=photo.png&width=8", "/?width=8"),
    "/{path:path}": ("/photo.png?width=8&format=webp", "/photo.png", "/site.css?min=1", "/none"),
    "/npm": ("/npm",),
    "/npm/importmap": ("/npm/importmap?pkg=demo@1.0.0",),
    "/npm/search": ("/npm/search?q=react", "/npm/search?q=r"),
    "/npm/_assets/{name}": ("/npm/_assets/search.js", "/npm/_assets/nothing.js"),
    "/npm/{rest:path}": ("/npm/", "/npm/demo@1.0.0/index.js", "/npm/lib/"),
    "/api/whois": ("/api/whois?domain=example.fr", "/api/whois?domain=a..fr"),
    "/api/whois/json": ("/api/whois/json?domain=example.fr",),
    "/api/convert": ("/api/convert",),
    "/admin/purge": ("/admin/purge",),
    "/ui": ("/ui",),
    "/ui/{rest:path}": ("/ui/", "/ui/optimizer", "/ui/static/ui.css", "/ui/files?q=photo"),
}
#: Headers that differ between two answers by nature, not by method.
PER_ANSWER = frozenset({"date", "x-request-id"})
PREFLIGHT = {"origin": "https://b.test", "access-control-request-method": "GET"}
WHOIS_FR = "Domain Name: example.fr\r\nRegistrar: Example Registrar\r\nCreated: 2001-01-01\r\n"


def routes_of(parts: tuple[Part, ...]) -> Iterator[tuple[Part, str]]:
    for part in parts:
        for route in part.routes:
            yield part, route.path


def test_every_route_of_every_part_has_samples() -> None:
    assert {path for _, path in routes_of(PARTS)} == set(SAMPLES)


@pytest.fixture
async def whois_fr() -> AsyncIterator[WhoisServer]:
    server = await WhoisServer({"example.fr": WHOIS_FR}).start()
    yield server
    await server.close()


@pytest.fixture
def served(
    make_settings: Callable[..., Settings], docroot: Path, tmp_path: Path, whois_fr: WhoisServer
) -> Settings:
    pyvips.Image.black(16, 12).write_to_file(str(docroot / "photo.png"))
    (docroot / "site.css").write_text("body  {  color : red ; }\n")
    servers = tmp_path / "whois-servers.json"
    servers.write_text(json.dumps({"fr": whois_fr.address}))
    return make_settings(whois_servers=servers, rate_limit_parts=[], cors_origin="https://a.test")


def unlike(head: httpx.Response, get: httpx.Response) -> dict[str, tuple[str | None, str | None]]:
    names = (set(head.headers) | set(get.headers)) - PER_ANSWER
    return {
        name: (head.headers.get(name), get.headers.get(name))
        for name in names
        if head.headers.get(name) != get.headers.get(name)
    }


async def test_head_is_the_get_without_its_body_on_every_route(
    served: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """After a first GET (so caches are warm for both), a GET and a HEAD answer alike, and the
    app itself sends no body for HEAD (the access line counts the bytes the app sent: an ASGI
    server or client that drops a HEAD body would hide it)."""
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        await compare_head_and_get(served)
    lines = [access_line(r) for r in caplog.records if r.name == ACCESS_LOGGER]
    heads = [line for line in lines if line["method"] == "HEAD"]
    assert len(heads) == sum(len(urls) for path, urls in SAMPLES.items() if path != "/api/convert")
    assert [line for line in heads if line["bytes"] != 0] == []
    assert [line for line in lines if line["method"] == "GET" and line["bytes"]] != []


async def compare_head_and_get(served: Settings) -> None:
    async with app_client(served) as client:
        for part, path in routes_of(PARTS):
            if "GET" not in part.methods:
                continue
            for url in SAMPLES[path]:
                await client.get(url)
                get = await client.get(url)
                head = await client.head(url)
                assert (url, head.status_code) == (url, get.status_code)
                assert (url, head.content) == (url, b"")
                assert unlike(head, get) == {}, url
                if "content-length" in get.headers:
                    assert int(head.headers["content-length"]) == len(get.content), url
        # the samples reach real answers, not only errors
        assert (await client.get("/photo.png?width=8&format=webp")).headers["x-output-format"]
        assert (await client.get("/api/whois/json?domain=example.fr")).status_code == 200
        assert (await client.get("/npm/_assets/search.js")).status_code == 200
        assert (await client.get("/ui/files?q=photo")).json()["files"] == ["photo.png"]


async def test_a_method_a_part_does_not_take_is_405_with_allow(served: Settings) -> None:
    async with app_client(served) as client:
        for part, path in routes_of(PARTS):
            allow = ", ".join(part.methods)
            refused = [m for m in ("GET", "PUT", "DELETE", "PATCH") if m not in part.methods]
            for url in SAMPLES[path]:
                for method in refused:
                    response = await client.request(method, url)
                    assert (url, method, response.status_code) == (url, method, 405)
                    assert response.headers["allow"] == allow, url
                    assert response.json()["code"] == 405
                if "OPTIONS" not in part.methods:
                    response = await client.options(url)
                    assert (response.status_code, response.headers["allow"]) == (405, allow)
                if "HEAD" not in part.methods:
                    response = await client.head(url)
                    assert (response.status_code, response.content) == (405, b"")
                    assert response.headers["allow"] == allow


async def test_the_preflight_is_as_it_was_on_the_parts_that_had_one(served: Settings) -> None:
    with_cors = [(part, path) for part, path in routes_of(PARTS) if part.cors is not None]
    assert {part.name for part, _ in with_cors} == {"optimizer", "packages"}
    async with app_client(served) as client:
        for part, path in with_cors:
            for url in SAMPLES[path]:
                asked = await client.options(url, headers=PREFLIGHT)
                named = await client.options(
                    url, headers={"access-control-request-headers": "X-Trace"}
                )
                for response in (asked, named):
                    assert (url, response.status_code, response.content) == (url, 204, b"")
                    assert response.headers["allow"] == "GET, HEAD, OPTIONS"
                    assert response.headers["access-control-allow-methods"] == "GET, HEAD, OPTIONS"
                    assert response.headers["access-control-max-age"] == str(PREFLIGHT_MAX_AGE_S)
                    assert "ratelimit" not in response.headers
                assert asked.headers["access-control-allow-headers"] == DEFAULT_ALLOW_HEADERS
                assert named.headers["access-control-allow-headers"] == "X-Trace"
                cors = {k: v for k, v in asked.headers.items() if k.startswith("access-control-")}
                if part.name == "optimizer":  # the setting's origin, nothing more, as before
                    assert asked.headers["access-control-allow-origin"] == "https://a.test"
                    assert "access-control-expose-headers" not in cors
                else:  # the package library's open CORS fields
                    for name, value in CROSS_ORIGIN.items():
                        assert asked.headers[name] == value


async def test_a_preflight_spends_no_budget(make_settings: Callable[..., Settings]) -> None:
    settings = make_settings(rate_limit="1/minute", rate_limit_parts=["optimizer", "packages"])
    async with app_client(settings) as client:
        statuses = [(await client.options(url)).status_code for url in ("/a.png", "/npm") * 3]
        spent = await client.get("/npm/_assets/search.js")
        over = await client.get("/npm/_assets/search.js")
    assert statuses == [204] * 6
    assert (spent.status_code, over.status_code) == (200, 429)


def test_a_route_outside_the_part_s_prefixes_is_refused_when_declared() -> None:
    with pytest.raises(ValueError, match=r"extra: /elsewhere is outside its prefixes"):
        Part(name="extra", prefixes=("/extra",), endpoints={"/elsewhere": extra_hello})
    assert Part(name="x", prefixes=("/x/",), endpoints={"/x": extra_hello}).routes[0].path == "/x"


def test_one_upstream_names_the_rest(settings: Settings) -> None:
    from assetgate.app import upstream_names

    claims = Part(
        name="x",
        prefixes=("/x",),
        endpoints={"/x": extra_hello},
        upstreams=(Upstream("x registry", rest=True),),
    )
    with pytest.raises(ValueError, match="'npm registry' and 'x registry' both claim the rest"):
        upstream_names((*PARTS, claims), settings)
    assert upstream_names(PARTS, settings).rest == "npm registry"
