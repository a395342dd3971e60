"""``LowerTiers``: a cache's tiers below process memory, which keep bytes: the local disk, Redis
and the shared result store, read in that order, written together.

An entry there is the codec's bytes behind the expiry header (``cache.entry``); an entry another
version's codec wrote, or that is damaged, reads as a miss, never an error. A hit from the result
store is copied to the local disk in the background, so the next request here stays local. The
layer above (``cache.layer``) owns memory, single flight, the render lock and the aliases.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Final, Generic, TypeVar

import anyio.to_thread

from assetgate.cache.codec import Codec, CodecError
from assetgate.cache.disk import DiskTier
from assetgate.cache.entry import pack, unpack
from assetgate.cache.objects import ObjectTier
from assetgate.cache.prefetch import Prefetch
from assetgate.cache.shared import SharedTier

T = TypeVar("T")
FOREVER: Final = math.inf


class LowerTiers(Generic[T]):
    def __init__(
        self,
        name: str,
        codec: Codec[T],
        *,
        disk: DiskTier | None,
        shared: SharedTier | None,
        store: ObjectTier | None,
        background: set[asyncio.Task[object]],
    ) -> None:
        self.name = name
        self.codec = codec
        self.disk = disk
        self.shared = shared
        self.store = store
        self._background = background  # the cache's: its ``aclose`` waits for them

    def key(self, key: str) -> str:
        """The name of ``key`` in the tiers every cache shares (``<cache>:<key>``)."""
        return f"{self.name}:{key}"

    def alias_key(self, alias: str) -> str:
        return f"{self.name}:alias:{alias}"

    def decoded(self, found: tuple[float, bytes] | None) -> tuple[T, float] | None:
        """(value, expiry in epoch seconds) of an intact entry; None when absent or undecodable
        (another version's codec: a miss, never an error)."""
        if found is None:
            return None
        expires_at, payload = found
        try:
            value = self.codec.decode(payload)
        except CodecError:
            return None
        return value, expires_at or FOREVER

    async def read(self, key: str, early: Prefetch | None = None) -> tuple[T, float] | None:
        """(value, expiry in epoch seconds) from the disk, the prefetched alias, Redis or the
        result-store tier."""
        tier_key = self.key(key)
        found = None
        if self.disk is not None and self.disk.holds(tier_key):  # a miss: no worker thread
            found = await anyio.to_thread.run_sync(self.disk.read, tier_key)
        from_store = False
        if found is None and early is not None:
            found = await early.entry_for(key)
            from_store = found is not None
        if found is None and self.shared is not None:
            data = await self.shared.get(tier_key)
            found = unpack(data, time.time()) if data is not None else None
        if found is None and self.store is not None:
            data = await self.store.get(tier_key)
            found = unpack(data, time.time()) if data is not None else None
            from_store = found is not None
        decoded = self.decoded(found)
        if found is None or decoded is None:
            return None
        if from_store and self.disk is not None:  # the next request here stays local; no wait
            stored_until, payload = found
            write = anyio.to_thread.run_sync(self.disk.write, tier_key, pack(payload, stored_until))
            task = asyncio.get_running_loop().create_task(write)
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        return decoded

    async def read_store(self, key: str) -> tuple[T, float] | None:
        """``read`` from the result store alone (a node waiting for the one that renders)."""
        assert self.store is not None
        data = await self.store.get(self.key(key))
        return self.decoded(unpack(data, time.time()) if data is not None else None)

    async def write(self, key: str, value: T, ttl_s: float) -> asyncio.Task[None] | None:
        """Keep ``value`` in every lower tier for ``ttl_s``; the result store's background write,
        when one was started."""
        if self.disk is None and self.shared is None and self.store is None:
            return None
        written = None
        expires_at = time.time() + ttl_s if math.isfinite(ttl_s) else 0.0
        data = pack(self.codec.encode(value), expires_at)
        if self.disk is not None:
            await anyio.to_thread.run_sync(self.disk.write, self.key(key), data)
        if self.store is not None:
            written = self.store.put_later(self.key(key), data)
        if self.shared is not None:
            await self.shared.set(self.key(key), data, ttl_s)
        return written
