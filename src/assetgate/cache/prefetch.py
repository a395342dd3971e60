"""An alias's read from the result store, started before the reader knows the content key.

``Cache.prefetch`` starts it; ``Cache.find(key, early=…)`` takes the entry only when the alias
was stored under ``key`` (``cache.entry.with_key``), and cancels the read when it is not used.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Final

from assetgate.cache.entry import split_key, unpack

PREFETCH_TASK: Final = "assetgate.cache.prefetch"


@dataclass(frozen=True, slots=True)
class Prefetch:
    alias: str
    task: asyncio.Task[bytes | None] | None  # None: nothing read (held here, or no store)

    @classmethod
    def start(cls, alias: str, read: Coroutine[Any, Any, bytes | None]) -> Prefetch:
        return cls(alias, asyncio.get_running_loop().create_task(read, name=PREFETCH_TASK))

    def cancel(self) -> None:
        """Drop the read when it was not used (no-op once it is done)."""
        if self.task is not None:
            self.task.cancel()

    async def entry_for(self, key: str) -> tuple[float, bytes] | None:
        """(expiry, payload) of ``key`` from the alias, when it was stored under ``key``; None
        when nothing was read, or it is absent, damaged, expired or names another key."""
        if self.task is None:
            return None
        data = await self.task
        found = unpack(data, time.time()) if data is not None else None
        named = split_key(found[1]) if found is not None else None
        if found is None or named is None or named[0] != key:
            return None
        return found[0], named[1]
