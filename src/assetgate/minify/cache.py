"""In-memory LRU of rendered assets with a byte budget, keyed by the response's ETag.

The ETag already names everything that decides the bytes (file, size, mtime, transformation,
encoding, engine version), so it is the natural key: a changed file gets a new key and its old
entries simply age out. One process-wide instance lives in ``Resources``; it is only touched from
the event loop, so it needs no lock. ``get_or_render`` also makes concurrent misses for one key
wait for a single render instead of each burning a CPU slot on the same work.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable

import anyio

from assetgate.minify.render import Rendered


class AssetCache:
    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self.used_bytes = 0
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, Rendered] = OrderedDict()
        self._pending: dict[str, _Flight] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> Rendered | None:
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry

    def put(self, key: str, entry: Rendered) -> None:
        """Store ``entry`` unless it alone exceeds the budget; evict least recently used."""
        old = self._entries.pop(key, None)
        if old is not None:
            self.used_bytes -= old.weight
        if entry.weight > self.budget_bytes:
            return
        self._entries[key] = entry
        self.used_bytes += entry.weight
        while self.used_bytes > self.budget_bytes:
            _, evicted = self._entries.popitem(last=False)
            self.used_bytes -= evicted.weight

    def clear(self) -> None:
        self._entries.clear()
        self.used_bytes = 0

    async def get_or_render(self, key: str, render: Callable[[], Awaitable[Rendered]]) -> Rendered:
        """The cached entry for ``key``, rendering it once however many requests ask at once.

        Waiters get the leader's result even when it was too large to keep; if the leader
        failed, the next waiter renders.
        """
        while (flight := self._pending.get(key)) is not None:
            await flight.done.wait()
            if flight.result is not None:
                return flight.result
        entry = self.get(key)
        if entry is not None:
            return entry
        flight = self._pending[key] = _Flight()
        try:
            flight.result = await render()
            self.put(key, flight.result)
            return flight.result
        finally:
            del self._pending[key]
            flight.done.set()


class _Flight:
    __slots__ = ("done", "result")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: Rendered | None = None
