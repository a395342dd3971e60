"""cli/head_with_body.py through a real uvicorn (uvloop, httptools) with the guarded protocol.

The transport under the protocol records what is written to it and passes everything on, so
each test checks both what the client receives over TCP and how many writes carried it.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from assetgate.cli.connections import GuardedHttpToolsProtocol
from tests.waiting import wait_until

Write = tuple[str, bytes]  # ("write" | "writelines", the bytes written by that one call)


class Recording:
    """The real transport, with each write and writelines call written down."""

    def __init__(self, transport: asyncio.Transport, calls: list[Write]) -> None:
        self._transport = transport
        self.calls = calls

    def write(self, data: bytes) -> None:
        self.calls.append(("write", bytes(data)))
        self._transport.write(data)

    def writelines(self, parts: Any) -> None:
        parts = [bytes(part) for part in parts]
        self.calls.append(("writelines", b"".join(parts)))
        self._transport.writelines(parts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


CALLS: list[Write] = []


class RecordedProtocol(GuardedHttpToolsProtocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(Recording(transport, CALLS))  # type: ignore[arg-type]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/upload":
        received = b""
        while True:
            message = await receive()
            received += message.get("body", b"")
            if not message.get("more_body", False):
                break
        body = b"got " + received
    else:
        body = b"hello"
    if path == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"one", "more_body": True})
        await send({"type": "http.response.body", "body": b"two"})
        return
    length = str(len(body)).encode()
    headers = [(b"content-type", b"text/plain"), (b"content-length", length)]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def port() -> Iterator[int]:
    CALLS.clear()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", lifespan="off", http=RecordedProtocol
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started or not thread.is_alive(), timeout=30, message="uvicorn")
    assert server.started
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def exchange(port: int, request: bytes, answers: int = 1, then: bytes = b"") -> bytes:
    """Send ``request`` (and ``then`` once something came back), read until ``answers`` answers
    ended (each ends with its body: "hello", "got ...", or the chunked stream's end)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(request)
        received = b""
        while received.count(b"HTTP/1.1 2") < answers or not _ended(received):
            chunk = client.recv(65536)
            assert chunk, f"the server closed after {received!r}"
            received += chunk
            if then and b"100 Continue" in received:
                client.sendall(then)
                then = b""
        return received


def _ended(received: bytes) -> bool:
    return received.endswith((b"hello", b"0\r\n\r\n", b"got data", b"\r\n\r\n"))


def heads(calls: list[Write]) -> list[Write]:
    return [call for call in calls if call[1].startswith(b"HTTP/1.1 ")]


def test_an_answer_leaves_in_one_write_head_and_body(port: int) -> None:
    received = exchange(port, b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
    assert received.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"content-length: 5\r\n" in received
    assert received.endswith(b"\r\n\r\nhello")
    wait_until(lambda: len(CALLS) == 1)
    kind, data = CALLS[0]
    assert kind == "writelines"
    assert data == received


def test_an_answer_without_a_body_sends_its_head_when_it_ends(port: int) -> None:
    received = exchange(port, b"HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n")
    assert received.startswith(b"HTTP/1.1 200 OK\r\n")
    assert received.endswith(b"\r\n\r\n")
    assert b"hello" not in received
    wait_until(lambda: len(CALLS) == 1)
    assert [("write", received)] == CALLS


def test_a_streamed_answer_sends_its_head_with_the_first_chunk(port: int) -> None:
    received = exchange(port, b"GET /stream HTTP/1.1\r\nHost: a\r\n\r\n")
    assert b"transfer-encoding: chunked" in received
    assert received.endswith(b"3\r\none\r\n3\r\ntwo\r\n0\r\n\r\n")
    wait_until(lambda: len(CALLS) == 2)
    first, second = CALLS
    assert first[0] == "writelines"
    assert first[1].endswith(b"\r\n\r\n3\r\none\r\n")
    assert second == ("write", b"3\r\ntwo\r\n0\r\n\r\n")


def test_100_continue_leaves_at_once_before_the_answer(port: int) -> None:
    request = (
        b"POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"
    )
    received = exchange(port, request, then=b"data")
    assert received.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")
    assert received.endswith(b"got data")
    wait_until(lambda: len(CALLS) == 2)
    assert CALLS[0] == ("write", b"HTTP/1.1 100 Continue\r\n\r\n")
    assert CALLS[1][0] == "writelines"
    assert CALLS[1][1].endswith(b"got data")


def test_pipelined_requests_each_get_their_answer_in_one_write(port: int) -> None:
    one = b"GET /a HTTP/1.1\r\nHost: a\r\n\r\n"
    received = exchange(port, one * 3, answers=3)
    assert received.count(b"HTTP/1.1 200 OK\r\n") == 3
    assert received.count(b"hello") == 3
    wait_until(lambda: len(CALLS) == 3)
    assert [kind for kind, _ in CALLS] == ["writelines"] * 3
    assert len(heads(CALLS)) == 3
