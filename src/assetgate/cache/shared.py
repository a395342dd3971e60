"""The Redis tier: answers shared by every process and machine using one ``ASSETGATE_REDIS_URL``.

Redis is a cache here, never a dependency: any error or a slow answer is a miss (or a skipped
write), logged once when Redis goes away and once when it is back, and for ``RETRY_AFTER_S``
after a failure the tier is not asked at all (its ``Breaker``; then one request probes), so a
dead Redis costs requests nothing.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Final

import redis.asyncio
from redis.exceptions import RedisError

from assetgate.breaker import Breaker

log = logging.getLogger("assetgate.cache")

RETRY_AFTER_S: Final = 5.0
OP_TIMEOUT_S: Final = 0.5
PREFIX: Final = "assetgate:cache:"


def connect(url: str) -> redis.asyncio.Redis:
    """A client that fails fast: a cache read must not wait seconds for a dead server."""
    return redis.asyncio.Redis.from_url(
        url, socket_connect_timeout=OP_TIMEOUT_S, socket_timeout=OP_TIMEOUT_S
    )


class SharedTier:
    def __init__(self, client: redis.asyncio.Redis, retry_after_s: float = RETRY_AFTER_S) -> None:
        self.client = client
        self.breaker = Breaker(cooldown_s=retry_after_s, on_open=_went_down, on_close=_came_back)

    @property
    def available(self) -> bool:
        """Not known to be down (the render lock asks before it takes one)."""
        return self.breaker.would_allow

    async def get(self, key: str) -> bytes | None:
        if not self.breaker.allows():
            return None
        try:
            async with asyncio.timeout(OP_TIMEOUT_S):
                value = await self.client.get(PREFIX + key)
        except (RedisError, OSError, TimeoutError) as exc:
            self.breaker.failed(exc)
            return None
        self.breaker.succeeded()
        return value if isinstance(value, bytes) else None

    async def set(self, key: str, data: bytes, ttl_s: float) -> None:
        if not self.breaker.allows():
            return
        try:
            async with asyncio.timeout(OP_TIMEOUT_S):
                px = max(1, int(ttl_s * 1000)) if math.isfinite(ttl_s) else None
                await self.client.set(PREFIX + key, data, px=px)
        except (RedisError, OSError, TimeoutError) as exc:
            self.breaker.failed(exc)
            return
        self.breaker.succeeded()

    async def delete(self, keys: list[str]) -> int:
        """Delete ``keys`` (a purge): how many there were. Raises when Redis cannot answer."""
        if not keys:
            return 0
        async with asyncio.timeout(OP_TIMEOUT_S * 4):
            return int(await self.client.delete(*(PREFIX + key for key in keys)))


def _went_down(exc: BaseException | None) -> None:
    log.warning("Redis unreachable (%s); caches fall back to this machine", exc)


def _came_back(_down_for_s: float) -> None:
    log.warning("Redis reachable again; shared caches resumed")
