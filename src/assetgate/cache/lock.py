"""A Redis lock so that two nodes do not render one cold variant at the same moment.

Used by ``Cache`` for the shared result store: the node that takes the lock computes and writes the
result to the store, then lets go; a node that finds the lock taken reads the store every
``POLL_S`` until the result is there, the lock is gone, or ``WAIT_S`` passed, and then computes
itself. Redis is a helper here, never a dependency: any Redis error or slow answer means "no lock,
compute" (what happens without Redis), and a lock expires by itself after ``HOLD_S``, so a node
that died holding one delays the others by at most that.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Final

from redis.exceptions import RedisError

from assetgate.cache.shared import SharedTier

HOLD_S: Final = 30.0
WAIT_S: Final = 10.0
POLL_S: Final = 0.05
OP_TIMEOUT_S: Final = 0.5
PREFIX: Final = "assetgate:lock:"
_RELEASE: Final = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)


class RenderLock:
    def __init__(self, tier: SharedTier, hold_s: float = HOLD_S) -> None:
        self.tier = tier
        self.hold_s = hold_s

    async def acquire(self, key: str) -> str | None:
        """A token when this node took the lock; None when another node holds it. Redis
        unreachable counts as taken by nobody: the empty token, compute without a lock."""
        if not self.tier.available:
            return ""
        token = uuid.uuid4().hex
        try:
            async with asyncio.timeout(OP_TIMEOUT_S):
                taken = await self.tier.client.set(
                    PREFIX + key, token, nx=True, px=int(self.hold_s * 1000)
                )
        except (RedisError, OSError, TimeoutError):
            return ""
        return token if taken else None

    async def held(self, key: str) -> bool:
        try:
            async with asyncio.timeout(OP_TIMEOUT_S):
                return bool(await self.tier.client.exists(PREFIX + key))
        except (RedisError, OSError, TimeoutError):
            return False

    async def release(self, key: str, token: str) -> None:
        if not token:
            return
        try:
            async with asyncio.timeout(OP_TIMEOUT_S):
                await self.tier.client.eval(_RELEASE, 1, PREFIX + key, token)
        except (RedisError, OSError, TimeoutError):
            return  # it expires by itself
