"""The cost the memory door admits a job by: the peak bench/render_peaks.py measured per kind."""

from __future__ import annotations

import pytest

from assetgate.imaging.cost import peak_bytes
from assetgate.imaging.formats import SourceInfo

MP = 1_000_000
RGB = SourceInfo(7000, 7000, 1, False, "png")
RGBA = SourceInfo(7000, 7000, 1, True, "png")
PROGRESSIVE = SourceInfo(7000, 7000, 1, False, "jpeg", progressive=True)


def test_a_full_size_webp_counts_the_copy_and_the_encoder() -> None:
    """49 MP -> WebP measured ~14 bytes a pixel (RGB) and ~29 (RGBA), not 3 and 4."""
    assert peak_bytes(RGB, output="webp", out_pixels=49 * MP, reduced=False) == 49 * MP * 15
    assert peak_bytes(RGBA, output="webp", out_pixels=49 * MP, reduced=False) == 49 * MP * 30
    lossless = peak_bytes(RGBA, output="webp", out_pixels=49 * MP, reduced=False, lossless=True)
    assert lossless == 49 * MP * 35


def test_a_progressive_jpeg_counts_its_coefficient_buffer() -> None:
    baseline = SourceInfo(7000, 7000, 1, False, "jpeg")
    full = peak_bytes(PROGRESSIVE, output="webp", out_pixels=49 * MP, reduced=False)
    assert full - peak_bytes(baseline, output="webp", out_pixels=49 * MP, reduced=False) == (
        49 * MP * 4
    )
    small = peak_bytes(PROGRESSIVE, output="webp", out_pixels=800 * 800, reduced=True)
    assert small == pytest.approx(49 * MP * 5.25 + 800 * 800 * 9)


def test_a_reduced_load_is_cheap_for_jpeg_only() -> None:
    jpeg = SourceInfo(7000, 7000, 1, False, "jpeg")
    assert peak_bytes(jpeg, output="webp", out_pixels=0, reduced=True) == 49 * MP * 1.25
    assert peak_bytes(RGBA, output="webp", out_pixels=0, reduced=True) == 49 * MP * 4


def test_an_animation_decodes_every_frame_and_encodes_one_at_a_time() -> None:
    anim = SourceInfo(400, 300, 10, True, "gif")
    frame = 400 * 300
    kept = peak_bytes(anim, output="webp", out_pixels=frame, reduced=False)
    assert kept == frame * 8 * 10 + frame * 22 * 2
    first = peak_bytes(anim, output="webp", out_pixels=frame, reduced=False, all_frames=False)
    assert first == frame * 8 + frame * 22


@pytest.mark.parametrize("output", ["jpeg", "png", "gif", "webp", "avif"])
def test_every_output_costs_more_than_its_decoded_pixels(output: str) -> None:
    cost = peak_bytes(RGB, output=output, out_pixels=49 * MP, reduced=False)  # type: ignore[arg-type]
    assert cost > RGB.decoded_bytes(all_frames=True)
