"""The result store's reads against a real SeaweedFS: one ranged GET gives the whole object, and
an empty object (its 416) is a miss, not a store failure."""

from __future__ import annotations

import os

import pytest

from assetgate.cache import ObjectTier
from assetgate.cache.objects import OK
from assetgate.operations.metrics import Metrics
from tests.sources.servers import Seaweed

pytestmark = pytest.mark.anyio


async def test_a_read_gives_the_whole_object_and_an_empty_one_is_a_miss(
    weed: Seaweed, bucket: str
) -> None:
    metrics = Metrics.build()
    tier = ObjectTier(weed.store(bucket), results=metrics.result_store)
    whole = os.urandom(300_000)
    weed.put(bucket, "entry", whole)
    weed.put(bucket, "empty", b"")
    assert await tier.get("entry") == whole
    assert await tier.get("empty") is None
    assert await tier.get("absent") is None
    assert tier.available
    assert tier.state == OK
    sample = metrics.registry.get_sample_value
    counts = {
        result: sample("assetgate_result_store_requests_total", {"result": result})
        for result in ("hit", "miss", "error")
    }
    assert counts == {"hit": 1, "miss": 2, "error": None}
