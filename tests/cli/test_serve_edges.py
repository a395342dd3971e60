"""Edges of ``assetgate serve`` over real sockets: redirects, concurrency, keep-alive."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from tests.serve_process import serve


def raw_request(port: int, request: bytes, timeout_s: float = 10) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as conn:
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.fixture(scope="module")
def edge_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    tmp_path = tmp_path_factory.mktemp("edges")
    root = tmp_path / "root"
    root.mkdir()
    (root / "hello.txt").write_text("hello")
    (root / "h\u00e9llo.txt").write_text("h\u00e9llo")  # non-ASCII, no control character
    with serve(tmp_path, root=str(root), limit_concurrency="2", keep_alive_s="1") as server:
        yield server.base, server.port


@pytest.mark.parametrize(
    "target",
    [b"/npm/abc@1.0%0A/", b"/hello.txt/", b"/npm/", b"/whois/", b"/healthz/", b"/%0A/"],
)
def test_no_trailing_slash_redirect_and_no_location_from_host(
    edge_server: tuple[str, int], target: bytes
) -> None:
    _, port = edge_server
    answer = raw_request(
        port,
        b"GET " + target + b" HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    )
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    status = int(head.split(b" ", 2)[1])
    assert not 300 <= status < 400, head
    assert b"location:" not in head
    assert b"evil.example" not in answer


def test_idle_connections_do_not_count_against_the_concurrency_limit(
    edge_server: tuple[str, int],
) -> None:
    """ASSETGATE_LIMIT_CONCURRENCY counts running requests only (issue 24, item 10); its 503
    is tested in tests/cli/test_connections.py."""
    base, port = edge_server
    assert httpx.get(f"{base}/hello.txt").status_code == 200
    # Two idle connections (one after a request) and the request's own: under uvicorn's own
    # count this was over ASSETGATE_LIMIT_CONCURRENCY=2 and answered 503.
    with (
        socket.create_connection(("127.0.0.1", port)) as idle,
        socket.create_connection(("127.0.0.1", port)),
    ):
        idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert idle.recv(65536).startswith(b"HTTP/1.1 200")
        assert httpx.get(f"{base}/hello.txt").status_code == 200


def test_idle_keep_alive_connection_is_closed(edge_server: tuple[str, int]) -> None:
    _, port = edge_server
    with socket.create_connection(("127.0.0.1", port), timeout=4) as conn:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        # Read until the server closes: ASSETGATE_KEEP_ALIVE_S=1 closes the idle connection, while
        # uvicorn's default of 5 s would outlast the 4 s socket timeout and fail the test.
        while chunk := conn.recv(65536):
            received += chunk
        assert received.startswith(b"HTTP/1.1 200")
        assert received.endswith(b'"interface_version":"1.2.2"}')


@pytest.mark.parametrize(
    "target",
    [b"/metrics%0A", b"/healthz%0A", b"/hello.txt%0A", b"/hello.txt%00", b"/healthz%C2%85",
     b"/npm%7F", b"/%1B[31m"],
)  # fmt: skip
def test_a_control_character_in_the_path_is_a_404_before_routing(
    edge_server: tuple[str, int], target: bytes
) -> None:
    _, port = edge_server
    for method in (b"GET", b"HEAD"):
        answer = raw_request(
            port, method + b" " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 404 "), head
        assert b"content-type: application/json" in head.lower()
        assert body == (b'{"error":"not found","code":404}' if method == b"GET" else b"")


def test_a_non_ascii_path_still_reaches_its_file(edge_server: tuple[str, int]) -> None:
    base, _ = edge_server
    response = httpx.get(f"{base}/h%C3%A9llo.txt")
    assert response.status_code == 200
    assert response.text == "h\u00e9llo"
