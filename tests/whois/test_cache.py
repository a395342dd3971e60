"""TTL + LRU cache with single-flight; failures are never cached."""

from __future__ import annotations

import asyncio

import pytest

from assetgate.whois.cache import SingleFlightCache

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_concurrent_callers_share_one_fetch() -> None:
    calls = 0
    release = asyncio.Event()

    async def fetch() -> str:
        nonlocal calls
        calls += 1
        await release.wait()
        return "answer"

    cache: SingleFlightCache[str] = SingleFlightCache(lambda v: 60.0)
    waiters = [asyncio.create_task(cache.get_or_fetch("k", fetch)) for _ in range(5)]
    await asyncio.sleep(0.01)
    release.set()
    results = await asyncio.gather(*waiters)
    assert calls == 1
    assert results == [("answer", False)] * 5
    assert await cache.get_or_fetch("k", fetch) == ("answer", True)


async def test_ttl_per_value_and_expiry() -> None:
    clock = Clock()
    cache: SingleFlightCache[str] = SingleFlightCache(
        lambda v: 3600.0 if v == "found" else 600.0, clock=clock
    )

    async def found() -> str:
        return "found"

    async def missing() -> str:
        return "missing"

    await cache.get_or_fetch("a", found)
    await cache.get_or_fetch("b", missing)
    clock.now = 601
    assert cache.peek("a") == "found"
    assert cache.peek("b") is None
    clock.now = 3601
    assert cache.peek("a") is None


async def test_errors_are_not_cached_and_reach_every_waiter() -> None:
    attempts = 0

    async def failing() -> str:
        nonlocal attempts
        attempts += 1
        await asyncio.sleep(0.01)
        raise RuntimeError("upstream down")

    cache: SingleFlightCache[str] = SingleFlightCache(lambda v: 60.0)
    results = await asyncio.gather(
        cache.get_or_fetch("k", failing), cache.get_or_fetch("k", failing), return_exceptions=True
    )
    assert attempts == 1
    assert all(isinstance(r, RuntimeError) for r in results)
    with pytest.raises(RuntimeError):
        await cache.get_or_fetch("k", failing)
    assert attempts == 2
    assert len(cache) == 0


async def test_a_cancelled_waiter_does_not_cancel_the_shared_fetch() -> None:
    release = asyncio.Event()

    async def fetch() -> str:
        await release.wait()
        return "v"

    cache: SingleFlightCache[str] = SingleFlightCache(lambda v: 60.0)
    first = asyncio.create_task(cache.get_or_fetch("k", fetch))
    second = asyncio.create_task(cache.get_or_fetch("k", fetch))
    await asyncio.sleep(0.01)
    first.cancel()
    release.set()
    assert await second == ("v", False)
    assert cache.peek("k") == "v"


async def test_zero_ttl_is_not_stored_and_lru_is_bounded() -> None:
    cache: SingleFlightCache[int] = SingleFlightCache(lambda v: float(v), max_entries=2)
    for key, value in (("zero", 0), ("a", 10), ("b", 10), ("c", 10)):
        await cache.get_or_fetch(key, lambda value=value: asyncio.sleep(0, value))
    assert cache.peek("zero") is None
    assert cache.peek("a") is None  # evicted, least recently used
    assert (cache.peek("b"), cache.peek("c")) == (10, 10)


async def test_aclose_cancels_fetches_in_flight() -> None:
    async def forever() -> str:
        await asyncio.sleep(60)
        return "never"

    cache: SingleFlightCache[str] = SingleFlightCache(lambda v: 60.0)
    waiter = asyncio.create_task(cache.get_or_fetch("k", forever))
    await asyncio.sleep(0.01)
    await cache.aclose()
    with pytest.raises(asyncio.CancelledError):
        await waiter
