from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
import time
from collections.abc import Callable
from functools import partial

import anyio
import pytest

from assetgate.cpu import stop
from assetgate.cpu.workgate import WorkGate
from assetgate.errors import AppError
from tests.cpu.gates import admitted
from tests.waiting import wait_until_async

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
        await wait_until_async(lambda: admitted(gate) == 1)
        tg.start_soon(occupy)  # waits in the queue
        await wait_until_async(lambda: admitted(gate) == 2)
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
        await wait_until_async(lambda: admitted(gate) == 2)
        release.set()
        # Blocks the event loop on purpose: only the pool's thread can start the second job now.
        assert second_started.wait(5)


async def test_a_waiting_job_whose_request_went_away_never_runs() -> None:
    gate = WorkGate(workers=1, queue=1)
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def occupy() -> None:
        started.set()
        release.wait(5)

    async with anyio.create_task_group() as tg:
        tg.start_soon(gate.run, occupy)
        await anyio.to_thread.run_sync(started.wait, 5)  # running, not waiting: the queue is free
        with anyio.move_on_after(0.05):
            await gate.run(ran.append, "abandoned")
        # Its place is given back at once, not when the busy thread gets round to skipping it.
        assert admitted(gate) == 1
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
        await wait_until_async(lambda: admitted(gate) == 1)
        waiting = asyncio.ensure_future(gate.run(ran.append, "waiting"))
        await wait_until_async(lambda: admitted(gate) == 2)
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
    await wait_until_async(lambda: admitted(gate) == 2)  # one running, one waiting in the pool
    second.cancel()
    release.set()
    time.sleep(0.2)  # the loop is busy: the thread is free before the cancel is delivered
    assert await first is True
    with pytest.raises(asyncio.CancelledError):
        await second
    assert ran == []


def _stoppable(seconds: float) -> Callable[[], str]:
    """A job that checks its Stop every 10 ms, as the imaging floor does between tiles."""

    def job() -> str:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            stop.check()
            time.sleep(0.01)
        return "finished"

    return job


def _killed_only(seconds: float) -> Callable[[], str]:
    """A job that does not check its Stop while it works, as libvips computing one image: only
    its kill ends the work (an event here, libvips' kill flag there), and then, like the
    imaging floor's ``decoding()``, it asks the Stop why."""

    def job() -> str:
        killed = threading.Event()
        current = stop.current()
        assert current is not None
        with current.watching(killed.set):
            if killed.wait(seconds):
                current.check()
                raise RuntimeError("killed without a reason")
        return "finished"

    return job


async def test_a_job_waiting_past_the_queue_wait_is_503_at_the_deadline() -> None:
    gate = WorkGate(workers=1, queue=4, queue_wait_s=0.2)
    release = threading.Event()
    ran: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(gate.run, release.wait, 30)  # longer than the bound below
        await wait_until_async(lambda: admitted(gate) == 1)
        started = time.monotonic()
        with pytest.raises(AppError) as caught:
            await gate.run(ran.append, "late")
        waited = time.monotonic() - started
        release.set()
    assert caught.value.status == 503
    assert caught.value.headers["Retry-After"] == "1"
    assert caught.value.headers["Cache-Control"] == "no-store"
    assert 0.15 <= waited < 5  # answered at the deadline, while the thread was still busy
    assert ran == []  # and it never ran afterwards
    assert await gate.run(lambda: "free") == "free"


# _killed_only: nothing inside the job asks the time; the gate's alarm fires the kill.
@pytest.mark.parametrize("job", [_stoppable, _killed_only])
async def test_a_running_job_past_its_timeout_stops_with_a_503(
    job: Callable[[float], Callable[[], str]],
) -> None:
    gate = WorkGate(workers=1, queue=0, timeout_s=0.2)
    started = time.monotonic()
    with pytest.raises(AppError) as caught:
        await gate.run(job(30))  # the bug: it runs to its end
    assert caught.value.status == 503
    assert "0.2 s" in caught.value.message
    assert caught.value.headers["Retry-After"]
    assert time.monotonic() - started < 10  # not the job's 30 s: a busy machine keeps this
    assert await gate.run(lambda: "free") == "free"  # the next job is not killed
    gate.close()


async def test_a_cancelled_caller_stops_its_running_job_early() -> None:
    gate = WorkGate(workers=1, queue=0)
    started = time.monotonic()
    with anyio.move_on_after(0.1) as scope:
        await gate.run(_stoppable(30))
    assert scope.cancelled_caught
    assert time.monotonic() - started < 10  # stopped at its next check, not after 30 s


@pytest.mark.parametrize("job", [_stoppable, _killed_only])
async def test_a_disconnected_client_stops_its_running_job(
    job: Callable[[float], Callable[[], str]], caplog: pytest.LogCaptureFixture
) -> None:
    gate = WorkGate(workers=1, queue=0)
    gone = anyio.Event()

    async def receive() -> dict[str, object]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def hang_up() -> None:
        await wait_until_async(lambda: admitted(gate) == 1)  # the job is in the gate
        gone.set()

    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(hang_up)
        with pytest.raises(AppError) as caught:
            await gate.run(job(30), receive=receive)
    assert caught.value.status == 499
    assert time.monotonic() - started < 10  # not the job's 30 s
    del caught
    gc.collect()  # an exception nobody retrieved is logged (with its traceback) when collected
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


async def test_deadlines_of_later_jobs_fire_after_earlier_jobs_ended() -> None:
    gate = WorkGate(workers=1, queue=4, timeout_s=0.3)
    assert await gate.run(lambda: "quick") == "quick"  # its deadline is dropped when it ends
    await anyio.sleep(0.4)  # past the first job's deadline: nothing fires for it
    started = time.monotonic()
    with pytest.raises(AppError) as caught:
        await gate.run(_killed_only(30))
    assert caught.value.status == 503
    assert 0.25 <= time.monotonic() - started < 10  # its own deadline, not the job's 30 s
    gate.close()


def _held(order: list[str], release: threading.Event) -> Callable[[str], None]:
    """A job that logs its start and end and holds its memory until ``release``."""

    def job(name: str) -> None:
        order.append(f"{name} start")
        release.wait(5)
        order.append(f"{name} end")

    return job


async def test_memory_budget_holds_a_heavy_job_while_light_ones_pass() -> None:
    gate = WorkGate(workers=3, queue=8, memory_bytes=100)
    release = threading.Event()
    order: list[str] = []
    heavy = _held(order, release)

    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(gate.run, heavy, "first", cost=60))
        await wait_until_async(lambda: order == ["first start"])
        tg.start_soon(partial(gate.run, heavy, "second", cost=60))  # does not fit beside it
        await wait_until_async(lambda: admitted(gate) == 2)
        assert await gate.run(order.append, "light", cost=10) is None  # fits: goes ahead
        assert order == ["first start", "light"]
        release.set()
    assert order == ["first start", "light", "first end", "second start", "second end"]


async def test_a_job_over_the_whole_budget_runs_alone() -> None:
    gate = WorkGate(workers=2, queue=4, memory_bytes=100)
    release = threading.Event()
    order: list[str] = []
    job = _held(order, release)

    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(gate.run, job, "small", cost=10))
        await wait_until_async(lambda: order == ["small start"])
        tg.start_soon(partial(gate.run, job, "huge", cost=500))
        await wait_until_async(lambda: admitted(gate) == 2)
        assert order == ["small start"]  # the huge one waits for the memory to be free
        release.set()
    assert order == ["small start", "small end", "huge start", "huge end"]


async def test_close_drops_a_job_queued_for_a_thread_at_once() -> None:
    """Not when the busy thread gets round to it: its caller hears now, the job never runs."""
    gate = WorkGate(workers=1, queue=2)
    release = threading.Event()
    ran: list[str] = []
    first = asyncio.ensure_future(gate.run(release.wait, 10))
    await wait_until_async(lambda: admitted(gate) == 1)
    queued = asyncio.ensure_future(gate.run(ran.append, "queued"))
    await wait_until_async(lambda: admitted(gate) == 2)
    gate.close()
    with pytest.raises(asyncio.CancelledError):
        await queued  # while the first job still holds the thread
    assert not first.done()
    release.set()
    assert await first is True  # a running job finishes on its thread
    assert ran == []


async def test_after_close_a_job_is_dropped_and_the_threads_end() -> None:
    gate = WorkGate(workers=2, queue=2)
    thread = await gate.run(threading.current_thread)
    assert thread is not threading.current_thread()
    gate.close()
    await wait_until_async(lambda: not thread.is_alive())
    with pytest.raises(asyncio.CancelledError):
        await gate.run(lambda: "too late")


async def test_the_threads_of_a_gate_nobody_closed_end_when_it_is_collected() -> None:
    gate = WorkGate(workers=1, queue=0)
    thread = await gate.run(threading.current_thread)
    del gate
    gc.collect()
    await wait_until_async(lambda: not thread.is_alive())


async def test_the_job_runs_in_a_copy_of_its_callers_context() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    gate = WorkGate(workers=1, queue=0)

    def job() -> str:
        seen = var.get()
        var.set("set by the job")
        return seen

    var.set("the caller's")
    assert await gate.run(job) == "the caller's"
    assert var.get() == "the caller's"  # the job's own change stays in its copy
    assert await gate.run(stop.current) is not None  # its Stop is current there
    assert stop.current() is None  # and not here


async def test_a_job_waiting_for_memory_past_the_queue_wait_is_503_at_the_deadline() -> None:
    gate = WorkGate(workers=2, queue=4, memory_bytes=100, queue_wait_s=0.2)
    release = threading.Event()
    ran: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(gate.run, release.wait, 30, cost=80))
        await wait_until_async(lambda: admitted(gate) == 1)
        started = time.monotonic()
        with pytest.raises(AppError) as caught:
            await gate.run(ran.append, "heavy", cost=80)  # a thread is free, the memory is not
        waited = time.monotonic() - started
        release.set()
    assert caught.value.status == 503
    assert 0.15 <= waited < 5
    assert ran == []
    assert admitted(gate) == 0
    gate.close()


async def test_a_job_the_thread_finds_past_its_queue_wait_never_runs() -> None:
    """The loop's timer may be late (the loop busy): the thread checks the deadline as well."""
    gate = WorkGate(workers=1, queue=1, queue_wait_s=0.2)
    ran: list[str] = []
    busy = threading.Event()

    def occupy() -> None:
        busy.set()
        time.sleep(0.4)  # the job behind it waits longer than 0.2 s for the thread

    first = asyncio.ensure_future(gate.run(occupy))
    await asyncio.to_thread(busy.wait, 5)
    second = asyncio.ensure_future(gate.run(ran.append, "late"))
    await wait_until_async(lambda: admitted(gate) == 2)
    time.sleep(0.6)  # the loop is blocked past the deadline and the first job: its timer is late
    await first
    with pytest.raises(AppError) as caught:
        await second
    assert caught.value.status == 503
    assert ran == []
