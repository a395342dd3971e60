"""A value's alias in the shared result store (``Cache.share_as`` / ``prefetch`` / ``find(early=)``)
against a real SeaweedFS: served only under the key it was stored for, a damaged one is a miss,
and a read nobody uses is cancelled."""

from __future__ import annotations

import asyncio

import obstore
import pytest

from assetgate.cache import Cache, ObjectTier, bytes_codec, mac_key
from assetgate.cache.prefetch import PREFETCH_TASK
from assetgate.operations.metrics import Metrics
from tests.sources.servers import Seaweed

pytestmark = pytest.mark.anyio

ALIAS = "by-source-of-a"


class Node:
    """One process's cache over the shared store, with its own metrics."""

    def __init__(self, weed: Seaweed, bucket: str) -> None:
        self.metrics = Metrics.build()
        self.tier = ObjectTier(
            weed.store(bucket),
            key=mac_key("the secret both nodes of this test share"),
            max_entry_bytes=1 << 24,
            results=self.metrics.result_store,
        )
        self.cache: Cache[bytes] = Cache(
            "test", bytes_codec(), memory_bytes=1 << 20, store=self.tier, metrics=self.metrics
        )

    def store_reads(self, result: str) -> float:
        sample = self.metrics.registry.get_sample_value
        value = sample("assetgate_result_store_requests_total", {"result": result})
        return value or 0.0

    async def settled(self) -> None:
        """The background writes have landed."""
        await self.tier.aclose()


async def shared_by_a(weed: Seaweed, bucket: str, key: str, value: bytes) -> None:
    """Node A renders ``value`` for ``key`` and shares it under ``ALIAS``; its write has landed."""
    a = Node(weed, bucket)
    a.cache.share_as(ALIAS, key, value)
    await a.settled()


def prefetches() -> list[asyncio.Task[object]]:
    return [task for task in asyncio.all_tasks() if task.get_name() == PREFETCH_TASK]


async def test_an_alias_is_one_store_read_for_the_key_it_was_stored_under(
    weed: Seaweed, bucket: str
) -> None:
    await shared_by_a(weed, bucket, "k1", b"value one")
    b = Node(weed, bucket)
    assert await b.cache.find("k1", early=b.cache.prefetch(ALIAS)) == b"value one"
    assert b.store_reads("hit") == 1
    assert b.store_reads("miss") == 0
    assert b.cache.peek("k1") == b"value one"  # copied up into memory
    held = b.cache.prefetch(ALIAS)  # what the alias named is in memory here: nothing read
    assert held.task is None
    assert await b.cache.find("k1", early=held) == b"value one"
    assert b.store_reads("hit") == 1


async def test_an_alias_holding_another_key_is_never_served(weed: Seaweed, bucket: str) -> None:
    await shared_by_a(weed, bucket, "k1", b"old version")
    b = Node(weed, bucket)
    assert await b.cache.find("k2", early=b.cache.prefetch(ALIAS)) is None
    assert b.cache.peek("k1") is None
    assert b.cache.peek("k2") is None
    a = Node(weed, bucket)
    await a.cache.put("k2", b"new version")  # k2's own entry, the alias still names k1
    await a.settled()
    assert await b.cache.find("k2", early=b.cache.prefetch(ALIAS)) == b"new version"


@pytest.mark.parametrize("damage", ["short", "flipped"])
async def test_a_damaged_alias_is_a_miss(weed: Seaweed, bucket: str, damage: str) -> None:
    await shared_by_a(weed, bucket, "k1", b"value one")
    store = weed.store(bucket)
    (listed,) = await obstore.list(store).collect_async()
    whole = bytes(await (await obstore.get_async(store, listed["path"])).bytes_async())
    flipped = whole[:-1] + bytes([whole[-1] ^ 1])  # the digest no longer matches
    damaged = whole[: len(whole) // 2] if damage == "short" else flipped
    weed.put(bucket, listed["path"], damaged)
    b = Node(weed, bucket)
    assert await b.cache.find("k1", early=b.cache.prefetch(ALIAS)) is None
    assert b.cache.peek("k1") is None


async def test_a_prefetch_a_memory_hit_makes_useless_is_cancelled(
    weed: Seaweed, bucket: str
) -> None:
    await shared_by_a(weed, bucket, "k1", b"value one")
    b = Node(weed, bucket)
    await b.cache.put("k1", b"value one")  # held here, but this process never used the alias
    early = b.cache.prefetch(ALIAS)
    assert early.task is not None
    assert await b.cache.find("k1", early=early) == b"value one"
    await asyncio.sleep(0)
    assert early.task.cancelled()
    assert prefetches() == []
    assert b.store_reads("hit") == b.store_reads("miss") == 0


async def test_without_a_store_or_a_ttl_nothing_is_shared_or_read(
    weed: Seaweed, bucket: str
) -> None:
    local: Cache[bytes] = Cache("test", bytes_codec(), memory_bytes=1 << 20)
    local.share_as(ALIAS, "k1", b"value one")
    assert local.prefetch(ALIAS).task is None
    node = Node(weed, bucket)
    never: Cache[bytes] = Cache("test", bytes_codec(), memory_bytes=1 << 20, store=node.tier, ttl=0)
    never.share_as(ALIAS, "k1", b"value one")
    await node.settled()
    weed.put(bucket, "marker", b"")  # the bucket exists: the listing below is not an error
    listed = await obstore.list(weed.store(bucket)).collect_async()
    assert [item["path"] for item in listed] == ["marker"]
