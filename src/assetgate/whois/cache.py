"""In-process TTL + LRU cache with single-flight (research note §6).

Concurrent lookups of the same key share one upstream fetch: the first caller starts a task,
later ones await the same task (shielded, so one client hanging up does not cancel the fetch for
the others). Successes are kept for ``ttl(value)`` seconds (positive hours, negative minutes);
failures are never kept, so the next request tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Final, Generic, TypeVar

T = TypeVar("T")

CACHE_MAX_ENTRIES: Final = 10_000


class SingleFlightCache(Generic[T]):
    def __init__(
        self,
        ttl: Callable[[T], float],
        *,
        max_entries: int = CACHE_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl = ttl
        self._max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, T]] = OrderedDict()
        self._inflight: dict[str, asyncio.Task[T]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def peek(self, key: str) -> T | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires_at, value = entry
        if expires_at <= self._clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return value

    async def get_or_fetch(self, key: str, fetch: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """(value, True) from the cache, or (value, False) from ``fetch`` (shared in flight)."""
        cached = self.peek(key)
        if cached is not None:
            return cached, True
        task = self._inflight.get(key)
        if task is None:
            task = asyncio.create_task(self._fetch_and_store(key, fetch))
            task.add_done_callback(_consume)
            self._inflight[key] = task
        return await asyncio.shield(task), False

    async def _fetch_and_store(self, key: str, fetch: Callable[[], Awaitable[T]]) -> T:
        try:
            value = await fetch()
            ttl_s = self._ttl(value)
            if ttl_s > 0:
                self._entries[key] = (self._clock() + ttl_s, value)
                self._entries.move_to_end(key)
                while len(self._entries) > self._max_entries:
                    self._entries.popitem(last=False)
            return value
        finally:
            self._inflight.pop(key, None)

    async def aclose(self) -> None:
        """Cancel fetches still running (app shutdown)."""
        tasks = list(self._inflight.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        self._entries.clear()


def _consume(task: asyncio.Task[object]) -> None:
    """Retrieve the outcome so an error nobody awaited is not logged as 'never retrieved'."""
    if not task.cancelled():
        task.exception()
