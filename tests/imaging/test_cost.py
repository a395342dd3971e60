"""The cost the memory door admits a job by: the peak bench/render_peaks.py measured per kind."""

from __future__ import annotations

import pytest

from assetgate.imaging.cost import PILLOW_WEBP_BYTES, fitting_pixels, mib, peak_bytes
from assetgate.imaging.encode import STREAMED_WEBP_PIXELS
from assetgate.imaging.formats import SourceInfo

MP = 1_000_000
RGB = SourceInfo(7000, 7000, 1, False, "png")
RGBA = SourceInfo(7000, 7000, 1, True, "png")
PROGRESSIVE = SourceInfo(7000, 7000, 1, False, "jpeg", progressive=True)


def test_a_full_size_webp_read_in_one_pass_counts_the_encoder_only() -> None:
    """49 MP -> WebP, pulled straight from the decoder by libvips' saver: ~7 bytes a pixel (RGB),
    ~38 (RGBA with a noisy alpha), not 3 and 4 (decoded pixels) nor 14 and 29 (a copy)."""
    full = {"out_pixels": 49 * MP, "reduced": False, "one_pass": True}
    assert peak_bytes(RGB, output="webp", **full) == 49 * MP * 9
    assert peak_bytes(RGBA, output="webp", **full) == 49 * MP * 40
    assert peak_bytes(RGBA, output="webp", lossless=True, **full) == 49 * MP * 45


def test_a_decode_the_pipeline_needs_whole_counts_its_bands() -> None:
    """A turn, a filter or an EXIF orientation keeps the decoded image while the saver reads."""
    held = peak_bytes(RGBA, output="webp", out_pixels=49 * MP, reduced=False)
    assert held == 49 * MP * (40 + 4)
    turned = SourceInfo(7000, 7000, 1, True, "png", orientation=6)
    assert peak_bytes(turned, output="webp", out_pixels=49 * MP, reduced=False, one_pass=True) == (
        held
    )


def test_a_small_still_webp_counts_pillows_copies() -> None:
    small = STREAMED_WEBP_PIXELS - 1
    streamed = peak_bytes(RGB, output="webp", out_pixels=STREAMED_WEBP_PIXELS, reduced=True)
    pillow = peak_bytes(RGB, output="webp", out_pixels=small, reduced=True)
    assert pillow - streamed == pytest.approx(small * PILLOW_WEBP_BYTES - 9, abs=1)


def test_a_progressive_jpeg_counts_its_coefficient_buffer() -> None:
    baseline = SourceInfo(7000, 7000, 1, False, "jpeg")
    full = {"output": "webp", "out_pixels": 49 * MP, "reduced": False, "one_pass": True}
    assert peak_bytes(PROGRESSIVE, **full) - peak_bytes(baseline, **full) == 49 * MP * 6  # type: ignore[arg-type]
    small = peak_bytes(PROGRESSIVE, output="webp", out_pixels=800 * 800, reduced=True)
    assert small == pytest.approx(49 * MP * 7.25 + 800 * 800 * (9 + PILLOW_WEBP_BYTES))


def test_a_reduced_load_is_cheap_for_jpeg_only() -> None:
    jpeg = SourceInfo(7000, 7000, 1, False, "jpeg")
    assert peak_bytes(jpeg, output="jpeg", out_pixels=0, reduced=True) == 49 * MP * 1.25
    assert peak_bytes(RGBA, output="png", out_pixels=0, reduced=True) == 49 * MP * 4


def test_an_animation_decodes_every_frame_and_encodes_one_at_a_time() -> None:
    anim = SourceInfo(400, 300, 10, True, "gif")
    frame = 400 * 300
    kept = peak_bytes(anim, output="webp", out_pixels=frame, reduced=False, one_pass=True)
    assert kept == frame * 4 * 10 + frame * 40 * 2
    first = peak_bytes(anim, output="webp", out_pixels=frame, reduced=False, all_frames=False)
    assert first == frame * 4 + frame * (40 + PILLOW_WEBP_BYTES)


def test_a_byte_budget_search_counts_the_output_kept_in_memory() -> None:
    plain = peak_bytes(RGB, output="jpeg", out_pixels=MP, reduced=True)
    searched = peak_bytes(RGB, output="jpeg", out_pixels=MP, reduced=True, search=True)
    assert searched == plain + 3 * MP


@pytest.mark.parametrize("output", ["jpeg", "png", "gif", "webp", "avif"])
def test_every_output_costs_more_than_its_decoded_pixels(output: str) -> None:
    cost = peak_bytes(RGB, output=output, out_pixels=49 * MP, reduced=False)  # type: ignore[arg-type]
    assert cost > RGB.decoded_bytes(all_frames=True)


def test_fitting_pixels_is_the_largest_output_under_the_ceiling() -> None:
    ceiling = 512 * 2**20
    pixels = fitting_pixels(RGBA, ceiling, output="webp", reduced=True)
    assert pixels > 0
    assert peak_bytes(RGBA, output="webp", out_pixels=pixels, reduced=True) <= ceiling
    over = peak_bytes(RGBA, output="webp", out_pixels=pixels + 1000, reduced=True)
    assert over > ceiling
    # The reduced decode alone is over a tiny ceiling: nothing fits.
    assert fitting_pixels(RGBA, 10 * MP, output="webp", reduced=True) == 0
    assert mib(ceiling) == "512 MiB"


def test_only_strip_decoders_read_in_one_pass_hold_nothing_whole() -> None:
    """libjpeg and libspng decode in strips; a BMP (Pillow) or a WebP is decoded whole."""
    full = {"output": "webp", "out_pixels": 49 * MP, "reduced": False, "one_pass": True}
    png = peak_bytes(RGB, **full)  # type: ignore[arg-type]
    for fmt in ("bmp", "webp", "tiff", "avif", "gif"):
        whole = SourceInfo(7000, 7000, 1, False, fmt)  # type: ignore[arg-type]
        assert peak_bytes(whole, **full) == png + 49 * MP * 3  # type: ignore[arg-type]
