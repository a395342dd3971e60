"""The one door CPU-bound work goes through: by count, by memory, with deadlines.

The "gate" of docs/architecture.md.

A pool of N threads (N = ``ASSETGATE_RENDER_WORKERS``, one more than the cores) runs the jobs;
at most ``queue`` more wait, and one beyond that is refused at once with a 503 and
``Retry-After`` instead of a growing backlog. libvips and zlib release the GIL, so the threads
overlap on the cores.

Memory: a job may say what it costs (``cost``, its counted memory peak, known from the header
probe: ``imaging.cost``). Jobs whose costs together fit ``memory_bytes`` go to the pool; one that
does not fit waits beside the pool until enough cost has finished, while cheaper jobs behind it go
ahead (a thumbnail never waits for a poster). A job costing more than the whole budget runs when
nothing else holds memory: alone, never refused here (a job over the per-job limit,
``ASSETGATE_RENDER_JOB_MEMORY_BYTES``, is refused with a 413 before it reaches the gate). Counting
jobs alone let 16 parallel 49 MP conversions take a gigabyte.

Deadlines: a job that waited longer than ``queue_wait_s`` is answered 503 with ``Retry-After``
instead of starting (by the event loop at the deadline, so the answer is on time even while every
thread is busy); a running job gets a ``stop.Stop`` with ``timeout_s`` that the imaging floor
checks between steps and that the gate's ``stop.Alarm`` thread fires at the deadline, killing the
libvips computation under way. The same Stop is set when the caller is cancelled or, given the
ASGI ``receive``, when the client disconnects: abandoned work stops within a tile instead of
running to the end for nobody.

Cancellation keeps the old promises: a job that has not started never starts, even when a thread
frees up before the loop delivered the cancellation; a running job is waited for before the
cancellation goes on, so its caller never cleans up files that a thread is still using.

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
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio
from prometheus_client import Gauge
from starlette.types import Receive

from assetgate.cpu import stop as stopping
from assetgate.errors import AppError

T = TypeVar("T")


class _Abandoned(Exception):
    """The job's caller was cancelled before a thread picked it up."""


@dataclass(eq=False, slots=True)
class _Ticket(Generic[T]):
    call: Callable[[], T]
    cost: int
    enqueued: float
    stop: stopping.Stop
    caller: asyncio.Task[Any] | None
    future: Future[T] = field(default_factory=Future)


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
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="assetgate-work")
        self._alarm = stopping.Alarm()  # fires the running jobs' deadlines
        self._lock = threading.Lock()  # the counters are released from the pool's threads
        self._admitted = 0  # running, queued in the pool, or waiting for memory
        self._in_use = 0  # cost of the jobs handed to the pool
        self._waiting: deque[_Ticket[Any]] = deque()  # admitted, waiting for memory
        self._live: set[_Ticket[Any]] = set()

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
        """``fn(*args)`` on a pool thread. ``cost``: decoded bytes, for the memory budget.
        ``receive``: the request's ASGI receive, watched for ``http.disconnect``."""
        context = contextvars.copy_context()
        stop = stopping.Stop(self._timeout, self._alarm)

        def call() -> T:
            with stopping.running(stop):
                return fn(*args)

        ticket: _Ticket[T] = _Ticket(
            lambda: context.run(call), max(0, cost), time.monotonic(), stop, asyncio.current_task()
        )
        with self._lock:
            if self._admitted >= self._capacity:
                raise AppError.overloaded()
            self._admitted += 1
            self._gauge(self._queue_depth, 1)
            self._live.add(ticket)
            self._waiting.append(ticket)
            self._dispatch()
        return await self._await(ticket, receive)

    async def _await(self, ticket: _Ticket[T], receive: Receive | None) -> T:
        waiter = asyncio.wrap_future(ticket.future)
        gone = asyncio.ensure_future(_disconnected(receive)) if receive is not None else None
        waits: set[asyncio.Future[Any]] = {waiter} if gone is None else {waiter, gone}
        try:
            while not waiter.done():
                timeout = self._wait_left(ticket)
                await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                if waiter.done():
                    break
                if gone is not None and gone.done():
                    if self._withdraw(ticket):
                        raise AppError.client_gone()
                    ticket.stop.abandon()
                    waits = {waiter}
                elif timeout is not None and self._withdraw(ticket):
                    raise AppError.overloaded(self.retry_after_s, "waited too long for a worker")
        except asyncio.CancelledError:
            if not self._withdraw(ticket):
                ticket.stop.abandon()
                await _outlast(waiter)  # a running job is waited for, however often we are told
            raise
        finally:
            if gone is not None:
                gone.cancel()
        # Read from the asyncio waiter, so its exception counts as retrieved (asyncio would log
        # one nobody read, with its traceback).
        failed = not waiter.cancelled() and waiter.exception() is not None
        if failed and ticket.stop.reason == stopping.ABANDONED:
            raise AppError.client_gone()
        return waiter.result()

    def _wait_left(self, ticket: _Ticket[Any]) -> float | None:
        """Seconds until the queue-wait deadline, None once the job started (or no deadline)."""
        if self._queue_wait is None or ticket.future.running():
            return None
        return max(0.0, ticket.enqueued + self._queue_wait - time.monotonic())

    def _withdraw(self, ticket: _Ticket[Any]) -> bool:
        """Take a job that has not started back; False when it is running or done."""
        with self._lock:
            if not ticket.future.cancel():
                return False
            self._gauge(self._queue_depth, -1)  # every successful cancel leaves the queue
            if ticket in self._waiting:
                self._waiting.remove(ticket)
                self._forget(ticket, reserved=False)
            # A ticket already handed to the pool is released by ``_execute`` when it skips it.
            return True

    def _fits(self, cost: int) -> bool:
        if self._memory <= 0 or cost == 0 or self._in_use == 0:
            return True
        return self._in_use + cost <= self._memory

    def _dispatch(self) -> None:
        """Hand every waiting job that fits the memory budget to the pool (lock held)."""
        for ticket in list(self._waiting):
            if not self._fits(ticket.cost):
                continue
            self._waiting.remove(ticket)
            self._in_use += ticket.cost
            try:
                self._pool.submit(self._execute, ticket)
            except RuntimeError:  # shut down
                ticket.future.cancel()
                self._gauge(self._queue_depth, -1)
                self._forget(ticket, reserved=True)

    def _execute(self, ticket: _Ticket[Any]) -> None:
        if not ticket.future.set_running_or_notify_cancel():
            self._finished(ticket)  # its cancel already left the queue gauge
            return
        self._gauge(self._queue_depth, -1)
        try:
            result = self._call(ticket)
        except BaseException as exc:
            self._finished(ticket)  # before the caller hears of it: its next job finds room
            ticket.future.set_exception(exc)
        else:
            self._finished(ticket)
            ticket.future.set_result(result)

    def _call(self, ticket: _Ticket[T]) -> T:
        # Task.cancelling() is set by Task.cancel() at once, before the loop delivers it.
        if ticket.caller is not None and ticket.caller.cancelling():
            raise _Abandoned
        if ticket.stop.reason is not None:
            raise AppError.client_gone()
        waited = time.monotonic() - ticket.enqueued
        if self._queue_wait is not None and waited > self._queue_wait:
            raise AppError.overloaded(self.retry_after_s, "waited too long for a worker")
        ticket.stop.start()
        self._gauge(self._in_flight, 1)
        try:
            return ticket.call()
        finally:
            ticket.stop.end()
            self._gauge(self._in_flight, -1)

    @staticmethod
    def _gauge(gauge: Gauge | None, change: int) -> None:
        if gauge is not None:
            gauge.inc(change)

    def _finished(self, ticket: _Ticket[Any]) -> None:
        with self._lock:
            self._forget(ticket, reserved=True)
            self._dispatch()

    def _forget(self, ticket: _Ticket[Any], *, reserved: bool) -> None:
        if ticket in self._live:
            self._live.discard(ticket)
            self._admitted -= 1
            if reserved:
                self._in_use -= ticket.cost

    def close(self) -> None:
        """Drop the waiting jobs; running ones finish on their threads."""
        with self._lock:
            for ticket in list(self._live):
                if not ticket.future.cancel():
                    continue
                self._gauge(self._queue_depth, -1)
                if ticket in self._waiting:
                    self._waiting.remove(ticket)
                    self._forget(ticket, reserved=False)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._alarm.close()


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


async def _outlast(waiter: asyncio.Future[Any]) -> None:
    while not waiter.done():
        try:
            await asyncio.shield(waiter)
        except asyncio.CancelledError:
            continue
        except BaseException:
            break
