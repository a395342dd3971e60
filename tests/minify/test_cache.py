from __future__ import annotations

import anyio
import pytest

from assetgate.minify.cache import AssetCache
from assetgate.minify.render import Rendered

pytestmark = pytest.mark.anyio


def entry(size: int) -> Rendered:
    return Rendered(b"x" * size, "identity", size, False)


OVERHEAD = entry(0).weight


def test_lru_evicts_least_recently_used_within_the_budget() -> None:
    cache = AssetCache(3 * (100 + OVERHEAD))
    for key in "abc":
        cache.put(key, entry(100))
    assert cache.get("a") is not None  # a is now the most recent
    cache.put("d", entry(100))
    assert cache.get("b") is None
    assert [cache.get(k) is not None for k in "acd"] == [True, True, True]
    assert cache.used_bytes == 3 * (100 + OVERHEAD)
    assert len(cache) == 3


def test_entry_larger_than_the_budget_is_not_kept() -> None:
    cache = AssetCache(1000)
    cache.put("small", entry(10))
    cache.put("huge", entry(5000))
    assert cache.get("huge") is None
    assert cache.get("small") is not None


def test_zero_budget_keeps_nothing_and_replacing_a_key_recounts() -> None:
    assert len(_put(AssetCache(0), "a", 1)) == 0
    cache = _put(_put(AssetCache(10_000), "a", 100), "a", 300)
    assert cache.used_bytes == 300 + OVERHEAD
    assert len(cache) == 1


def _put(cache: AssetCache, key: str, size: int) -> AssetCache:
    cache.put(key, entry(size))
    return cache


async def test_concurrent_misses_render_once() -> None:
    cache = AssetCache(0)  # even when nothing can be kept, waiters share the one result
    calls = 0

    async def render() -> Rendered:
        nonlocal calls
        calls += 1
        await anyio.sleep(0.05)
        return entry(10)

    results: list[Rendered] = []

    async def ask() -> None:
        results.append(await cache.get_or_render("k", render))

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(ask)
    assert calls == 1
    assert len(results) == 5
    assert all(r is results[0] for r in results)


async def test_a_failed_render_lets_the_next_waiter_try() -> None:
    cache = AssetCache(10_000)
    attempts = 0

    async def render() -> Rendered:
        nonlocal attempts
        attempts += 1
        await anyio.sleep(0.02)
        if attempts == 1:
            raise RuntimeError("boom")
        return entry(1)

    outcomes: list[object] = []

    async def ask() -> None:
        try:
            outcomes.append(await cache.get_or_render("k", render))
        except RuntimeError as exc:
            outcomes.append(str(exc))

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask)
        await anyio.sleep(0.005)
        tg.start_soon(ask)
    assert outcomes[0] == "boom"
    assert isinstance(outcomes[1], Rendered)
    assert attempts == 2
    assert cache.get("k") is outcomes[1]
