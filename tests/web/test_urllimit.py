"""A URL longer than ASSETGATE_MAX_URL_BYTES is the JSON 414, on a real uvicorn (both parsers):
the HTTP parser's own limit is above it, so no client gets its plain-text 400."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn

from assetgate.app import create_app
from assetgate.settings import Settings
from assetgate.web.urllimit import PARSER_MAX_TARGET, h11_head_limit, url_bytes
from tests.imaging import factory as make
from tests.waiting import wait_until


@contextmanager
def serving(settings: Settings, **config: Any) -> Iterator[int]:
    app = create_app(settings)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", **config)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started or not thread.is_alive(), timeout=30, message="uvicorn")
    assert server.started, "uvicorn stopped while starting"
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def ask(port: int, target: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """One raw HTTP/1.1 exchange: the request line goes out exactly as written."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(f"{method} {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


@pytest.fixture
def app_settings(make_settings: Callable[..., Settings], docroot: Any) -> Settings:
    (docroot / "a.jpg").write_bytes(make.jpeg(64, 48))
    return make_settings()


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_too_long_is_the_json_414_up_to_the_parsers_limit(
    app_settings: Settings, http: str
) -> None:
    limit = app_settings.max_url_bytes
    config: dict[str, Any] = {"http": http}
    if http == "h11":  # as `assetgate serve` configures it
        config["h11_max_incomplete_event_size"] = h11_head_limit(limit)
    with serving(app_settings, **config) as port:
        at_limit = "/?file=a.jpg&w=10&v=" + "x" * (limit - len("/?file=a.jpg&w=10&v="))
        assert len(at_limit) == limit
        status, headers, _ = ask(port, at_limit)
        assert status == 200
        assert headers["content-type"] == "image/jpeg"
        for target in (
            at_limit + "x",
            "/?file=" + "%C3%A9" * 5000,
            "/a.jpg?w=10&v=" + "x" * (PARSER_MAX_TARGET - 14),  # the longest the parser takes
            "/npm/search?q=" + "ab" * 9000,
            "/ui/" + "x" * 20000,
        ):
            status, headers, body = ask(port, target)
            assert status == 414, (len(target), body[:80])
            assert headers["content-type"] == "application/json"
            assert body.startswith(
                b'{"error":"URL longer than 16384 bytes (ASSETGATE_MAX_URL_BYTES)"'
            )
            assert b'"code":414' in body
        status, headers, body = ask(port, at_limit + "x", method="HEAD")
        assert (status, body) == (414, b"")
        assert int(headers["content-length"]) > 0  # a GET's length, as for every HEAD


def test_the_limit_is_a_setting(make_settings: Callable[..., Settings]) -> None:
    with serving(make_settings(max_url_bytes=4096), http="httptools") as port:
        assert ask(port, "/" + "x" * 4095)[0] == 404
        status, _, body = ask(port, "/" + "x" * 4096)
    assert status == 414
    assert b"4096 bytes" in body


def test_url_bytes_counts_what_was_sent() -> None:
    scope = {"path": "/é", "raw_path": b"/%C3%A9", "query_string": b"a=%20"}
    assert url_bytes(scope) == len("/%C3%A9?a=%20")
    assert url_bytes({"path": "/", "query_string": b""}) == 1
