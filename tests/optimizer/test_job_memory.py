"""The per-job memory ceiling (ASSETGATE_RENDER_JOB_MEMORY_BYTES, issue 24): a render whose
counted peak is over it is refused from the header with the spec's 413 naming ``file`` and saying
what fits; a smaller width renders; 0 lifts the ceiling (the job then runs alone)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import pyvips

from tests.imaging import factory as make

pytestmark = pytest.mark.anyio

WEBP = {"accept": "image/webp,*/*"}


def rgba_png(path: Path, width: int, height: int) -> None:
    """A real RGBA PNG, cheap to make at any size: flat colour, transparent at the top left."""
    image = pyvips.Image.black(width, height).new_from_image([200, 120, 40, 255]).cast("uchar")
    image = image.draw_rect([0, 0, 0, 0], 0, 0, width // 2, height // 2, fill=True)
    image.copy(interpretation="srgb").pngsave(str(path), compression=1)


def assert_memory_413(response: httpx.Response) -> str:
    assert response.status_code == 413, response.text[:300]
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["code"] == 413
    message = str(body["error"])
    assert message.startswith("file: ")
    assert "memory safety limit" in message
    assert "ASSETGATE_RENDER_JOB_MEMORY_BYTES" in message
    assert "/tmp" not in response.text
    assert str(Path.cwd()) not in response.text
    return message


def hinted_width(message: str) -> int:
    fits = re.search(r"width=(\d+) or less fits", message)
    assert fits is not None, message
    return int(fits.group(1))


async def test_a_full_size_rgba_webp_over_the_default_ceiling_is_413_at_once(
    docroot: Path, custom_client: Callable[..., Any]
) -> None:
    """4000x4000 RGBA -> full-size WebP counts ~640 MiB (libwebp's alpha coder), over a 512 MiB
    ceiling (set: the default is derived from the machine's memory)."""
    rgba_png(docroot / "poster.png", 4000, 4000)
    async with custom_client(render_job_memory_bytes=512 * 2**20) as client:
        for url in ("/poster.png?format=webp", "/?file=poster.png&format=webp&q=80"):
            started = time.process_time()  # work done, not wall time
            response = await client.get(url, headers=WEBP)
            assert time.process_time() - started < 2.0  # encoding it: many CPU-s
            message = assert_memory_413(response)
            assert "4000x4000 webp" in message
            assert "over the memory safety limit of 512 MiB" in message
            head = await client.head(url, headers=WEBP)
            assert head.status_code == 413
            assert head.content == b""
        assert 1000 < hinted_width(message) < 4000
        response = await client.get("/poster.png?format=webp&width=800", headers=WEBP)
        assert response.status_code == 200, response.text[:300]
        image = make.decode(response.content)
        assert response.headers["content-type"] == "image/webp"
        assert (image.width, image.height, image.bands) == (800, 800, 4)


async def test_a_negotiated_webp_over_the_ceiling_is_the_original(
    docroot: Path, custom_client: Callable[..., Any]
) -> None:
    """No ``format``, WebP only from Accept, nothing else asked: the original PNG may stand in
    (as when a re-encode comes out bigger), so the client gets it instead of a 413."""
    rgba_png(docroot / "poster.png", 4000, 4000)
    original = (docroot / "poster.png").read_bytes()
    async with custom_client(render_job_memory_bytes=512 * 2**20) as client:
        for url in ("/?file=poster.png", "/poster.png?q=70"):
            started = time.process_time()  # work done, not wall time
            response = await client.get(url, headers=WEBP)
            assert time.process_time() - started < 2.0  # encoding it: many CPU-s
            assert response.status_code == 200, response.text[:300]
            assert response.headers["content-type"] == "image/png"
            assert response.content == original
        # Asked for by name, or with pixels changed, the original cannot stand in: the 413.
        assert_memory_413(await client.get("/poster.png?width=3900", headers=WEBP))
        assert_memory_413(await client.get("/poster.png?format=webp&q=85", headers=WEBP))


async def test_the_ceiling_is_a_setting_and_zero_lifts_it(
    docroot: Path, custom_client: Callable[..., Any]
) -> None:
    rgba_png(docroot / "small.png", 1600, 1200)  # counts ~92 MB as a full-size WebP
    async with custom_client(render_job_memory_bytes=64 * 2**20) as client:
        message = assert_memory_413(await client.get("/small.png?format=webp", headers=WEBP))
        assert "1600x1200 webp" in message
        assert "limit of 64 MiB" in message
        head = await client.head("/small.png?format=webp", headers=WEBP)
        assert head.status_code == 413
        width = hinted_width(message)  # the width the answer says fits, does
        assert 400 < width < 1600
        smaller = await client.get(f"/small.png?format=webp&width={width}", headers=WEBP)
        assert smaller.status_code == 200, smaller.text
        assert make.decode(smaller.content).width == width
        wider = await client.get(f"/small.png?format=webp&width={width + 60}", headers=WEBP)
        assert_memory_413(wider)
        # What is not rendered is not refused: the original itself is served.
        assert (await client.get("/small.png")).status_code == 200
    async with custom_client(render_job_memory_bytes=0) as client:
        response = await client.get("/small.png?format=webp", headers=WEBP)
        assert response.status_code == 200, response.text[:300]
        image = make.decode(response.content)
        assert (image.width, image.height, image.bands) == (1600, 1200, 4)
        assert make.pixel(response.content, 0, 0)[3] == 0  # the alpha survived
        assert make.pixel(response.content, 1599, 1199) == pytest.approx([200, 120, 40, 255], abs=3)
