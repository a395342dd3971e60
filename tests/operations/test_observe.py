"""Request id, access line, request metrics, /metrics and /readyz through the real app."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import httpx
import pytest
from prometheus_client import Gauge
from prometheus_client.parser import text_string_to_metric_families
from starlette.requests import Request
from starlette.routing import Route

from assetgate.app import PARTS, interfaces_of, upstream_names
from assetgate.cpu.workgate import WorkGate
from assetgate.operations.logs import ACCESS_LOGGER, JsonFormatter, TextFormatter
from assetgate.operations.metrics import Metrics
from assetgate.operations.observe import _secret, interface_of, loggable_path, request_id_from
from assetgate.operations.upstreams import upstream_of
from assetgate.settings import Settings
from tests.conftest import RedisServer, app_client
from tests.cpu.gates import admitted
from tests.waiting import wait_until_async

pytestmark = pytest.mark.anyio


# --- pure rules -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "interface"),
    [
        ("/", "optimizer"),
        ("/images/a.jpg", "optimizer"),
        ("/npmx/a.css", "optimizer"),
        ("/npm", "packages"),
        ("/npm/search", "packages"),
        ("/api/convert", "convert"),
        ("/api/whois", "whois"),
        ("/api/whois/json", "whois"),
        ("/ui", "ui"),
        ("/ui/convert", "ui"),
        ("/healthz", "other"),
        ("/readyz", "other"),
        ("/metrics", "other"),
        ("/openapi.json", "other"),
    ],
)
def test_interface_of(path: str, interface: str) -> None:
    assert interface_of(path, interfaces_of(PARTS)) == interface


@pytest.mark.parametrize(
    ("path", "query", "logged"),
    [
        ("/a.jpg", b"", "/a.jpg"),
        ("/a.jpg", b"w=100&f=webp", "/a.jpg?w=100&f=webp"),
        ("/a.jpg", b"w=100&s=d41d8cd98f00b204", "/a.jpg?w=100"),
        ("/a.jpg", b"s=abc", "/a.jpg"),
        ("/x", b"access_token=abc&q=1", "/x?q=1"),
        ("/x", b"api_key=abc&sig=1&Signature=2&password=p", "/x"),
        ("/x", b"next=" + b"a" * 40, "/x"),  # a long token-looking value, whatever its name
        ("/x", b"jwt=eyJhbGciOiJI.eyJzdWIiOiIx.sig", "/x"),
        ("/", b"file=images/a-long-but-ordinary-file-name.jpg", None),
    ],
)
def test_loggable_path_drops_secrets(path: str, query: bytes, logged: str | None) -> None:
    expected = logged if logged is not None else f"{path}?{query.decode().replace('/', '%2F')}"
    assert loggable_path(path, query) == expected


@pytest.mark.parametrize(
    "query",
    [
        b"width=400&format=jpeg",  # plain: written as it came
        b"w=&f=webp",
        b"w",  # a bare name comes back as ``w=``
        b"w=1&&f=2",
        b"w=a+b",
        b"w=%41&f=~x",
        b"w=1&token=abc",
        b"w=1&next=" + b"a" * 40,
        b"=1",
        b"a=b=c",
    ],
)
def test_loggable_path_writes_a_plain_query_as_parsing_it_would(query: bytes) -> None:
    """The shortcut for a query of plain ``name=value`` pairs gives what parsing and encoding it
    again gives (``urlencode(parse_qsl(...))`` minus the secrets)."""
    pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
    kept = [(name, value) for name, value in pairs if not _secret(name, value)]
    assert loggable_path("/a", query) == (f"/a?{urlencode(kept)}" if kept else "/a")


def test_request_id_only_from_a_trusted_proxy_and_only_plain() -> None:
    assert request_id_from(b"edge-42", from_trusted_proxy=True) == "edge-42"
    generated = request_id_from(b"edge-42", from_trusted_proxy=False)
    assert generated != "edge-42"
    assert len(generated) == 32
    assert request_id_from(b"has space", from_trusted_proxy=True) != "has space"
    assert request_id_from(b"x" * 129, from_trusted_proxy=True) != "x" * 129
    assert request_id_from(None, from_trusted_proxy=True) != request_id_from(None, True)


# --- through the app --------------------------------------------------------------------------


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a /metrics answer, keyed by (name, sorted labels)."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def count(text: str, interface: str, status: str, name: str = "assetgate_requests_total") -> float:
    key = (name, tuple(sorted({"interface": interface, "status": status}.items())))
    return samples(text).get(key, 0.0)


async def test_request_id_is_generated_and_echoed_on_every_answer(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(make_settings(rate_limit="1/10 seconds")) as client:
        answers = [
            await client.get("/healthz"),
            await client.get("/missing.png"),
            await client.post("/api/convert"),  # 400, spends the one request
            await client.post("/api/convert"),  # 429
            await client.get("/healthz", headers={"X-Request-Id": "forged-by-client"}),
        ]
    ids = [answer.headers["X-Request-Id"] for answer in answers]
    assert [answer.status_code for answer in answers] == [200, 404, 400, 429, 200]
    assert len(set(ids)) == len(ids)
    assert all(len(value) == 32 for value in ids)  # the client is not a trusted proxy


async def test_request_id_from_a_trusted_proxy_is_kept(
    make_settings: Callable[..., Settings], caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(trusted_proxies=["127.0.0.1"])  # the ASGI test client's address
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        async with app_client(settings) as client:
            response = await client.get(
                "/missing.png?w=10&s=0123456789abcdef",
                headers={"X-Request-Id": "edge-7f3a", "X-Forwarded-For": "198.51.100.7"},
            )
    assert response.headers["X-Request-Id"] == "edge-7f3a"
    [record] = [r for r in caplog.records if r.name == ACCESS_LOGGER]
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == "edge-7f3a"
    assert line["method"] == "GET"
    assert line["path"] == "/missing.png?w=10"
    assert line["interface"] == "optimizer"
    assert line["status"] == 404
    assert line["bytes"] == len(response.content)
    assert line["client"] == "198.51.100.7"
    assert line["duration_ms"] > 0
    assert "time" in line
    text = TextFormatter().format(record)
    assert "GET /missing.png?w=10 404" in text
    assert "request_id=edge-7f3a" in text
    assert "0123456789abcdef" not in text


async def test_optimizer_cache_state_is_in_the_access_line(
    settings: Settings, docroot: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import pyvips

    pyvips.Image.black(8, 8).write_to_file(str(docroot / "a.png"))
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        async with app_client(settings) as client:
            response = await client.get("/a.png?w=4&f=png")
    assert response.status_code == 200
    [record] = [r for r in caplog.records if r.name == ACCESS_LOGGER]
    line = json.loads(JsonFormatter().format(record))
    assert line["cache"] == response.headers["X-Optimizer-Cache"]


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """The JSON lines a root handler writes, formatted when logged (as in production)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)


async def test_a_500_is_counted_logged_with_its_error_id_and_tagged(
    settings: Settings, json_log: io.StringIO
) -> None:
    async def boom(request: Request) -> None:
        raise RuntimeError("secret detail")

    ctx = app_client(settings)
    ctx.app.router.routes.insert(0, Route("/boom", boom))
    async with ctx as client:
        response = await client.get("/boom")
        metrics = (await client.get("/metrics")).text
    assert response.status_code == 500
    request_id = response.headers["X-Request-Id"]
    error_id = response.json()["error_id"]
    lines = [json.loads(line) for line in json_log.getvalue().splitlines()]
    [error] = [line for line in lines if "error_id" in line]
    assert error["level"] == "error"
    assert error["request_id"] == request_id
    assert error["error_id"] == error_id
    assert "secret detail" in error["exception"]
    [access] = [line for line in lines if line.get("path") == "/boom"]
    assert (access["status"], access["request_id"]) == (500, request_id)
    assert count(metrics, "optimizer", "500") == 1


async def test_metrics_parse_and_move_with_traffic(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(make_settings(rate_limit="2/10 seconds")) as client:
        before = (await client.get("/metrics")).text
        for _ in range(3):
            await client.get("/missing.png")
        for _ in range(3):
            await client.post("/api/convert")  # 400, 400, 429
        await client.get("/api/whois")  # 429: one budget
        after = await client.get("/metrics")
    assert after.headers["content-type"].startswith("text/plain")
    assert count(before, "optimizer", "404") == 0
    text = after.text
    assert count(text, "optimizer", "404") == 3
    assert count(text, "convert", "400") == 2
    assert count(text, "convert", "429") == 1
    assert count(text, "whois", "429") == 1
    assert count(text, "other", "200") == 1  # the first scrape
    assert count(text, "convert", "429", "assetgate_rejected_total") == 1
    assert count(text, "whois", "429", "assetgate_rejected_total") == 1
    assert count(text, "optimizer", "404", "assetgate_request_duration_seconds_count") == 3
    found = samples(text)
    assert found[("assetgate_render_queue_depth", ())] == 0
    assert found[("assetgate_render_in_flight", ())] == 0


async def test_gate_gauges_follow_waiting_and_running_jobs() -> None:
    metrics = Metrics.build()
    gate = WorkGate(1, 4, queue_depth=metrics.queue_depth, in_flight=metrics.in_flight)
    release = threading.Event()
    running = threading.Event()

    def hold() -> int:
        running.set()
        release.wait(10)
        return 1

    def value(gauge: Gauge) -> float:
        return float(gauge._value.get())  # type: ignore[attr-defined]

    first = asyncio.ensure_future(gate.run(hold))
    second = asyncio.ensure_future(gate.run(hold))
    third = asyncio.ensure_future(gate.run(hold))
    await asyncio.to_thread(running.wait, 10)
    await wait_until_async(lambda: admitted(gate) == 3)
    assert (value(metrics.in_flight), value(metrics.queue_depth)) == (1, 2)
    third.cancel()  # dropped while waiting: leaves the queue without running
    with pytest.raises(asyncio.CancelledError):
        await third
    assert value(metrics.queue_depth) == 1
    release.set()
    assert await first == 1
    assert await second == 1
    assert (value(metrics.in_flight), value(metrics.queue_depth)) == (0, 0)
    gate.close()


async def test_readyz_is_ready_with_a_writable_store(settings: Settings) -> None:
    async with app_client(settings) as client:
        response = await client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {"store": "ok", "result_cache": "ok"}}
    assert response.headers["Cache-Control"] == "no-store"


async def test_readyz_names_an_unwritable_result_cache_without_its_path(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    results = tmp_path / "results"
    async with app_client(make_settings(result_cache_dir=results)) as client:
        shutil.rmtree(results, ignore_errors=True)  # the cache disk went away under the server
        results.write_text("not a directory")
        response = await client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["result_cache"]
    assert body["checks"]["store"] == "ok"
    assert body["checks"]["result_cache"].startswith("not writable")
    assert str(tmp_path) not in response.text


async def test_readyz_has_no_result_cache_check_when_the_cache_is_off(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    results = tmp_path / "results"
    results.write_text("not a directory")  # would fail the check, were it made
    settings = make_settings(result_cache_dir=results, result_cache_bytes=0)
    async with app_client(settings) as client:
        response = await client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"] == {"store": "ok"}


async def test_readyz_names_an_unwritable_store_without_its_path(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    store = tmp_path / "store"
    async with app_client(make_settings(store=store)) as client:
        shutil.rmtree(store)  # the disk went away under a running server
        store.write_text("not a directory")  # (a chmod would not stop root)
        response = await client.get("/readyz")
        alive = await client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unready"
    assert body["failed"] == ["store"]
    assert body["checks"]["store"].startswith("not writable")
    assert str(tmp_path) not in response.text
    assert alive.status_code == 200  # alive, only not ready


async def test_readyz_names_an_unreachable_redis(
    make_settings: Callable[..., Settings], free_port: Callable[[], int]
) -> None:
    nothing_there = f"redis://127.0.0.1:{free_port()}"
    async with app_client(make_settings(redis_url=nothing_there)) as client:
        response = await client.get("/readyz")
        limited = await client.post("/api/convert")  # the limiter fails open, never a 500
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["redis"]
    assert body["checks"]["store"] == "ok"
    assert body["checks"]["redis"].startswith("unreachable")
    assert "127.0.0.1" not in response.text
    assert limited.status_code == 400


async def test_readyz_with_a_live_redis(
    make_settings: Callable[..., Settings], redis_server: RedisServer
) -> None:
    async with app_client(make_settings(redis_url=redis_server.url)) as client:
        response = await client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"] == {"store": "ok", "result_cache": "ok", "redis": "ok"}


async def test_rate_limit_storage_defaults_to_the_redis_url(
    make_settings: Callable[..., Settings], redis_server: RedisServer
) -> None:
    settings = make_settings(redis_url=redis_server.url, rate_limit="2/10 seconds")
    async with app_client(settings) as first, app_client(settings) as second:
        answers = [await first.post("/api/convert"), await second.post("/api/convert")]
        answers.append(await first.post("/api/convert"))
    assert [a.status_code for a in answers] == [400, 400, 429]
    explicit = make_settings(redis_url=redis_server.url, rate_limit_storage="memory://")
    async with app_client(explicit) as only:
        checks = (await only.get("/readyz")).json()["checks"]
    assert checks == {"store": "ok", "result_cache": "ok", "redis": "ok"}


async def test_metrics_head_and_readyz_head(client: httpx.AsyncClient) -> None:
    assert (await client.head("/metrics")).status_code == 200
    assert (await client.head("/readyz")).status_code == 200


# --- upstream errors --------------------------------------------------------------------------


def upstream_errors(text: str) -> dict[str, float]:
    return {
        sample.labels["upstream"]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "assetgate_upstream_errors_total"
    }


@pytest.mark.parametrize(
    ("url", "upstream"),
    [
        ("http://catalog.test/libraries?search=x", "library catalog"),
        ("http://files.test/libs/jquery/3.7.1/jquery.min.js", "library catalog"),
        ("https://rdap.example/rdap/domain/example.org", "rdap"),
        ("http://registry.test/react", "npm registry"),
        ("http://catalog.test:8080/libraries", "npm registry"),  # another port, another server
        ("http://registry.test/react/-/react-18.2.0.tgz", "npm registry"),
    ],
)
def test_upstream_is_named_from_the_request(url: str, upstream: str) -> None:
    settings = Settings(library_api="http://catalog.test", library_files="http://files.test/libs")
    assert upstream_of(httpx.URL(url), upstream_names(PARTS, settings)) == upstream


async def test_unreachable_catalogs_count_as_upstream_errors(
    make_settings: Callable[..., Settings], free_port: Callable[[], int]
) -> None:
    registry, catalog = (f"http://127.0.0.1:{free_port()}" for _ in range(2))
    settings = make_settings(
        npm_registry=f"{registry}/", library_api=catalog, library_files=f"{catalog}/libs"
    )
    async with app_client(settings) as client:
        before = upstream_errors((await client.get("/metrics")).text)
        response = await client.get("/npm/search", params={"q": "react"})
        after = upstream_errors((await client.get("/metrics")).text)
    assert response.status_code == 502
    assert not any(before.values())
    assert after.get("npm registry", 0) >= 1
    assert after.get("library catalog", 0) >= 1


async def test_an_unreachable_whois_server_counts(
    make_settings: Callable[..., Settings], free_port: Callable[[], int], tmp_path: Path
) -> None:
    servers = tmp_path / "whois-servers.json"
    servers.write_text(json.dumps({"com": f"127.0.0.1:{free_port()}"}))
    async with app_client(make_settings(whois_servers=servers)) as client:
        response = await client.get("/api/whois", params={"domain": "example.com"})
        after = upstream_errors((await client.get("/metrics")).text)
    assert response.status_code >= 500
    assert after == {"whois server": 1}


# --- issue 24, item 9: forged log lines with ASSETGATE_LOG_FORMAT=text ---------------------------

FORGED = "2026-01-01T00:00:00.000Z WARNING assetgate.access forged"


def test_text_lines_escape_control_characters() -> None:
    record = logging.LogRecord(
        "assetgate.x", logging.WARNING, __file__, 1, "a\nb\r\x1b[31m\u2028%s", (FORGED,), None
    )
    line = TextFormatter().format(record)
    assert "\n" not in line
    assert "\r" not in line
    assert "\x1b" not in line
    assert "a\\x0ab\\x0d\\x1b[31m\\u2028" + FORGED in line
    try:
        raise ValueError("bad\n" + FORGED)
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    _, *rest = TextFormatter().format(record).split("\n")
    assert rest
    assert all(later.startswith("  ") for later in rest)  # no line passes for a record's start


def test_a_newline_in_a_path_cannot_forge_a_text_log_line(docroot: Path, tmp_path: Path) -> None:
    from tests.serve_process import serve

    with serve(tmp_path, root=str(docroot), log_format="text", log_level="info") as server:
        target = "/x%0A" + FORGED.replace(" ", "%20") + ".png"
        for path in (target, "/?file=" + target.lstrip("/")):
            httpx.get(server.base + path, timeout=10)
        httpx.get(server.base + "/healthz", timeout=10)
        log = server.log_text()
    lines = [line for line in log.splitlines() if line.strip()]
    assert any("\\x0a2026-01-01" in line for line in lines), log
    for line in lines:
        assert not line.startswith(FORGED), line
        assert line[:4].isdigit() or line.startswith((" ", "assetgate:")), line
