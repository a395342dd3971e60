"""Hostile image files through the optimizer's HTTP route: each is refused from its headers,
with the spec's status, before a decoder spends time or memory on it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.errors import assert_json_error as assert_error
from tests.imaging import factory as make

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "url", ["/scans.jpg?w=100", "/?file=scans.jpg&format=webp", "/scans.jpg?format=png"]
)
async def test_progressive_scan_bomb_is_413_at_once(
    docroot: Path, custom_client: Callable[..., Any], url: str
) -> None:
    """4096x4096, 2,649 valid scans in 200 KB: ~10 CPU-s and a 50 MB coefficient buffer for
    libjpeg, whatever the render deadline; refused from the markers."""
    (docroot / "scans.jpg").write_bytes(make.scan_bomb_jpeg())
    async with custom_client() as client:
        started = time.process_time()  # work done, not wall time: a busy machine keeps it
        response = await client.get(url, headers={"accept": "image/webp"})
        elapsed = time.process_time() - started
        assert_error(response, 413, "more than 100", "scans")
        assert elapsed < 2.0  # CPU-s; decoding the bomb costs ~10
        head = await client.head(url)
        assert head.status_code == 413


async def test_scan_limit_is_a_setting(docroot: Path, custom_client: Callable[..., Any]) -> None:
    progressive = make.pillow_bytes(make.quadrants(64, 48), "JPEG", progressive=True)
    (docroot / "progressive.jpg").write_bytes(progressive)  # 10 scans
    async with custom_client(max_jpeg_scans=9) as client:
        assert_error(await client.get("/progressive.jpg?w=32"), 413, "more than 9")
    async with custom_client() as client:
        response = await client.get("/progressive.jpg?w=32&format=png")
        assert response.status_code == 200
        assert make.decode(response.content).width == 32


@pytest.mark.parametrize("name", sorted(make.gif_bombs()))
@pytest.mark.parametrize("url", ["/?file={}", "/{}?w=50", "/{}?format=webp"])
async def test_gif_screen_and_frame_bombs_are_413(
    docroot: Path, custom_client: Callable[..., Any], name: str, url: str
) -> None:
    """Before: 415 (libnsgif refused the header, or the short frame data), or 500 for the
    far-off frame (Pillow's DecompressionBombError)."""
    (docroot / name).write_bytes(make.gif_bombs()[name])
    async with custom_client() as client:
        response = await client.get(url.format(name), headers={"accept": "image/webp"})
    assert_error(response, 413, "GIF screen and frames span", "over the input limit of 50 MP")


def _truncated_progressive() -> dict[str, bytes]:
    big = make.progressive_jpeg(800, 600)  # > 64 KiB: decoded from the file, not memory
    small = make.progressive_jpeg(200, 150)
    assert len(big) > 64 * 1024 > len(small)
    return {
        "scans-big.jpg": make.cut_between_scans(big, 5),
        "scans-small.jpg": make.cut_between_scans(small, 2),
        "padded-big.jpg": make.zero_padded_cut(big, 0.5),
        "padded-small.jpg": make.zero_padded_cut(small, 0.3),
    }


@pytest.mark.parametrize("url", ["/{}?w=100", "/?file={}&format=png", "/{}?format=webp"])
async def test_truncated_progressive_jpeg_is_415_like_other_damaged_images(
    docroot: Path, custom_client: Callable[..., Any], url: str
) -> None:
    """Before: 200 with grey where scans were missing or zeros were decoded as data."""
    cuts = _truncated_progressive()
    for name, data in cuts.items():
        (docroot / name).write_bytes(data)
    (docroot / "whole.jpg").write_bytes(make.progressive_jpeg(800, 600)[:-2])  # only EOI lost
    async with custom_client() as client:
        for name in cuts:
            response = await client.get(url.format(name))
            assert_error(response, 415, "truncated or corrupt")
        whole = await client.get(url.format("whole.jpg"))
        assert whole.status_code == 200


TIFFS = {
    "lab.tif": make.lab_tiff,
    "old-jpeg.tif": make.old_jpeg_tiff,
    "float.tif": make.float_tiff,
}


@pytest.mark.parametrize("name", sorted(TIFFS))
async def test_tiffs_libvips_refuses_convert_through_pillow(
    docroot: Path, custom_client: Callable[..., Any], name: str
) -> None:
    """Before: 415 for CIE L*a*b* and old-style JPEG, black for 0..1 float grey."""
    (docroot / name).write_bytes(TIFFS[name]())
    async with custom_client() as client:
        response = await client.get(f"/{name}?format=png&w=32")
    assert response.status_code == 200, response.text
    image = make.decode(response.content)
    assert (image.width, image.height) == (32, 24)
    luma = make.quadrants(64, 48).convert("L")
    red, white = image(3, 3), image(28, 20)
    if name == "float.tif":
        assert red[0] == pytest.approx(luma.getpixel((2, 2)), abs=4)
        assert white[0] == pytest.approx(255, abs=4)
    else:
        assert red[:3] == pytest.approx(list(make.RED), abs=30)
        assert white[:3] == pytest.approx(list(make.WHITE), abs=30)


def test_the_door_counts_a_renders_measured_peak(tmp_path: Path) -> None:
    """Before: pixels x bands (a 49 MP RGBA render counted 196 MB, peaked at +840 MiB). Now
    imaging.cost's measured factors: libwebp's planes, Pillow's copies, libjpeg's coefficient
    buffer for a progressive file; a render reduced while loading costs far less."""
    from assetgate.optimizer.plan import Limits, Negotiation
    from assetgate.optimizer.queries import read_query
    from assetgate.optimizer.render import Job, Probed, prepare
    from assetgate.settings import Settings

    settings = Settings()

    def cost(name: str, data: bytes, query: str) -> int:
        path = tmp_path / name
        path.write_bytes(data)
        spec = read_query(query.encode(), False).image
        assert spec is not None
        job = Job.from_settings(
            settings,
            path=path,
            size=len(data),
            spec=spec,
            negotiation=Negotiation.from_accept("image/webp"),
            limits=Limits.from_settings(settings),
        )
        ready = prepare(job)
        assert isinstance(ready, Probed)
        return ready.cost

    pixels = 400 * 300
    pillow = 8  # a still WebP this small goes through Pillow: its buffer and ARGB copy
    # Read once, top to bottom, by the saver: the encoder's planes and its input only.
    alpha = cost("a.png", make.png(400, 300, alpha=True), "format=webp")
    assert alpha == pixels * (40 + pillow)  # was pixels * 4
    baseline = cost("b.jpg", make.jpeg(400, 300), "format=webp")
    assert baseline == pixels * (9 + pillow)
    progressive = make.pillow_bytes(make.quadrants(400, 300), "JPEG", progressive=True)
    assert cost("p.jpg", progressive, "format=webp") == baseline + pixels * 6
    # A turn needs the decoded image whole while the saver reads it.
    assert cost("b.jpg", make.jpeg(400, 300), "format=webp&rotate=90") == baseline + pixels * 3
    assert cost("s.jpg", make.jpeg(400, 300), "format=webp&width=100") < baseline // 5
