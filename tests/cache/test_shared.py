"""The Redis tier against a real redis-server: shared between instances, and never an error."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio

from assetgate.cache import Cache, SharedTier, bytes_codec, connect
from tests.conftest import RedisServer

pytestmark = pytest.mark.anyio


@pytest.fixture
async def clients(redis_server: RedisServer) -> AsyncIterator[Callable[[], redis.asyncio.Redis]]:
    made: list[redis.asyncio.Redis] = []

    def make() -> redis.asyncio.Redis:
        made.append(connect(redis_server.url))
        return made[-1]

    yield make
    for client in made:
        await client.aclose()


def cache_over(client: redis.asyncio.Redis, retry_after_s: float = 5.0) -> Cache[bytes]:
    return Cache(
        "answers",
        bytes_codec(),
        memory_bytes=1 << 20,
        ttl=60.0,
        shared=SharedTier(client, retry_after_s=retry_after_s),
    )


async def test_two_instances_share_answers_through_redis(
    clients: Callable[[], redis.asyncio.Redis],
) -> None:
    first, second = cache_over(clients()), cache_over(clients())
    calls = 0

    async def fetch() -> bytes:
        nonlocal calls
        calls += 1
        return b"answer"

    assert await first.get_or_compute("q", fetch) == (b"answer", False)
    assert await second.get_or_compute("q", fetch) == (b"answer", True)
    assert calls == 1
    ttl_ms = await clients().pttl("assetgate:cache:answers:q")
    assert 0 < ttl_ms <= 60_000


async def test_a_foreign_value_under_the_key_is_a_miss(
    clients: Callable[[], redis.asyncio.Redis],
) -> None:
    client = clients()
    await client.set("assetgate:cache:answers:q", b"AGC1 but not really an entry")

    async def fetch() -> bytes:
        return b"fresh"

    assert await cache_over(client).get_or_compute("q", fetch) == (b"fresh", False)


async def test_redis_down_falls_back_to_local_tiers_and_logs_once(
    redis_server: RedisServer,
    clients: Callable[[], redis.asyncio.Redis],
    caplog: pytest.LogCaptureFixture,
) -> None:
    cache = cache_over(clients(), retry_after_s=0.0)
    redis_server.stop()
    calls = 0

    async def fetch() -> bytes:
        nonlocal calls
        calls += 1
        return b"local"

    with caplog.at_level(logging.WARNING, logger="assetgate.cache"):
        for key in ("a", "b", "c"):
            assert await cache.get_or_compute(key, fetch) == (b"local", False)
        assert await cache.get_or_compute("a", fetch) == (b"local", True)  # process memory
        assert calls == 3
        down = [r for r in caplog.records if "Redis unreachable" in r.getMessage()]
        assert len(down) == 1
        redis_server.start()
        assert await cache.get_or_compute("d", fetch) == (b"local", False)
        back = [r for r in caplog.records if "reachable again" in r.getMessage()]
        assert len(back) == 1
    other = cache_over(clients())
    assert await other.get_or_compute("d", fetch) == (b"local", True)  # shared again
