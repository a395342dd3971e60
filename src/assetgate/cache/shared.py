"""The Redis tier: answers shared by every process and machine using one ``ASSETGATE_REDIS_URL``.

Redis is a cache here, never a dependency: any error or a slow answer is a miss (or a skipped
write), logged once when Redis goes away and once when it is back, and for ``RETRY_AFTER_S``
after a failure the tier is not asked at all, so a dead Redis costs requests nothing.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Final

import redis.asyncio
from redis.exceptions import RedisError

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
        self.retry_after_s = retry_after_s
        self._down_until = 0.0
        self._down = False

    @property
    def available(self) -> bool:
        return time.monotonic() >= self._down_until

    async def get(self, key: str) -> bytes | None:
        if not self.available:
            return None
        try:
            async with asyncio.timeout(OP_TIMEOUT_S):
                value = await self.client.get(PREFIX + key)
        except (RedisError, OSError, TimeoutError) as exc:
            self._failed(exc)
            return None
        self._up()
        return value if isinstance(value, bytes) else None

    async def set(self, key: str, data: bytes, ttl_s: float) -> None:
        if not self.available:
            return
        try:
            async with asyncio.timeout(OP_TIMEOUT_S):
                px = max(1, int(ttl_s * 1000)) if math.isfinite(ttl_s) else None
                await self.client.set(PREFIX + key, data, px=px)
        except (RedisError, OSError, TimeoutError) as exc:
            self._failed(exc)
            return
        self._up()

    async def delete(self, keys: list[str]) -> int:
        """Delete ``keys`` (a purge): how many there were. Raises when Redis cannot answer."""
        if not keys:
            return 0
        async with asyncio.timeout(OP_TIMEOUT_S * 4):
            return int(await self.client.delete(*(PREFIX + key for key in keys)))

    def _failed(self, exc: BaseException) -> None:
        self._down_until = time.monotonic() + self.retry_after_s
        if not self._down:
            self._down = True
            log.warning("Redis unreachable (%s); caches fall back to this machine", exc)

    def _up(self) -> None:
        if self._down:
            self._down = False
            log.warning("Redis reachable again; shared caches resumed")
