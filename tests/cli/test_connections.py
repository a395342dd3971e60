"""Issue 24, item 10: idle and slow connections against a real ``assetgate serve`` on loopback.

1,100 connections that never sent a request once made every request a 503 (uvicorn counted
them in ``limit_concurrency`` and never closed them). Now each connection has a header deadline
and a body idle deadline, connections have a budget of their own (the oldest idle one makes
room), and ``ASSETGATE_LIMIT_CONCURRENCY`` counts running requests only.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.serve_process import Served, serve
from tests.waiting import wait_until

HEADER_TIMEOUT_S = 2.0


def open_idle(port: int, count: int) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setblocking(False)
        sockets.append(sock)
    return sockets


def closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def wait_closed(sock: socket.socket, within_s: float) -> float:
    """Seconds until the server closed ``sock`` (a blocking socket), failing past ``within_s``."""
    started = time.monotonic()
    sock.settimeout(within_s)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        pytest.fail(f"still open after {within_s} s")
    except ConnectionResetError:
        pass
    return time.monotonic() - started


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "hello.txt").write_text("hello")
    return root


@pytest.fixture
def served(root: Path, tmp_path: Path) -> Iterator[Served]:
    with serve(
        tmp_path,
        root=str(root),
        log_level="warning",
        header_timeout_s=str(HEADER_TIMEOUT_S),
        idle_timeout_s="2",
        limit_concurrency="2",
        max_connections="300",
    ) as server:
        yield server


def test_1100_idle_connections_leave_requests_served(root: Path, tmp_path: Path) -> None:
    """The issue's figure with the default budgets, only a shorter header deadline."""
    with serve(
        tmp_path, root=str(root), log_level="warning", header_timeout_s=str(HEADER_TIMEOUT_S)
    ) as server:
        idle = open_idle(server.port, 1100)
        try:
            time.sleep(0.3)
            took = []
            with httpx.Client(base_url=server.base, timeout=10) as client:
                for _ in range(20):
                    started = time.monotonic()
                    response = client.get("/hello.txt", headers={"Connection": "close"})
                    took.append(time.monotonic() - started)
                    assert response.status_code == 200
                    assert response.text == "hello"
            # The median: one request a busy machine delayed is not a request stalled behind
            # the idle connections (those were 503s, asserted above, or waited seconds).
            assert sorted(took)[len(took) // 2] < 1.0, took
            time.sleep(HEADER_TIMEOUT_S + 1.0)
            assert all(closed_by_server(sock) for sock in idle)  # the header deadline
        finally:
            for sock in idle:
                sock.close()


def test_past_the_connection_budget_the_oldest_idle_connection_makes_room(
    served: Served,
) -> None:
    idle = open_idle(served.port, 400)  # 100 over ASSETGATE_MAX_CONNECTIONS=300
    try:
        evicted = wait_until(
            lambda: (gone := [s for s in idle if closed_by_server(s)]) and len(gone) >= 100 and gone
        )
        assert len(evicted) >= 100
        assert all(closed_by_server(sock) for sock in idle[:100])  # oldest first
        for _ in range(10):
            response = httpx.get(served.base + "/hello.txt", timeout=5)
            assert response.status_code == 200
    finally:
        for sock in idle:
            sock.close()


def test_headers_trickling_in_are_cut_at_the_header_deadline(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        started = time.monotonic()
        request = b"GET /hello.txt HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
        with contextlib.suppress(OSError):
            for byte in request:
                sock.sendall(bytes([byte]))
                time.sleep(0.05)
                if time.monotonic() - started > HEADER_TIMEOUT_S + 6:
                    break
        wait_closed(sock, 3)
        assert time.monotonic() - started < HEADER_TIMEOUT_S + 4  # cut, not the trickle's end


def test_a_body_that_stops_arriving_is_cut_at_the_idle_deadline(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        sock.sendall(
            b"POST /api/convert HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; "
            b"boundary=b\r\nContent-Length: 1000\r\n\r\n--b\r\n"
        )
        took = wait_closed(sock, 10)
    assert 1.5 < took < 6, took  # the 2 s idle deadline (not sooner; later only by load)


UPLOAD_HEAD = (
    b"POST /api/convert HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; "
    b"boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\n"
)


def open_uploads(port: int, count: int) -> list[socket.socket]:
    """``count`` uploads to /api/convert that sent their head and the body's first line."""
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(UPLOAD_HEAD)
        sock.setblocking(False)
        sockets.append(sock)
    return sockets


def waiting(sock: socket.socket) -> bool:
    """Nothing came back on ``sock`` (no answer, no close): its request is still held."""
    try:
        sock.recv(1)
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False


def trickle(sockets: list[socket.socket]) -> None:
    """One more byte of each body (the attack's 1 byte every few seconds)."""
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.send(b"x")


def timed_get(base: str, path: str = "/hello.txt") -> tuple[int, float]:
    started = time.monotonic()
    response = httpx.get(base + path, timeout=10, headers={"Connection": "close"})
    return response.status_code, time.monotonic() - started


def test_the_work_budget_counts_running_requests_not_connections(served: Served) -> None:
    # Idle connections do not count against ASSETGATE_LIMIT_CONCURRENCY=2 …
    idle = open_idle(served.port, 50)
    try:
        assert httpx.get(served.base + "/hello.txt", timeout=5).status_code == 200
        # … and neither do requests whose bodies are still arriving (issue 35, item 1).
        uploads = open_uploads(served.port, 2)
        try:
            time.sleep(0.3)
            assert httpx.get(served.base + "/hello.txt", timeout=5).status_code == 200
        finally:
            for sock in uploads:
                sock.close()
    finally:
        for sock in idle:
            sock.close()


@pytest.fixture
def patient(root: Path, tmp_path: Path) -> Iterator[Served]:
    """Deadlines long enough that trickling uploads stay held while the test looks."""
    with serve(
        tmp_path,
        root=str(root),
        log_level="warning",
        idle_timeout_s="60",
        body_grace_s="60",
        limit_concurrency="4",
        max_connections="300",
        rate_limit="100000/10 seconds",  # every upload reaches its body (none answered 429)
    ) as server:
        yield server


def test_trickling_uploads_hold_no_place_in_the_work_budget(patient: Served) -> None:
    """Issue 35, item 1: 60 uploads trickling against a work budget of 4 (the issue's 1,024 vs
    the default 1,024, scaled down: bench/reliability.py --uploads holds 1,100)."""
    uploads = open_uploads(patient.port, 60)
    try:
        time.sleep(0.3)
        for _ in range(3):
            trickle(uploads)
            answers = [timed_get(patient.base, path) for path in ("/hello.txt", "/healthz")]
            assert [status for status, _ in answers] == [200, 200], answers
            # Before the fix these were 503s; the 2 s target itself is bench/reliability.py
            # --uploads' (a loaded CI worker took longer than 2 s here).
            assert max(took for _, took in answers) < 8.0, answers
        assert all(waiting(sock) for sock in uploads)  # held: not answered, not closed
    finally:
        for sock in uploads:
            sock.close()


def test_past_the_connection_budget_the_slowest_upload_makes_room(
    root: Path, tmp_path: Path
) -> None:
    """Every connection an upload still arriving: a new one closes the slowest of them instead
    of being closed itself (ASSETGATE_MAX_CONNECTIONS=200 once let 200 trickles lock all out)."""
    with serve(
        tmp_path,
        root=str(root),
        log_level="warning",
        idle_timeout_s="60",
        body_grace_s="60",
        max_connections="40",
    ) as server:
        uploads = open_uploads(server.port, 45)  # 5 over: each closes one held before it
        try:
            time.sleep(0.3)
            for _ in range(5):
                assert timed_get(server.base)[0] == 200
            assert sum(closed_by_server(sock) for sock in uploads) >= 6
        finally:
            for sock in uploads:
                sock.close()


def test_a_body_below_the_minimum_rate_is_cut_after_the_grace(root: Path, tmp_path: Path) -> None:
    """One byte every 0.25 s passes the idle deadline forever; the body deadline (100 B/s after
    1 s) closes it, while an upload at a decent rate is left alone."""
    with (
        serve(
            tmp_path,
            root=str(root),
            log_level="warning",
            idle_timeout_s="30",
            body_min_rate="100",
            body_grace_s="1",
        ) as server,
        socket.create_connection(("127.0.0.1", server.port)) as slow,
        socket.create_connection(("127.0.0.1", server.port)) as steady,
    ):
        slow.sendall(UPLOAD_HEAD)
        steady.sendall(UPLOAD_HEAD)
        slow.setblocking(False)
        steady.setblocking(False)
        started = time.monotonic()
        cut = None
        while time.monotonic() - started < 8 and cut is None:
            trickle([slow])
            with contextlib.suppress(OSError):
                steady.send(b"y" * 200)  # 800 B/s
            time.sleep(0.25)
            if closed_by_server(slow):
                cut = time.monotonic() - started
        assert cut is not None, "the trickling body was never cut"
        assert cut < 4.0, cut
        assert not closed_by_server(steady)


def test_an_answer_the_client_stops_reading_is_cut_at_the_idle_deadline(
    root: Path, served: Served
) -> None:
    """A client that asks for a large file and reads nothing holds a running request (and its
    share of the work budget) until the idle deadline closes the connection."""
    size = 32 * 1024 * 1024
    (root / "big.txt").write_bytes(b"x" * size)
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        sock.sendall(b"GET /big.txt HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(4.0)  # ASSETGATE_IDLE_TIMEOUT_S=2, and a margin
        received, ended = 0, False
        sock.settimeout(1)
        deadline = time.monotonic() + 8
        while not ended and time.monotonic() < deadline:
            try:
                chunk = sock.recv(1 << 20)
            except TimeoutError:
                continue
            except ConnectionResetError:
                chunk = b""
            ended = not chunk
            received += len(chunk)
    assert ended, f"still sending after {received} bytes"
    assert 0 < received < size  # the server gave up on it: the rest never came
