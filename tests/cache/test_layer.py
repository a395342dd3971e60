"""The cache layer in one process: single flight, cancellation, failures, TTL, budget, codec."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import pytest

from assetgate.cache import FOREVER, Cache, CodecError, bytes_codec, dataclass_codec
from assetgate.errors import AppError, Unavailable
from assetgate.operations.metrics import Metrics
from tests.waiting import wait_until_async

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(**options: Any) -> Cache[bytes]:
    options.setdefault("memory_bytes", 1 << 20)
    return Cache("test", bytes_codec(), **options)


async def test_concurrent_identical_misses_compute_once() -> None:
    cache = make()
    calls = 0
    gate = asyncio.Event()

    async def compute() -> bytes:
        nonlocal calls
        calls += 1
        await gate.wait()
        return b"value"

    tasks = [asyncio.create_task(cache.get_or_compute("k", compute)) for _ in range(20)]
    await wait_until_async(lambda: calls == 1, interval=0)  # all 20 ran up to the shared wait
    gate.set()
    results = await asyncio.gather(*tasks)
    assert calls == 1
    assert {value for value, _ in results} == {b"value"}
    assert all(hit is False for _, hit in results)
    assert await cache.get_or_compute("k", compute) == (b"value", True)
    assert calls == 1


async def test_a_cancelled_caller_does_not_cancel_the_computation_for_others() -> None:
    cache = make()
    gate = asyncio.Event()
    finished = []

    computing = asyncio.Event()

    async def compute() -> bytes:
        computing.set()
        await gate.wait()
        finished.append(True)
        return b"v"

    leader = asyncio.create_task(cache.get_or_compute("k", compute))
    await asyncio.wait_for(computing.wait(), 10)
    waiter = asyncio.create_task(cache.get_or_compute("k", compute))
    await asyncio.sleep(0)  # one turn of the loop (no clock): the waiter joins the computation
    leader.cancel()  # the client that started it hangs up
    await asyncio.sleep(0)  # the cancel is delivered
    gate.set()
    assert await waiter == (b"v", False)
    assert finished == [True]
    with pytest.raises(asyncio.CancelledError):
        await leader


async def test_the_computation_is_cancelled_when_every_caller_has_gone() -> None:
    cache = make()
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def compute() -> bytes:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return b"never"

    callers = [asyncio.create_task(cache.get_or_compute("k", compute)) for _ in range(3)]
    await started.wait()
    for caller in callers:
        caller.cancel()
    await asyncio.wait_for(cancelled.wait(), 5)
    calls = 0

    async def again() -> bytes:
        nonlocal calls
        calls += 1
        return b"fresh"

    assert await cache.get_or_compute("k", again) == (b"fresh", False)
    assert calls == 1


async def test_leader_failure_lets_the_next_waiter_compute() -> None:
    cache = make()
    gate = asyncio.Event()
    attempts: list[str] = []

    async def failing() -> bytes:
        attempts.append("leader")
        await gate.wait()
        raise RuntimeError("upstream broke")

    async def working() -> bytes:
        attempts.append("waiter")
        return b"ok"

    leader = asyncio.create_task(cache.get_or_compute("k", failing))
    await wait_until_async(lambda: attempts == ["leader"], interval=0)
    waiters = [asyncio.create_task(cache.get_or_compute("k", working)) for _ in range(3)]
    await asyncio.sleep(0)  # one turn of the loop (no clock): the waiters join the computation
    gate.set()
    with pytest.raises(RuntimeError, match="upstream broke"):
        await leader
    assert [await w for w in waiters] == [(b"ok", False)] * 3
    assert attempts == ["leader", "waiter"]  # one waiter computed, the others shared it


async def test_remembered_failure_is_shared_for_the_negative_ttl_but_503_never() -> None:
    clock = Clock()
    cache = make(negative_ttl_s=60.0, clock=clock)
    calls = 0

    async def gone() -> bytes:
        nonlocal calls
        calls += 1
        raise AppError.not_found("package not found")

    for _ in range(3):
        with pytest.raises(AppError) as caught:
            await cache.get_or_compute("k", gone)
        assert caught.value.status == 404
    assert calls == 1
    clock.now += 61
    with pytest.raises(AppError):
        await cache.get_or_compute("k", gone)
    assert calls == 2

    async def busy() -> bytes:
        nonlocal calls
        calls += 1
        raise Unavailable("busy")

    calls = 0
    for _ in range(2):
        with pytest.raises(AppError):
            await cache.get_or_compute("busy", busy)
    assert calls == 2


async def test_ttl_per_value_keeps_negative_answers_shorter() -> None:
    clock = Clock()
    cache = make(ttl=lambda value: 10.0 if value == b"registered" else 1.0, clock=clock)
    answers = iter([b"registered", b"free", b"registered-2", b"free-2"])

    async def fetch() -> bytes:
        return next(answers)

    assert await cache.get_or_compute("a", fetch) == (b"registered", False)
    assert await cache.get_or_compute("b", fetch) == (b"free", False)
    clock.now += 2
    assert await cache.get_or_compute("a", fetch) == (b"registered", True)
    assert await cache.get_or_compute("b", fetch) == (b"registered-2", False)
    clock.now += 9
    assert await cache.get_or_compute("a", fetch) == (b"free-2", False)


async def test_zero_ttl_is_never_kept() -> None:
    cache = make(ttl=0.0)
    calls = 0

    async def compute() -> bytes:
        nonlocal calls
        calls += 1
        return b"x"

    await cache.get_or_compute("k", compute)
    await cache.get_or_compute("k", compute)
    assert calls == 2


async def test_byte_budget_evicts_least_recently_used() -> None:
    cache = make(memory_bytes=300, ttl=FOREVER)

    async def value_of(size: int) -> bytes:
        return b"x" * size

    for key in ("a", "b", "c"):
        await cache.get_or_compute(key, lambda: value_of(100))
    assert cache.memory.used_bytes == 300
    assert cache.peek("a") is not None  # "a" is now the most recently used
    await cache.get_or_compute("d", lambda: value_of(100))
    assert cache.peek("b") is None
    assert cache.peek("a") is not None
    assert cache.peek("c") is not None
    assert cache.memory.used_bytes == 300
    value, hit = await cache.get_or_compute("huge", lambda: value_of(301))
    assert (len(value), hit) == (301, False)  # served, but too heavy to keep
    assert cache.peek("huge") is None
    assert cache.memory.used_bytes == 300


async def test_hits_and_misses_feed_the_metrics() -> None:
    metrics = Metrics.build()
    cache = make(metrics=metrics)

    async def compute() -> bytes:
        return b"12345"

    await cache.get_or_compute("k", compute)
    await cache.get_or_compute("k", compute)
    await cache.get_or_compute("k", compute)
    sample = metrics.registry.get_sample_value
    assert sample("assetgate_cache_requests_total", {"cache": "test", "result": "miss"}) == 1
    assert sample("assetgate_cache_requests_total", {"cache": "test", "result": "hit"}) == 2
    assert sample("assetgate_cache_bytes", {"cache": "test", "tier": "memory"}) == 5


@dataclass(frozen=True, slots=True)
class Inner:
    name: str
    when: datetime
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Outer:
    kind: Literal["a", "b"]
    inner: Inner
    extra: dict[str, Inner]
    ratio: float
    maybe: int | None = None
    document: Any = None


def test_dataclass_codec_round_trips_nested_values() -> None:
    codec = dataclass_codec(Outer)
    when = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    value = Outer(
        "a",
        Inner("x", when, ("t1", "t2")),
        {"k": Inner("y", when)},
        ratio=2,  # an int where a float is declared comes back as a float
        document={"rdap": [1, {"a": None}]},
    )
    back = codec.decode(codec.encode(value))
    assert back == Outer("a", value.inner, value.extra, 2.0, None, value.document)
    assert isinstance(back.ratio, float)
    with pytest.raises(CodecError):
        codec.decode(b'{"kind": "z"}')
    with pytest.raises(CodecError):
        codec.decode(b"not json")


@pytest.mark.timeout(20)  # before the fix the event loop spun for good: only this ends the test
async def test_a_caller_arriving_as_the_computation_fails_gets_an_answer() -> None:
    """A caller that finds the failed flight before its done callback ran (16 parallel requests
    for an image over the per-job memory limit) must not spin on it: it computes again."""
    cache = make()
    release = asyncio.Event()
    calls = 0

    async def compute() -> bytes:
        nonlocal calls
        calls += 1
        if calls == 1:
            await release.wait()
        raise AppError(413, "file: over the memory safety limit")

    first = asyncio.create_task(cache.get_or_compute("k", compute))
    await wait_until_async(lambda: calls == 1, interval=0)
    release.set()  # the computation ends in the next turn of the loop ...
    late = asyncio.create_task(
        cache.get_or_compute("k", compute)
    )  # ... and this caller right after
    outcomes = await asyncio.gather(first, late, return_exceptions=True)
    assert [getattr(outcome, "status", outcome) for outcome in outcomes] == [413, 413]
