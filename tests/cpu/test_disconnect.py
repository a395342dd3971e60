"""DisconnectWatch: a receive watched without a task, on the receives the service meets."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
import uvicorn

from assetgate.cpu import stop
from assetgate.cpu.disconnect import DisconnectWatch
from assetgate.cpu.workgate import WorkGate
from assetgate.errors import AppError
from tests.cpu.gates import admitted
from tests.waiting import wait_until, wait_until_async

pytestmark = pytest.mark.anyio

Message = dict[str, Any]


class UvicornLike:
    """uvicorn's receive after a GET: one ``http.request``, then a wait on an event until the
    response is sent or the client goes."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.read = False
        self.finally_ran = 0

    async def __call__(self) -> Message:
        if not self.read:
            self.read = True
            return {"type": "http.request", "body": b"", "more_body": False}
        try:
            await self.event.wait()
        finally:
            self.finally_ran += 1
        return {"type": "http.disconnect"}


async def test_hears_the_disconnect_after_the_body_message() -> None:
    receive = UvicornLike()
    heard: list[str] = []
    watch = DisconnectWatch(receive, lambda: heard.append("gone"))
    assert heard == []  # waiting, after the http.request message
    receive.event.set()
    await wait_until_async(lambda: heard == ["gone"])
    watch.close()
    assert heard == ["gone"]


async def test_close_ends_the_receive_under_way_and_hears_nothing_after() -> None:
    receive = UvicornLike()
    heard: list[str] = []
    watch = DisconnectWatch(receive, lambda: heard.append("gone"))
    watch.close()
    assert receive.finally_ran == 1  # its finally ran now: no waiter left on the event
    assert not receive.event._waiters  # type: ignore[attr-defined]
    receive.event.set()
    await anyio.sleep(0)
    await anyio.sleep(0)
    assert heard == []


async def test_a_client_gone_before_the_watch_is_heard_at_once() -> None:
    async def receive() -> Message:
        return {"type": "http.disconnect"}

    heard: list[str] = []
    DisconnectWatch(receive, lambda: heard.append("gone"))
    assert heard == ["gone"]


async def test_a_receive_that_yields_bare_goes_on_at_the_next_turn() -> None:
    calls = 0

    async def receive() -> Message:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)  # a bare yield, as anyio's checkpoint
        return {"type": "http.disconnect" if calls == 3 else "http.request"}

    heard: list[str] = []
    DisconnectWatch(receive, lambda: heard.append("gone"))
    await wait_until_async(lambda: heard == ["gone"])
    assert calls == 3


async def test_a_failing_receive_counts_as_gone() -> None:
    async def receive() -> Message:
        await asyncio.sleep(0)
        raise OSError("connection reset")

    heard: list[str] = []
    DisconnectWatch(receive, lambda: heard.append("gone"))
    await wait_until_async(lambda: heard == ["gone"])


async def test_an_anyio_event_receive() -> None:
    """httpx's ASGI transport and Starlette's test client wait on anyio events."""
    done = anyio.Event()

    async def receive() -> Message:
        await done.wait()
        return {"type": "http.disconnect"}

    heard: list[str] = []
    watch = DisconnectWatch(receive, lambda: heard.append("gone"))
    done.set()
    await wait_until_async(lambda: heard == ["gone"])
    watch.close()


# --- through a real uvicorn on loopback ---------------------------------------------------------


class _Held:
    """A job that runs until its Stop fires its kill (as libvips computing), then says why."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.killed = threading.Event()
        self.reasons: list[str | None] = []
        self.ran: list[str] = []
        self.answers: list[tuple[str, int]] = []  # the app's errors, by path

    def __call__(self, name: str) -> str:
        self.ran.append(name)
        current = stop.current()
        assert current is not None
        with current.watching(self.killed.set):
            self.started.set()
            self.killed.wait(30)
        self.reasons.append(current.reason)
        current.check()  # as the imaging floor after a kill: the Stop's error
        return "finished"


@pytest.fixture
def served() -> Iterator[tuple[int, WorkGate, _Held]]:
    """uvicorn (its own loop, uvloop) serving an app that sends each request's job, named by
    its path, through one work gate with one thread, watching the request's receive."""
    gate = WorkGate(workers=1, queue=4)
    held = _Held()

    async def app(scope: Message, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        try:
            await gate.run(held, scope["path"], receive=receive)
        except AppError as exc:  # sent to nobody: the client is gone
            held.answers.append((scope["path"], exc.status))

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started or not thread.is_alive(), timeout=30, message="uvicorn")
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield port, gate, held
    finally:
        held.killed.set()
        server.should_exit = True
        thread.join(timeout=10)
        gate.close()


def _request(port: int, path: str) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port))
    client.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return client


def test_a_client_hanging_up_on_uvicorn_stops_its_running_job(
    served: tuple[int, WorkGate, _Held],
) -> None:
    port, gate, held = served
    client = _request(port, "/running")
    assert held.started.wait(10)
    client.close()
    assert held.killed.wait(10)  # the kill fired from the loop, not the job's 30 s
    wait_until(lambda: held.reasons == [stop.ABANDONED])
    wait_until(lambda: held.answers == [("/running", 499)])
    assert admitted(gate) == 0


def test_a_client_hanging_up_on_uvicorn_withdraws_its_waiting_job(
    served: tuple[int, WorkGate, _Held],
) -> None:
    port, gate, held = served
    first = _request(port, "/first")
    assert held.started.wait(10)
    second = _request(port, "/second")
    wait_until(lambda: admitted(gate) == 2)  # the second waits for the only thread
    second.close()
    wait_until(lambda: admitted(gate) == 1)  # withdrawn at the hang-up, not when run
    assert held.answers == [("/second", 499)]
    first.close()
    wait_until(lambda: admitted(gate) == 0)
    assert held.ran == ["/first"]  # the second never started
