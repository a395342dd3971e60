"""Hostile image uploads to /api/convert: refused from their headers with 413 naming the file,
before a decoder spends time or memory, and nothing left in the work directory."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.errors import assert_json_error as assert_error
from tests.imaging import factory as make

pytestmark = pytest.mark.anyio


def upload(name: str, data: bytes) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("images", (name, data, "application/octet-stream"))]


async def test_progressive_scan_bomb_is_413_at_once(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    async with app_client(make_settings(rate_limit="1000/10 seconds")) as client:
        started = time.process_time()  # work done, not wall time: a busy machine keeps it
        response = await client.post(
            "/api/convert", files=upload("scans.jpg", make.scan_bomb_jpeg())
        )
        elapsed = time.process_time() - started
    assert_error(response, 413, "'scans.jpg'", "more than 100", "scans")
    assert elapsed < 2.0  # CPU-s; decoding the bomb costs ~10
    assert list(private_tmp.iterdir()) == []


async def test_gif_screen_and_frame_bombs_are_413_naming_the_file(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    async with app_client(make_settings(rate_limit="1000/10 seconds")) as client:
        for name, data in make.gif_bombs().items():
            response = await client.post("/api/convert", files=upload(name, data))
            assert_error(response, 413, f"'{name}'", "GIF screen and frames span")
    assert list(private_tmp.iterdir()) == []


async def test_truncated_progressive_jpeg_is_the_damaged_image_error(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    """Before: 200 with a WebP grey where scans were missing or zeros were decoded as data."""
    big = make.progressive_jpeg(800, 600)
    cuts = {
        "scans.jpg": make.cut_between_scans(big, 5),
        "padded.jpg": make.zero_padded_cut(big, 0.5),
    }
    async with app_client(make_settings(rate_limit="1000/10 seconds")) as client:
        for name, data in cuts.items():
            response = await client.post("/api/convert", files=upload(name, data))
            assert_error(response, 500, f"'{name}'", "not a supported image")
        whole = await client.post("/api/convert", files=upload("whole.jpg", big[:-2]))
        assert whole.status_code == 200
        assert whole.headers["content-type"] == "image/webp"
    assert list(private_tmp.iterdir()) == []


async def test_tiffs_libvips_refuses_convert_through_pillow(
    make_settings: Callable[..., Settings], private_tmp: Path
) -> None:
    """Before: 500 'not a supported image' for CIE L*a*b* and old-style JPEG."""
    async with app_client(make_settings(rate_limit="1000/10 seconds")) as client:
        for name, data in (("lab.tif", make.lab_tiff()), ("old-jpeg.tif", make.old_jpeg_tiff())):
            response = await client.post("/api/convert", files=upload(name, data))
            assert response.status_code == 200, response.text
            assert response.headers["content-type"] == "image/webp"
            image = make.decode(response.content)
            assert (image.width, image.height) == (64, 48)
            assert image(3, 3)[:3] == pytest.approx(list(make.RED), abs=30)
            assert image(60, 44)[:3] == pytest.approx(list(make.WHITE), abs=30)
    assert list(private_tmp.iterdir()) == []
