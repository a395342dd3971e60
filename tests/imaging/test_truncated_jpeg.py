"""A cut JPEG is 415 whichever way it was cut, where libjpeg itself stays quiet: a progressive
file that stops between scans, a cut padded with zeros; and what camera files carry still
decodes (a missing EOI, stray bytes before the EOI, zeros after it)."""

from __future__ import annotations

from pathlib import Path

import pytest
import pyvips

from assetgate.errors import AppError
from assetgate.imaging.encode import encode
from assetgate.imaging.integrity import tolerating_harmless
from assetgate.imaging.load import decoding, open_image
from tests.imaging import factory as make
from tests.imaging.decode_limits import LIMITS


def render(src: bytes | Path, size: tuple[int, int] | None = None) -> pyvips.Image:
    """The optimizer's sequence: strict decode, the tolerant rerun for a harmless warning."""

    def work() -> bytes:
        with decoding():
            image = open_image(src, "jpeg", LIMITS, size=size, fast_shrink=True)
            return encode(image, "png")

    return pyvips.Image.new_from_buffer(tolerating_harmless(work), "")


@pytest.fixture(scope="module")
def progressive() -> bytes:
    return make.progressive_jpeg(400, 300)


@pytest.mark.parametrize("scans", range(1, 10))
@pytest.mark.parametrize("size", [None, (100, 75)])
def test_progressive_cut_between_scans_is_415(
    progressive: bytes, scans: int, size: tuple[int, int] | None
) -> None:
    """Before: 200 — libjpeg filled what the missing scans refine (grey chroma, no detail)."""
    with pytest.raises(AppError) as caught:
        render(make.cut_between_scans(progressive, scans), size)
    assert caught.value.status == 415


@pytest.mark.parametrize("keep", [0.05, 0.3, 0.5, 0.7, 0.9])
@pytest.mark.parametrize("as_file", [False, True])
def test_progressive_cut_padded_with_zeros_is_415(
    progressive: bytes, keep: float, as_file: bool, tmp_path: Path
) -> None:
    """Before: 200 — libjpeg decoded the zeros as scan data and called the rest of them
    "extraneous bytes", the warning camera files carry, so the tolerant rerun passed it."""
    data = make.zero_padded_cut(progressive, keep)
    path = tmp_path / "cut.jpg"
    path.write_bytes(data)
    with pytest.raises(AppError) as caught:
        render(path if as_file else data)
    assert caught.value.status == 415


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-2],  # no EOI after complete scans
        lambda data: data[:-2] + b"\x12\x34" + data[-2:],  # stray bytes before the EOI
        lambda data: data + bytes(4096),  # zeros after the EOI (padded to a block)
        lambda data: data + b"trailer" + bytes(100),
    ],
)
@pytest.mark.parametrize("interlace", [False, True])
def test_what_camera_files_carry_still_decodes(damage: object, interlace: bool) -> None:
    image = make.quadrants(64, 48)
    vips = pyvips.Image.new_from_memory(image.tobytes(), 64, 48, 3, "uchar")
    data = bytes(vips.jpegsave_buffer(Q=95, interlace=interlace))
    assert callable(damage)
    out = render(damage(data))
    assert (out.width, out.height) == (64, 48)
    assert [round(v) for v in out(5, 5)][:3] == pytest.approx(make.RED, abs=30)
    assert [round(v) for v in out(60, 44)][:3] == pytest.approx(make.WHITE, abs=30)


def test_a_flat_image_missing_only_its_eoi_still_decodes() -> None:
    """Its last scan data ends in zero bytes (optimized tables give flat blocks all-zero codes),
    like a padded cut; libjpeg reads exactly to the EOI we append, so it is no cut."""
    flat = (pyvips.Image.black(800, 600, bands=3) + 128).cast("uchar")
    data = bytes(flat.copy(interpretation="srgb").jpegsave_buffer(Q=90, optimize_coding=True))
    assert not any(data[-34:-2])
    out = render(data[:-2])
    assert out.avg() == pytest.approx(128, abs=1)


@pytest.mark.parametrize("interlace", [False, True])
@pytest.mark.parametrize("as_file", [False, True])
def test_cut_inside_the_eoi_marker_is_415(interlace: bool, as_file: bool, tmp_path: Path) -> None:
    """Pillow's ``truncated_jpeg.jpg`` (issue 40): every scan whole, the file cut after the
    ``FF`` of its EOI. Before: 200 (libjpeg has every pixel and warns of nothing)."""
    image = make.quadrants(64, 48)
    vips = pyvips.Image.new_from_memory(image.tobytes(), 64, 48, 3, "uchar")
    data = bytes(vips.jpegsave_buffer(Q=95, interlace=interlace))
    assert data[-2:] == b"\xff\xd9"
    path = tmp_path / "cut.jpg"
    path.write_bytes(data[:-1])
    with pytest.raises(AppError) as caught:
        render(path if as_file else data[:-1])
    assert caught.value.status == 415
