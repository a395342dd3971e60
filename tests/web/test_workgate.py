from __future__ import annotations

import threading

import anyio
import pytest

from assetgate.errors import AppError
from assetgate.web.workgate import WorkGate

pytestmark = pytest.mark.anyio


async def test_runs_off_the_event_loop_thread() -> None:
    gate = WorkGate(workers=2, queue=2)
    main = threading.get_ident()
    assert await gate.run(threading.get_ident) != main


async def test_overflow_beyond_the_queue_is_503_with_retry_after() -> None:
    gate = WorkGate(workers=1, queue=1)
    release = threading.Event()
    outcomes: list[object] = []

    async def occupy() -> None:
        try:
            outcomes.append(await gate.run(release.wait, 5))
        except AppError as exc:
            outcomes.append(exc.status)

    async with anyio.create_task_group() as tg:
        tg.start_soon(occupy)  # runs
        await anyio.sleep(0.05)
        tg.start_soon(occupy)  # waits in the queue
        await anyio.sleep(0.05)
        with pytest.raises(AppError) as caught:
            await gate.run(release.wait, 5)
        assert caught.value.status == 503
        assert caught.value.headers["Retry-After"] == "1"
        release.set()
    assert outcomes == [True, True]
