"""Shared request budget over the ``limits`` library (moving window).

Storage ``memory://`` by default; ``redis://host:port`` shares one budget between workers and
machines. (First version; the conversion issue owns its headers and failure policy.)
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse
from limits.aio.storage import Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from assetgate.errors import AppError

log = logging.getLogger("assetgate.ratelimit")


def _async_uri(uri: str) -> str:
    return uri if uri.startswith("async+") else f"async+{uri}"


@dataclass(frozen=True, slots=True)
class Quota:
    limit: int
    remaining: int
    reset_s: int


class RateLimiter:
    def __init__(self, rule: str, storage_uri: str, *, fail_open: bool = True) -> None:
        self.item: RateLimitItem = parse(rule)
        storage = storage_from_string(_async_uri(storage_uri))
        assert isinstance(storage, Storage)
        self.storage = storage
        self.strategy = MovingWindowRateLimiter(self.storage)
        self.fail_open = fail_open

    async def hit(self, key: str) -> Quota:
        """Count one request for ``key``; raise a 429 AppError when over the budget."""
        allowed = await self.strategy.hit(self.item, key)
        stats = await self.strategy.get_window_stats(self.item, key)
        reset_s = max(0, int(stats.reset_time - time.time()) + 1)
        if not allowed:
            raise AppError.rate_limited(reset_s)
        return Quota(self.item.amount, stats.remaining, reset_s)
