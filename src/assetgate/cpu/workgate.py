"""The one door CPU-bound work goes through: by count, by memory, with deadlines.

The "gate" of docs/architecture.md.

N threads of its own (N = ``ASSETGATE_RENDER_WORKERS``, one more than the cores) run the jobs,
taking them from one ``queue.SimpleQueue``; at most ``queue`` more wait, and one beyond that is
refused at once with a 503 and ``Retry-After`` instead of a growing backlog. libvips and zlib
release the GIL, so the threads overlap on the cores. A finished job reaches its caller by one
``call_soon_threadsafe`` that resolves a plain asyncio future: no ``concurrent.futures`` future,
no ``Condition``, no ``wrap_future`` or ``asyncio.wait`` (a no-op job's round trip went from
~230 k to ~56 k instructions, ~305 k to ~89 k with a receive watched; docs/benchmarks.md).

Memory: a job may say what it costs (``cost``, its counted memory peak, known from the header
probe: ``imaging.cost``). Jobs whose costs together fit ``memory_bytes`` go to the threads; one
that does not fit waits beside them until enough cost has finished, while cheaper jobs behind it
go ahead (a thumbnail never waits for a poster). A job costing more than the whole budget runs
when nothing else holds memory: alone, never refused here (a job over the per-job limit,
``ASSETGATE_RENDER_JOB_MEMORY_BYTES``, is refused with a 413 before it reaches the gate).
Counting jobs alone let 16 parallel 49 MP conversions take a gigabyte.

Deadlines: a job that waited longer than ``queue_wait_s`` is answered 503 with ``Retry-After``
instead of starting: by the event loop at the deadline (a timer, armed only for a job that found
no free thread), so the answer is on time even while every thread is busy, and by the thread
itself should it get there first. A running job gets a ``stop.Stop`` with ``timeout_s`` that the
imaging floor checks between steps and that the gate's ``stop.Alarm`` thread fires at the
deadline, killing the libvips computation under way. The same Stop is set when the caller is
cancelled or, given the ASGI ``receive``, when the client disconnects (``cpu.disconnect``, a
watch without a task of its own): abandoned work stops within a tile instead of running to the
end for nobody, and a job not started yet is withdrawn.

Cancellation keeps the old promises: a job that has not started never starts, even when a thread
frees up before the loop delivered the cancellation (the thread asks ``Task.cancelling()``); a
running job is waited for before the cancellation goes on, so its caller never cleans up files
that a thread is still using. ``close()`` drops the jobs not started (their callers see a
cancellation); running ones finish on their threads, which then end.

The optional gauges (``assetgate_render_queue_depth``, ``assetgate_render_in_flight``) follow
every job: waiting from admission until a thread picks it up (or it is dropped), in flight while
it runs.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import threading
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from queue import SimpleQueue
from typing import Any, Final, Generic, TypeVar

import anyio
from prometheus_client import Gauge
from starlette.types import Receive

from assetgate.cpu import stop as stopping
from assetgate.cpu.disconnect import DisconnectWatch
from assetgate.errors import AppError

T = TypeVar("T")

# A ticket's state; each move is made under the gate's lock.
_WAITING: Final = 0  # admitted, waiting for memory beside the threads
_QUEUED: Final = 1  # handed to the threads, not picked up yet
_RUNNING: Final = 2
_DONE: Final = 3  # returned or raised on its thread
_DROPPED: Final = 4  # withdrawn or dropped by close() before it started


class _Abandoned(Exception):
    """The job's caller was cancelled before a thread picked it up."""


class _Ticket(Generic[T]):
    """One admitted job and how its outcome reaches the caller's event loop."""

    __slots__ = (
        "args",
        "caller",
        "context",
        "cost",
        "delivered",
        "enqueued",
        "error",
        "finished",
        "fn",
        "future",
        "loop",
        "state",
        "stop",
        "value",
    )

    def __init__(
        self, fn: Callable[..., T], args: tuple[object, ...], cost: int, stop: stopping.Stop
    ) -> None:
        self.fn = fn
        self.args = args
        self.cost = cost
        self.stop = stop
        self.context = contextvars.copy_context()
        self.loop = asyncio.get_running_loop()
        self.caller = asyncio.current_task()
        self.future: asyncio.Future[None] = self.loop.create_future()  # resolved once, on the loop
        self.finished: asyncio.Future[None] | None = None  # what a cancelled caller outlasts
        self.enqueued = time.monotonic()
        self.state = _WAITING
        self.value: T | None = None
        self.error: BaseException | None = None
        self.delivered = False  # the outcome (or the drop) reached the loop

    def deliver(self) -> None:
        """On the loop: the outcome is in ``value``/``error``; wake whoever waits."""
        self.delivered = True
        if not self.future.done():
            self.future.set_result(None)
        if self.finished is not None and not self.finished.done():
            self.finished.set_result(None)

    def deliver_soon(self) -> None:
        """From any thread. A closed loop has nobody left to tell."""
        try:  # noqa: SIM105 (per job: contextlib.suppress is Python code)
            self.loop.call_soon_threadsafe(self.deliver)
        except RuntimeError:
            pass


class WorkGate:
    def __init__(
        self,
        workers: int,
        queue: int,
        *,
        memory_bytes: int = 0,
        queue_wait_s: float | None = None,
        timeout_s: float | None = None,
        queue_depth: Gauge | None = None,
        in_flight: Gauge | None = None,
    ) -> None:
        self._queue_depth = queue_depth
        self._in_flight = in_flight
        self._workers = workers
        self._capacity = workers + queue
        self._memory = memory_bytes  # 0: no memory budget
        self._queue_wait = queue_wait_s
        self._timeout = timeout_s
        self._alarm = stopping.Alarm()  # fires the running jobs' deadlines
        self._lock = threading.Lock()  # the counters are also moved by the gate's threads
        self._admitted = 0  # waiting for memory, queued for a thread, or running
        self._pooled = 0  # queued for a thread or running
        self._in_use = 0  # cost of the jobs handed to the threads
        self._waiting: deque[_Ticket[Any]] = deque()  # admitted, waiting for memory
        self._queued: set[_Ticket[Any]] = set()  # handed to the threads, not picked up yet
        self._jobs: SimpleQueue[_Ticket[Any] | None] = SimpleQueue()  # None: a thread ends
        self._threads: list[threading.Thread] = []  # started as jobs need them
        self._closed = False
        weakref.finalize(self, _end_threads, self._jobs, self._threads)
        _OPEN.add(self)

    @property
    def workers(self) -> int:
        return self._workers

    @property
    def retry_after_s(self) -> int:
        return max(1, math.ceil(self._queue_wait or 1))

    async def run(
        self,
        fn: Callable[..., T],
        *args: object,
        cost: int = 0,
        receive: Receive | None = None,
    ) -> T:
        """``fn(*args)`` on a gate thread. ``cost``: decoded bytes, for the memory budget.
        ``receive``: the request's ASGI receive, watched for ``http.disconnect``."""
        ticket: _Ticket[T] = _Ticket(
            fn, args, max(0, cost), stopping.Stop(self._timeout, self._alarm)
        )
        with self._lock:
            if self._admitted >= self._capacity:
                raise AppError.overloaded()
            self._admitted += 1
            if self._queue_depth is not None:
                self._queue_depth.inc()
            if not self._waiting and self._fits(ticket.cost):
                self._hand(ticket)  # nothing waits for memory before it: the common case
            else:
                self._waiting.append(ticket)
                self._dispatch()
            at_once = ticket.state == _QUEUED and self._pooled <= self._workers
        # A job a free thread takes at once needs no timer: the thread checks the wait itself.
        late = None
        if self._queue_wait is not None and not at_once:
            late = ticket.loop.call_later(self._queue_wait, self._late, ticket)
        watch = None if receive is None else DisconnectWatch(receive, lambda: self._gone(ticket))
        try:
            await ticket.future
        except asyncio.CancelledError:
            if not self._withdraw(ticket):
                ticket.stop.abandon()
                await _outlast(ticket)  # a running job is waited for, however often we are told
            raise
        finally:
            if watch is not None:
                watch.close()
            if late is not None:
                late.cancel()
        error = ticket.error
        if error is not None:
            abandoned = ticket.stop.reason == stopping.ABANDONED
            if abandoned and not isinstance(error, asyncio.CancelledError):
                raise AppError.client_gone()
            raise error
        return ticket.value  # type: ignore[return-value]  # a value when no error

    def _late(self, ticket: _Ticket[Any]) -> None:
        """The queue-wait deadline, on the loop: a job still waiting is answered 503 now."""
        if self._withdraw(ticket):
            ticket.error = AppError.overloaded(self.retry_after_s, "waited too long for a worker")
            ticket.deliver()

    def _gone(self, ticket: _Ticket[Any]) -> None:
        """The client disconnected: a waiting job is withdrawn, a running one told to stop."""
        if self._withdraw(ticket):
            ticket.error = AppError.client_gone()
            ticket.deliver()
        else:
            ticket.stop.abandon()

    def _withdraw(self, ticket: _Ticket[Any]) -> bool:
        """Take a job that has not started back; False when it is running or done."""
        with self._lock:
            state = ticket.state
            if state == _WAITING:
                self._waiting.remove(ticket)
                self._admitted -= 1
            elif state == _QUEUED:
                self._queued.discard(ticket)
                # Its place is free now, not only when a thread gets to skip it (``_execute``
                # finds it dropped), so the next request is admitted.
                self._release(ticket)
                self._dispatch()
            else:
                return False
            ticket.state = _DROPPED
            self._gauge(self._queue_depth, -1)  # every withdrawn job leaves the queue
            return True

    def _fits(self, cost: int) -> bool:
        if self._memory <= 0 or cost == 0 or self._in_use == 0:
            return True
        return self._in_use + cost <= self._memory

    def _dispatch(self) -> None:
        """Hand every waiting job that fits the memory budget to the threads (lock held)."""
        if not self._waiting:
            return
        for ticket in list(self._waiting):
            if not self._fits(ticket.cost):
                continue
            self._waiting.remove(ticket)
            self._hand(ticket)

    def _hand(self, ticket: _Ticket[Any]) -> None:
        """To the threads (lock held)."""
        if self._closed:
            self._admitted -= 1
            self._drop(ticket)
            return
        ticket.state = _QUEUED
        self._queued.add(ticket)
        self._in_use += ticket.cost
        self._pooled += 1
        if len(self._threads) < self._workers and len(self._threads) < self._pooled:
            self._start_thread()
        self._jobs.put(ticket)

    def _start_thread(self) -> None:
        thread = threading.Thread(
            target=_serve,
            args=(weakref.ref(self), self._jobs),
            name=f"assetgate-work-{len(self._threads)}",
        )
        self._threads.append(thread)
        thread.start()

    def _execute(self, ticket: _Ticket[Any]) -> None:
        """On a gate thread: run the job unless it was withdrawn, then tell its loop."""
        with self._lock:
            if ticket.state != _QUEUED:
                return  # withdrawn or dropped: its place was given back then
            ticket.state = _RUNNING
            self._queued.discard(ticket)
        if self._queue_depth is not None:
            self._queue_depth.dec()
        try:
            ticket.value = self._call(ticket)
        except BaseException as exc:
            ticket.error = exc
        with self._lock:  # before the caller hears of it: its next job finds room
            ticket.state = _DONE
            self._release(ticket)
            self._dispatch()
        ticket.deliver_soon()

    def _call(self, ticket: _Ticket[T]) -> T:
        # Task.cancelling() is set by Task.cancel() at once, before the loop delivers it.
        if ticket.caller is not None and ticket.caller.cancelling():
            raise _Abandoned
        if ticket.stop.reason is not None:
            raise AppError.client_gone()
        waited = time.monotonic() - ticket.enqueued
        if self._queue_wait is not None and waited > self._queue_wait:
            raise AppError.overloaded(self.retry_after_s, "waited too long for a worker")
        stop = ticket.stop
        stop.start()
        in_flight = self._in_flight
        if in_flight is not None:
            in_flight.inc()
        try:
            return ticket.context.run(_call_with, stop, ticket.fn, ticket.args)
        finally:
            stop.end()
            if in_flight is not None:
                in_flight.dec()

    @staticmethod
    def _gauge(gauge: Gauge | None, change: int) -> None:
        if gauge is not None:
            gauge.inc(change)

    def _release(self, ticket: _Ticket[Any]) -> None:
        """A job handed to the threads leaves: its place and its memory are free (lock held)."""
        self._admitted -= 1
        self._pooled -= 1
        self._in_use -= ticket.cost

    def _drop(self, ticket: _Ticket[Any]) -> None:
        """Closed before it started: its caller sees a cancellation (lock held)."""
        ticket.state = _DROPPED
        ticket.error = asyncio.CancelledError()
        self._gauge(self._queue_depth, -1)
        ticket.deliver_soon()

    def close(self) -> None:
        """Drop the jobs not started; running ones finish on their threads, which then end."""
        with self._lock:
            self._closed = True
            while self._waiting:
                self._admitted -= 1
                self._drop(self._waiting.popleft())
            for ticket in self._queued:  # each thread finds these dropped and skips them
                self._release(ticket)
                self._drop(ticket)
            self._queued.clear()
        _end_threads(self._jobs, self._threads)
        _OPEN.discard(self)
        self._alarm.close()


def _call_with(stop: stopping.Stop, fn: Callable[..., T], args: tuple[object, ...]) -> T:
    stopping.make_current(stop)  # in the job's own copy of its caller's context
    return fn(*args)


def _serve(gate: weakref.ref[WorkGate], jobs: SimpleQueue[_Ticket[Any] | None]) -> None:
    """A gate thread: run tickets until told to end (None) or the gate is gone."""
    while True:
        ticket = jobs.get()
        if ticket is None:
            return
        owner = gate()
        if owner is None:
            return
        owner._execute(ticket)
        del owner, ticket


def _end_threads(jobs: SimpleQueue[_Ticket[Any] | None], threads: list[threading.Thread]) -> None:
    """Each thread ends after the job it runs (a gate closed, collected, or the process ending)."""
    for _ in threads:
        jobs.put(None)


# The interpreter joins its threads before ``atexit`` runs: a gate nobody closed ends its
# threads from here, as concurrent.futures does for its pools.
_OPEN: weakref.WeakSet[WorkGate] = weakref.WeakSet()


def _end_open_gates() -> None:
    for gate in list(_OPEN):
        _end_threads(gate._jobs, gate._threads)


threading._register_atexit(_end_open_gates)  # type: ignore[attr-defined]  # as concurrent.futures


async def _outlast(ticket: _Ticket[Any]) -> None:
    while not ticket.delivered:
        ticket.finished = ticket.loop.create_future()
        try:
            await ticket.finished
        except asyncio.CancelledError:
            continue


async def unless_disconnected(receive: Receive, wait: Callable[[], Awaitable[object]]) -> None:
    """``await wait()``, or AppError 499 as soon as the client disconnects (the body must have
    been read already: this reads ``receive``)."""
    gone = False
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal gone
            await _disconnected(receive)
            gone = True
            group.cancel_scope.cancel()

        group.start_soon(watch)
        await wait()
        group.cancel_scope.cancel()
    if gone:
        raise AppError.client_gone()


async def while_connected(receive: Receive, work: Awaitable[T]) -> T:
    """``await work``, or AppError 499 as soon as the client disconnects, ``work`` then being
    cancelled (a shared computation stops when its last waiter goes). The body must have been
    read already: this reads ``receive``. ``work``'s own error is raised as it is."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(receive))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not task.done():
            task.cancel()
            task.add_done_callback(_retrieved)
    if not task.done():
        raise AppError.client_gone()
    return task.result()


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # read, so asyncio logs no "exception was never retrieved"


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
