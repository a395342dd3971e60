"""The optimizer's lifespan gives back what it built, however the app leaves it."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from assetgate.optimizer.routes import lifespan
from assetgate.resources import Resources
from assetgate.settings import Settings

pytestmark = pytest.mark.anyio


class AppFailed(Exception):
    pass


async def test_a_render_in_flight_is_cancelled_when_the_app_exits_with_an_error(
    settings: Settings,
) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def render_forever() -> object:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    async with httpx.AsyncClient() as http:
        res = Resources.build(settings, http)
        waiters: list[asyncio.Task[object]] = []

        async def run_app_that_fails() -> None:
            async with lifespan(res) as state:
                assert state.results is not None
                waiters.append(
                    asyncio.create_task(state.results.get_or_compute("k", render_forever))
                )
                await asyncio.wait_for(started.wait(), 5)
                raise AppFailed

        with pytest.raises(AppFailed):
            await run_app_that_fails()
        (waiter,) = waiters
        await asyncio.wait_for(cancelled.wait(), 5)
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        res.gate.close()
        await res.aclose()
