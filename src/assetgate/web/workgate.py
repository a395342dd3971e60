"""The one door CPU-bound work goes through (DESIGN C8).

A pool of N threads (N = ``ASSETGATE_RENDER_WORKERS``, the cores) runs the jobs; at most
``queue`` more wait in the pool's own queue, and one beyond that is refused at once with a 503
and ``Retry-After`` instead of a growing backlog. libvips and zlib release the GIL, so the threads
overlap on the cores.

The waiting jobs queue inside the pool, not on the event loop: a thread that finishes a job takes
the next one straight away. With a limiter acquired on the loop (the first design), every job
waited for a loop turn before it could start, and with the loop busy answering, the cores sat
idle between jobs.

Cancellation (the client went away, a sibling upload failed): a job that has not started never
starts, even when a thread frees up before the loop has delivered the cancellation; a job that is
running is waited for before the cancellation goes on, so its caller never cleans up files that
a thread is still using (what anyio's ``to_thread`` did for the first design).

The optional gauges (``assetgate_render_queue_depth``, ``assetgate_render_in_flight``) follow
every job: waiting from admission until a thread picks it up, in flight while it runs.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from prometheus_client import Gauge

from assetgate.errors import AppError

T = TypeVar("T")


class _Abandoned(Exception):
    """The job's caller was cancelled before a thread picked it up."""


class WorkGate:
    def __init__(
        self,
        workers: int,
        queue: int,
        *,
        queue_depth: Gauge | None = None,
        in_flight: Gauge | None = None,
    ) -> None:
        self._queue_depth = queue_depth
        self._in_flight = in_flight
        self._workers = workers
        self._capacity = workers + queue
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="assetgate-work")
        self._lock = threading.Lock()  # _admitted is released from the pool's threads
        self._admitted = 0  # running or waiting

    @property
    def workers(self) -> int:
        return self._workers

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        with self._lock:
            if self._admitted >= self._capacity:
                raise AppError.overloaded()
            self._admitted += 1
        caller = asyncio.current_task()
        context = contextvars.copy_context()
        started = threading.Event()

        def job() -> T:
            started.set()
            self._gauge(self._queue_depth, -1)
            # Task.cancelling() is set by Task.cancel() at once, before the loop delivers it.
            if caller is not None and caller.cancelling():
                raise _Abandoned
            self._gauge(self._in_flight, 1)
            try:
                return context.run(fn, *args)
            finally:
                self._gauge(self._in_flight, -1)

        def release(_: object = None) -> None:
            if not started.is_set():  # dropped while waiting
                self._gauge(self._queue_depth, -1)
            self._release()

        self._gauge(self._queue_depth, 1)
        try:
            future = self._pool.submit(job)
        except BaseException:
            release()
            raise
        future.add_done_callback(release)
        waiter = asyncio.wrap_future(future)
        try:
            return await asyncio.shield(waiter)
        except asyncio.CancelledError:
            future.cancel()  # only succeeds while the job waits
            while not waiter.done():  # a running job is waited for, however often we are told
                try:
                    await asyncio.shield(waiter)
                except asyncio.CancelledError:
                    continue
                except BaseException:
                    break
            raise

    @staticmethod
    def _gauge(gauge: Gauge | None, change: int) -> None:
        if gauge is not None:
            gauge.inc(change)

    def _release(self) -> None:
        with self._lock:
            self._admitted -= 1

    def close(self) -> None:
        """Drop the waiting jobs; running ones finish on their threads."""
        self._pool.shutdown(wait=False, cancel_futures=True)
