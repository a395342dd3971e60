"""Deadlines through the real app: an overdue render or conversion stops early with a 503.

CPU is read from the process (``resource``), not the wall clock: the claim is "the work stopped",
and the reference is the same render run to the end in the same test.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import pyvips

from assetgate.cpu.workgate import WorkGate
from assetgate.errors import AppError
from assetgate.imaging.load import decoding
from assetgate.imaging.vips import killable
from assetgate.settings import Settings
from tests.conftest import app_client

pytestmark = pytest.mark.anyio

COSTLY = "/big.jpg?blur=100&sharpen=100&format=png"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def big_jpeg(width: int = 2400, height: int = 1800) -> bytes:
    noise = pyvips.Image.gaussnoise(width, height, sigma=60)
    image = noise.bandjoin([noise.rot180().resize(1), noise.fliphor()]).cast("uchar")
    data = image.jpegsave_buffer(Q=90)
    assert isinstance(data, bytes)
    return data


@pytest.fixture
def big(docroot: Path) -> bytes:
    data = big_jpeg()
    (docroot / "big.jpg").write_bytes(data)
    return data


async def test_a_render_past_the_timeout_is_a_503_and_stops_early(
    big: bytes, make_settings: Callable[..., Settings]
) -> None:
    uncached = {"result_cache_bytes": 0}  # both renders are real: no result cache to answer from
    async with app_client(make_settings(**uncached)) as client:
        before = _cpu()
        full = await client.get(COSTLY)
        full_cpu = _cpu() - before
    assert full.status_code == 200
    async with app_client(make_settings(render_timeout_s=0.05, **uncached)) as client:
        before = _cpu()
        cut = await client.get(COSTLY)
        cut_cpu = _cpu() - before
    assert cut.status_code == 503
    assert cut.headers["retry-after"]
    assert cut.headers["cache-control"] == "no-store"
    assert "etag" not in cut.headers
    assert cut.json() == {"error": "the work took longer than the limit of 0.05 s", "code": 503}
    assert cut_cpu < full_cpu / 2, (cut_cpu, full_cpu)


async def test_a_conversion_past_the_timeout_is_a_503(
    big: bytes, make_settings: Callable[..., Settings]
) -> None:
    async with app_client(make_settings(render_timeout_s=0.01)) as client:
        answer = await client.post("/api/convert", files={"images": ("big.jpg", big, "image/jpeg")})
    assert answer.status_code == 503
    assert answer.headers["retry-after"]
    assert "0.01 s" in answer.json()["error"]


def _blur() -> int:
    """One long libvips computation (no step boundary inside it for the job to check at)."""
    image = pyvips.Image.gaussnoise(1200, 1200, seed=1).gaussblur(20)
    with decoding(), killable(image) as target:
        return len(target.write_to_memory())


async def test_a_deadline_falling_while_libvips_computes_ends_the_computation() -> None:
    """The gate's alarm thread kills the image being computed at the deadline."""
    whole = WorkGate(workers=1, queue=0)
    before, started = _cpu(), time.monotonic()
    assert await whole.run(_blur) == 1200 * 1200 * 4
    full_cpu, full_s = _cpu() - before, time.monotonic() - started
    timed = WorkGate(workers=1, queue=0, timeout_s=full_s / 5)
    before = _cpu()
    with pytest.raises(AppError) as caught:
        await timed.run(_blur)
    cut_cpu = _cpu() - before
    timed.close()
    assert caught.value.status == 503
    assert cut_cpu < full_cpu / 2, (cut_cpu, full_cpu)
