"""The per-job memory ceiling on /api/convert (ASSETGATE_RENDER_JOB_MEMORY_BYTES, issue 24): an
upload whose conversion counts more is refused from its header with the spec's 413 naming the
``images`` field and the file, and saying what fits; 0 lifts the ceiling."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import pyvips

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.imaging import factory as make

pytestmark = pytest.mark.anyio


def rgba_png(width: int, height: int) -> bytes:
    """A real RGBA PNG, cheap to make at any size: flat colour, transparent at the top left."""
    image = pyvips.Image.black(width, height).new_from_image([200, 120, 40, 255]).cast("uchar")
    image = image.draw_rect([0, 0, 0, 0], 0, 0, width // 2, height // 2, fill=True)
    data = image.copy(interpretation="srgb").pngsave_buffer(compression=1)
    assert isinstance(data, bytes)
    return data


def upload(*items: tuple[str, bytes]) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("images", (name, data, "image/png")) for name, data in items]


def assert_memory_413(response: httpx.Response, name: str) -> str:
    assert response.status_code == 413, response.text[:300]
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["code"] == 413
    message = str(body["error"])
    assert message.startswith(f"images: '{name}' needs about ")
    assert "memory safety limit" in message
    assert "ASSETGATE_RENDER_JOB_MEMORY_BYTES" in message
    assert "/tmp" not in response.text
    assert "Traceback" not in response.text
    return message


def hinted_megapixels(message: str) -> float:
    fits = re.search(r"at most (\d+\.\d) MP fits", message)
    assert fits is not None, message
    return float(fits.group(1))


async def test_a_large_rgba_upload_over_the_default_ceiling_is_413_at_once(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    """4000x4000 RGBA counts ~640 MiB as a WebP (libwebp's alpha coder), over a 512 MiB ceiling
    (set: the default is derived from the machine's memory, docs/configuration.md)."""
    poster = rgba_png(4000, 4000)
    settings = make_settings(rate_limit="1000/10 seconds", render_job_memory_bytes=512 * 2**20)
    async with app_client(settings) as client:
        started = time.process_time()  # work done, not wall time: a busy machine keeps it
        response = await client.post(
            "/api/convert",
            files=upload(("small.png", make.png(64, 48, alpha=True)), ("poster.png", poster)),
        )
        assert time.process_time() - started < 2.0  # encoding it would be many CPU-s
    message = assert_memory_413(response, "poster.png")
    assert "4000x4000 px with alpha" in message
    assert "over the memory safety limit of 512 MiB" in message
    assert 10 < hinted_megapixels(message) < 16
    assert list(private_tmp.iterdir()) == []


async def test_the_ceiling_is_a_setting_and_zero_lifts_it(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    image = rgba_png(1600, 1200)  # counts ~92 MB as a WebP
    settings = make_settings(rate_limit="1000/10 seconds", render_job_memory_bytes=64 * 2**20)
    async with app_client(settings) as client:
        response = await client.post("/api/convert", files=upload(("photo.png", image)))
        message = assert_memory_413(response, "photo.png")
        assert "1600x1200 px with alpha" in message
        assert "limit of 64 MiB" in message
        # An image of the size the answer names converts under the same ceiling.
        megapixels = hinted_megapixels(message)
        side = int((megapixels * 1e6 * 3 / 4) ** 0.5)
        fitting = rgba_png(side * 4 // 3, side)
        response = await client.post("/api/convert", files=upload(("fits.png", fitting)))
        assert response.status_code == 200, response.text[:300]
        assert make.decode(response.content).width == side * 4 // 3
    settings = make_settings(rate_limit="1000/10 seconds", render_job_memory_bytes=0)
    async with app_client(settings) as client:
        response = await client.post("/api/convert", files=upload(("photo.png", image)))
    assert response.status_code == 200, response.text[:300]
    assert response.headers["content-type"] == "image/webp"
    webp = make.decode(response.content)
    assert (webp.width, webp.height, webp.bands) == (1600, 1200, 4)
    assert make.pixel(response.content, 0, 0)[3] == 0
    assert make.pixel(response.content, 1599, 1199) == pytest.approx([200, 120, 40, 255], abs=3)
    assert list(private_tmp.iterdir()) == []
