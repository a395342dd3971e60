from __future__ import annotations

import asyncio
import threading
import time

import anyio
import pytest

from assetgate.errors import AppError
from assetgate.web.workgate import WorkGate

pytestmark = pytest.mark.anyio


async def test_runs_off_the_event_loop_thread() -> None:
    gate = WorkGate(workers=2, queue=2)
    main = threading.get_ident()
    assert await gate.run(threading.get_ident) != main


async def test_overflow_beyond_the_queue_is_503_with_retry_after() -> None:
    gate = WorkGate(workers=1, queue=1)
    release = threading.Event()
    outcomes: list[object] = []

    async def occupy() -> None:
        try:
            outcomes.append(await gate.run(release.wait, 5))
        except AppError as exc:
            outcomes.append(exc.status)

    async with anyio.create_task_group() as tg:
        tg.start_soon(occupy)  # runs
        await anyio.sleep(0.05)
        tg.start_soon(occupy)  # waits in the queue
        await anyio.sleep(0.05)
        with pytest.raises(AppError) as caught:
            await gate.run(release.wait, 5)
        assert caught.value.status == 503
        assert caught.value.headers["Retry-After"] == "1"
        release.set()
    assert outcomes == [True, True]


async def test_a_queued_job_starts_while_the_event_loop_is_busy() -> None:
    """The next job is taken by the freed thread itself, not after a turn of the event loop."""
    gate = WorkGate(workers=1, queue=1)
    release = threading.Event()
    second_started = threading.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(gate.run, release.wait, 5)
        tg.start_soon(gate.run, second_started.set)
        await anyio.sleep(0.05)
        release.set()
        # Blocks the event loop on purpose: only the pool's thread can start the second job now.
        assert second_started.wait(5)


async def test_a_waiting_job_whose_request_went_away_never_runs() -> None:
    gate = WorkGate(workers=1, queue=1)
    release = threading.Event()
    ran: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(gate.run, release.wait, 5)
        await anyio.sleep(0.05)
        with anyio.move_on_after(0.05):
            await gate.run(ran.append, "abandoned")
        release.set()
    # Its place in the queue was given back: two more fit again (one running, one waiting).
    async with anyio.create_task_group() as tg:
        tg.start_soon(gate.run, ran.append, "a")
        tg.start_soon(gate.run, ran.append, "b")
    assert sorted(ran) == ["a", "b"]


async def test_close_drops_waiting_jobs() -> None:
    gate = WorkGate(workers=1, queue=2)
    release = threading.Event()
    ran: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(gate.run, release.wait, 5)
        await anyio.sleep(0.05)
        waiting = asyncio.ensure_future(gate.run(ran.append, "waiting"))
        await anyio.sleep(0.05)
        gate.close()
        release.set()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert ran == []


async def test_a_cancelled_caller_waits_for_its_running_job() -> None:
    """Like anyio's to_thread: the caller's cleanup (a conversion's files) runs after the job."""
    gate = WorkGate(workers=1, queue=0)
    finished = threading.Event()

    def slow() -> None:
        time.sleep(0.3)
        finished.set()

    with anyio.move_on_after(0.05) as scope:
        await gate.run(slow)
    assert scope.cancelled_caught
    assert finished.is_set()  # the cancellation waited for the thread
    assert await gate.run(lambda: "free again") == "free again"


async def test_a_job_cancelled_before_a_thread_frees_up_never_runs() -> None:
    """The cancel is seen by the pool thread at once, not only when the loop delivers it."""
    gate = WorkGate(workers=1, queue=1)
    release = threading.Event()
    ran: list[str] = []
    first = asyncio.ensure_future(gate.run(release.wait, 5))
    second = asyncio.ensure_future(gate.run(ran.append, "cancelled"))
    await anyio.sleep(0.05)  # both submitted: one running, one waiting in the pool
    second.cancel()
    release.set()
    time.sleep(0.2)  # the loop is busy: the thread is free before the cancel is delivered
    assert await first is True
    with pytest.raises(asyncio.CancelledError):
        await second
    assert ran == []
