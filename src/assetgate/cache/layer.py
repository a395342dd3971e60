"""``Cache``: get-or-compute over the tiers, with single flight, TTL and remembered failures.

Lookup order: process memory, then the local disk, then Redis, then the shared result store (an
S3 bucket every node reads: ``cache.objects``); a hit in a lower tier is copied up. The tiers below
memory are ``cache.tiers`` (``LowerTiers``): this module is the layer over them. A write to the
result store runs in the background and never delays the answer.
A miss is computed once however many requests ask for the same key at the same time.

A value can have a second name in the result store, an alias a reader knows before the content
key (the optimizer's "by source" name of a variant: docs/sources.md). ``share_as`` writes it (in
the background, the store tier only); ``prefetch`` starts its read before the caller has the key,
and ``find(key, early=…)`` serves it only when the key it was stored under is ``key``: a reader
that has to learn the key first (node B reads the source's shared fingerprint) reads both at
once. A prefetch ``find`` does not use is cancelled; a small memo of the aliases this process
used skips the read when memory holds what the alias named.

Cancellation and failure policy (the one policy for every user):

- the computation runs in its own task; a caller that is cancelled (a client hanging up) stops
  waiting but never cancels it for the others. Only when every caller has gone is it cancelled,
  so a render nobody waits for is not started or finished for nothing.
- when the computation fails, the caller that started it gets the error; the callers that were
  waiting try again, and the first of them computes. A failure is shared only when it is
  remembered: ``negative_ttl_s`` > 0 keeps an ``AppError`` other than 503 for that long (in this
  process only), so a known-bad upstream object is not fetched on every request.
- ``ttl(value)`` decides how long a value is kept (0 = not at all), so one cache can keep
  "registered" answers for hours and "not found" for minutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

from cachetools import LRUCache
from prometheus_client import Counter

from assetgate.cache.codec import Codec
from assetgate.cache.disk import DiskTier
from assetgate.cache.entry import pack, with_key
from assetgate.cache.lock import POLL_S, WAIT_S, RenderLock
from assetgate.cache.memory import MemoryTier
from assetgate.cache.objects import ObjectTier
from assetgate.cache.prefetch import Prefetch
from assetgate.cache.purgeindex import PurgeIndex
from assetgate.cache.shared import SharedTier
from assetgate.cache.tiers import FOREVER, LowerTiers
from assetgate.errors import AppError, Unavailable
from assetgate.operations.metrics import Metrics

T = TypeVar("T")
MAX_FAILURES: Final = 10_000
MAX_ALIASES: Final = 10_000  # the memo alias -> content key: a few hundred kB at most


@dataclass(slots=True)
class _Flight(Generic[T]):
    task: asyncio.Task[tuple[T, bool]]
    callers: int = 0


class Cache(Generic[T]):
    def __init__(
        self,
        name: str,
        codec: Codec[T],
        *,
        memory_bytes: int,
        ttl: Callable[[T], float] | float = FOREVER,
        negative_ttl_s: float = 0.0,
        disk: DiskTier | None = None,
        shared: SharedTier | None = None,
        store: ObjectTier | None = None,
        lock: RenderLock | None = None,
        index: PurgeIndex | None = None,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.codec = codec
        self.memory: MemoryTier[T] = MemoryTier(memory_bytes, clock)
        self.disk = disk
        self.shared = shared
        self.store = store
        self._copies: set[asyncio.Task[object]] = set()  # disk copies, lock releases: not awaited
        self.tiers = LowerTiers(
            name, codec, disk=disk, shared=shared, store=store, background=self._copies
        )
        self.lock = lock if store is not None else None
        self.index = index  # path -> the keys stored for it (a purge's map), when given a path
        self._ttl = ttl if callable(ttl) else (lambda _value: ttl)
        self._negative_ttl_s = negative_ttl_s
        self._metrics = metrics
        self._clock = clock
        # one unit per remembered failure: many distinct bad keys cannot grow it without bound
        self._failures: MemoryTier[AppError] = MemoryTier(MAX_FAILURES, clock)
        self._flights: dict[str, _Flight[T]] = {}
        self._counters: dict[str, Counter] = {}
        self._aliases: LRUCache[str, str] = LRUCache(MAX_ALIASES)  # alias -> the key it named

    def __len__(self) -> int:
        return len(self.memory)

    def peek(self, key: str) -> T | None:
        """The value if this process holds it (no I/O, no counting)."""
        return self.memory.get(key)

    def get(self, key: str) -> T | None:
        """The value if this process holds it, counted as a hit (a hot path's fast answer); a
        miss is not counted here, the ``get_or_compute`` that follows counts it."""
        held = self.memory.get(key)
        if held is not None:
            self._count("hit")
        return held

    async def find(self, key: str, *, early: Prefetch | None = None) -> T | None:
        """The value from any tier (copied up into memory), or None; never computes. A miss is
        not counted: the ``get_or_compute`` that follows counts it.

        ``early``: the prefetched alias of ``key``, used when it was stored under ``key`` (after
        memory and a local disk copy, before Redis and the store); cancelled when not used."""
        try:
            held = self.memory.get(key)
            if held is None:
                found = await self.tiers.read(key, early)
                if found is None:
                    return None
                held, expires_at = found
                self.memory.put(key, held, self.codec.weight(held), expires_at - time.time())
            if early is not None:
                self._aliases[early.alias] = key
        finally:
            if early is not None:
                early.cancel()
        self._count("hit")
        return held

    def share_as(self, alias: str, key: str, value: T, *, path: str | None = None) -> None:
        """Also keep ``value`` (the value of ``key``) in the result store under ``alias``, in the
        background; nothing without a store or when ``ttl(value)`` is 0. ``path``: the source
        it was made from, for the purge index."""
        ttl_s = self._ttl(value)
        if self.store is None or ttl_s <= 0:
            return
        self._aliases[alias] = key
        expires_at = time.time() + ttl_s if math.isfinite(ttl_s) else 0.0
        data = pack(with_key(key, self.codec.encode(value)), expires_at)
        self.store.put_later(self._alias_key(alias), data)
        self._indexed(path, self._alias_key(alias))

    def prefetch(self, alias: str) -> Prefetch:
        """Start reading ``alias`` from the result store, for a ``find`` that will know the key;
        no read when memory holds what the alias last named here, or the store is down."""
        if self.store is None or not self.store.available:
            return Prefetch(alias, None)
        known = self._aliases.get(alias)
        if known is not None and self.memory.get(known) is not None:
            return Prefetch(alias, None)
        return Prefetch.start(alias, self.store.get(self._alias_key(alias)))

    async def get_or_compute(
        self,
        key: str,
        compute: Callable[[], Awaitable[T]],
        *,
        refresh: bool = False,
        path: str | None = None,
    ) -> tuple[T, bool]:
        """(value, True) when it came from a tier, (value, False) when it was computed.

        ``refresh`` skips what the tiers hold (the caller knows it is out of date) but still
        joins a computation already running for ``key``. ``path``: the source file the value is
        made from; a computed value is entered under it in the purge index."""
        held = None if refresh else self.memory.get(key)
        if held is not None:
            self._count("hit")
            return held, True
        if not refresh:
            self._raise_remembered(key)
        while True:
            flight = self._flights.get(key)
            leader = flight is None
            if flight is None:
                flight = self._start(key, compute, refresh, path)
            flight.callers += 1
            try:
                value, hit = await asyncio.shield(flight.task)
            except asyncio.CancelledError:
                if flight.task.cancelled() and not _being_cancelled():
                    self._forget_flight(key, flight)
                    continue  # the computation was dropped, not this caller: try again
                raise
            except Exception:
                if leader:
                    raise
                self._raise_remembered(key)
                # The leader's failure: the next waiter computes. The ended flight is dropped
                # here, not only by its done callback: a caller that came in after the task
                # ended and before that callback ran would otherwise find it again, fail at once
                # without yielding, and spin the event loop for good.
                self._forget_flight(key, flight)
                continue
            finally:
                flight.callers -= 1
                if flight.callers == 0 and not flight.task.done():
                    flight.task.cancel()
            self._count("hit" if hit else "miss")
            return value, hit

    def _forget_flight(self, key: str, flight: _Flight[T]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]

    def _start(
        self, key: str, compute: Callable[[], Awaitable[T]], refresh: bool, path: str | None
    ) -> _Flight[T]:
        task = asyncio.get_running_loop().create_task(self._fill(key, compute, refresh, path))
        flight: _Flight[T] = _Flight(task)
        self._flights[key] = flight

        def finished(done: asyncio.Task[tuple[T, bool]]) -> None:
            if self._flights.get(key) is flight:
                del self._flights[key]
            if done.cancelled():
                return
            error = done.exception()
            if (
                isinstance(error, AppError)
                and not isinstance(error, Unavailable)
                and self._negative_ttl_s > 0
            ):
                self._failures.put(key, error, 1, self._negative_ttl_s)

        task.add_done_callback(finished)
        return flight

    async def _fill(
        self, key: str, compute: Callable[[], Awaitable[T]], refresh: bool, path: str | None
    ) -> tuple[T, bool]:
        found = None if refresh else await self.tiers.read(key)
        if found is not None:
            value, expires_at = found
            self.memory.put(key, value, self.codec.weight(value), expires_at - time.time())
            self._gauge()
            return value, True
        if self.lock is not None:
            return await self._fill_locked(key, compute, path)
        value = await compute()
        await self.put(key, value, path=path)
        return value, False

    async def _fill_locked(
        self, key: str, compute: Callable[[], Awaitable[T]], path: str | None
    ) -> tuple[T, bool]:
        """Compute under the cross-node lock (``cache.lock``), or wait for the node that does."""
        assert self.lock is not None
        assert self.store is not None
        lock_key = self._tier_key(key)
        token = await self.lock.acquire(lock_key)
        waited = 0.0
        while token is None and waited < WAIT_S:
            await asyncio.sleep(POLL_S)
            waited += POLL_S
            found = await self._from_store(key)
            if found is not None:
                return found, True
            if not await self.lock.held(lock_key):
                token = await self.lock.acquire(lock_key)
        if token:  # taken: the holder before us may have just finished
            found = await self._from_store(key)
            if found is not None:
                await self.lock.release(lock_key, token)
                return found, True
        try:
            value = await compute()
            written = await self.put(key, value, path=path)
        except BaseException:
            if token:
                await self.lock.release(lock_key, token)
            raise
        if token:  # let go once the others can read it from the store
            release = self.lock.release(lock_key, token)
            if written is None:
                await release
            else:
                written.add_done_callback(lambda _done: self._later(release))
        return value, False

    def _later(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._copies.add(task)
        task.add_done_callback(self._copies.discard)

    async def _from_store(self, key: str) -> T | None:
        decoded = await self.tiers.read_store(key)
        if decoded is None:
            return None
        value, expires_at = decoded
        self.memory.put(key, value, self.codec.weight(value), expires_at - time.time())
        return value

    async def put(
        self, key: str, value: T, *, path: str | None = None
    ) -> asyncio.Task[None] | None:
        """Keep ``value`` in every tier for ``ttl(value)`` (nothing when that is 0); the result
        store's background write, when one was started. ``path``: for the purge index."""
        ttl_s = self._ttl(value)
        if ttl_s <= 0:
            return None
        self._indexed(path, self._tier_key(key))
        self.memory.put(key, value, self.codec.weight(value), ttl_s)
        written = await self.tiers.write(key, value, ttl_s)
        self._gauge()
        return written

    async def aclose(self) -> None:
        """Cancel computations still running (app shutdown)."""
        tasks = [flight.task for flight in self._flights.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        if self._copies:  # disk copies and lock releases: short, let them finish
            await asyncio.wait(set(self._copies), timeout=2.0)
        self.memory.clear()

    def _indexed(self, path: str | None, tier_key: str) -> None:
        if path is not None and self.index is not None:
            self.index.add(path, tier_key)

    def forget(self, tier_keys: set[str]) -> int:
        """Drop this cache's entries among ``tier_keys`` from this process's memory, with the
        failures and aliases remembered for them (a purge on this node; the disk is the
        caller's: one directory serves every cache). How many entries were held."""
        prefix = f"{self.name}:"
        mine = {key for key in tier_keys if key.startswith(prefix)}
        keys = {key.removeprefix(prefix) for key in mine}
        dropped = sum(self.memory.pop(key) for key in keys)
        for key in keys:
            self._failures.pop(key)
        for alias, named in list(self._aliases.items()):
            if named in keys or self._alias_key(alias) in mine:
                self._aliases.pop(alias, None)
        if dropped:
            self._gauge()
        return dropped

    def _tier_key(self, key: str) -> str:
        return self.tiers.key(key)

    def _alias_key(self, alias: str) -> str:
        return self.tiers.alias_key(alias)

    def _raise_remembered(self, key: str) -> None:
        failure = self._failures.get(key)
        if failure is not None:
            self._count("hit")
            raise failure.with_traceback(None)  # no traceback piling up on the one object

    def _count(self, result: str) -> None:
        if self._metrics is None:
            return
        child = self._counters.get(result)
        if child is None:  # a labelled child is looked up once (labels() takes a lock)
            child = self._counters[result] = self._metrics.cache_requests.labels(
                cache=self.name, result=result
            )
        child.inc()

    def _gauge(self) -> None:
        if self._metrics is None:
            return
        self._metrics.cache_bytes.labels(cache=self.name, tier="memory").set(self.memory.used_bytes)
        if self.disk is not None:
            self._metrics.cache_bytes.labels(cache=self.name, tier="disk").set(self.disk.used_bytes)


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
