"""The process-memory tier: objects with an expiry, least recently used evicted past a byte budget.

Only the event loop touches it, so it needs no lock. An entry heavier than the whole budget is not
kept (the caller still gets its value).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, NamedTuple, TypeVar

T = TypeVar("T")


class _Entry(NamedTuple, Generic[T]):
    expires_at: float  # on ``clock``; inf = never
    value: T
    weight: int


class MemoryTier(Generic[T]):
    def __init__(self, budget_bytes: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget_bytes = budget_bytes
        self.used_bytes = 0
        self._clock = clock
        self._entries: OrderedDict[str, _Entry[T]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> T | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.expires_at <= self._clock():
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return entry.value

    def put(self, key: str, value: T, weight: int, ttl_s: float) -> None:
        self._drop(key)
        if ttl_s <= 0 or weight > self.budget_bytes:
            return
        self._entries[key] = _Entry(self._clock() + ttl_s, value, weight)
        self.used_bytes += weight
        while self.used_bytes > self.budget_bytes:
            _, evicted = self._entries.popitem(last=False)
            self.used_bytes -= evicted.weight

    def pop(self, key: str) -> bool:
        """Forget ``key``; whether it was held."""
        held = key in self._entries
        self._drop(key)
        return held

    def clear(self) -> None:
        self._entries.clear()
        self.used_bytes = 0

    def _drop(self, key: str) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self.used_bytes -= old.weight
