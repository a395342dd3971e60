"""The one door CPU-bound work goes through (DESIGN C8).

A capacity limiter sized to the cores keeps N renders in flight; a bounded count of waiters in
front of it turns overload into an immediate 503 with ``Retry-After`` instead of a growing queue.
libvips and zlib release the GIL, so threads overlap on the cores.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from assetgate.errors import AppError

T = TypeVar("T")


class WorkGate:
    def __init__(self, workers: int, queue: int) -> None:
        self._limiter = anyio.CapacityLimiter(workers)
        self._max_waiting = queue
        self._waiting = 0

    @property
    def workers(self) -> int:
        return int(self._limiter.total_tokens)

    @property
    def in_flight(self) -> int:
        return self._limiter.borrowed_tokens

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        if self._limiter.available_tokens == 0 and self._waiting >= self._max_waiting:
            raise AppError.overloaded()
        self._waiting += 1
        acquired = False
        try:
            await self._limiter.acquire()
            acquired = True
        finally:
            self._waiting -= 1
        try:
            # The gate's limiter already bounds concurrency; anyio's default thread limiter (40)
            # would only add a second, invisible queue, so each call gets its own.
            return await anyio.to_thread.run_sync(fn, *args, limiter=anyio.CapacityLimiter(1))
        finally:
            if acquired:
                self._limiter.release()
