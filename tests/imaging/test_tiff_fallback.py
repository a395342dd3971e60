"""TIFFs libvips refuses or misreads convert as Pillow reads them: CIE L*a*b* and old-style JPEG
compression through Pillow's TIFF decoder, 32-bit float grey scaled from 0..1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import pyvips

from assetgate.errors import AppError
from assetgate.imaging.encode import encode
from assetgate.imaging.load import decoding, open_image, probe
from assetgate.imaging.pillow import from_pillow
from tests.imaging import factory as make
from tests.imaging.decode_limits import LIMITS

_LUMA = make.quadrants(64, 48).convert("L")  # the quadrants in 8-bit grey (ITU-R 601 luma)
GREY = {
    "top-left": _LUMA.getpixel((2, 2)),
    "top-right": _LUMA.getpixel((61, 2)),
    "bottom-left": _LUMA.getpixel((2, 45)),
    "bottom-right": _LUMA.getpixel((61, 45)),
}
TIFFS: dict[str, Callable[[], bytes]] = {
    "lab": make.lab_tiff,
    "old-jpeg": make.old_jpeg_tiff,
    "float-unit": make.float_tiff,
    "float-255": lambda: make.float_tiff(unit=False),
}


def corners(image: pyvips.Image) -> dict[str, list[float]]:
    w, h = image.width, image.height
    points = {
        "top-left": (2, 2),
        "top-right": (w - 3, 2),
        "bottom-left": (2, h - 3),
        "bottom-right": (w - 3, h - 3),
    }
    return {name: list(image(x, y)) for name, (x, y) in points.items()}


def render(src: bytes | Path, **options: object) -> pyvips.Image:
    with decoding():
        image = open_image(src, "tiff", LIMITS, **options)  # type: ignore[arg-type]
        return pyvips.Image.new_from_buffer(encode(image, "png"), "")


def test_libvips_alone_refuses_or_misreads_them() -> None:
    """What made them 415 (or black) before the fallback."""
    with pytest.raises(pyvips.Error, match="labq"):
        pyvips.Image.new_from_buffer(make.lab_tiff(), "").avg()
    with pytest.raises(pyvips.Error, match="Old-style JPEG"):
        pyvips.Image.new_from_buffer(make.old_jpeg_tiff(), "").avg()


@pytest.mark.parametrize("kind", sorted(TIFFS))
@pytest.mark.parametrize(
    "options", [{}, {"one_pass": True}, {"size": (32, 24)}], ids=["whole", "one-pass", "resized"]
)
@pytest.mark.parametrize("as_file", [False, True])
def test_each_decodes_with_the_right_pixels(
    kind: str, options: dict[str, object], as_file: bool, tmp_path: Path
) -> None:
    data = TIFFS[kind]()
    path = tmp_path / "a.tif"
    path.write_bytes(data)
    src = path if as_file else data
    info = probe(src, "tiff", LIMITS)
    assert (info.width, info.height, info.fmt) == (64, 48, "tiff")
    image = render(src, **options)
    assert (image.width, image.height) == ((32, 24) if "size" in options else (64, 48))
    found = corners(image)
    if kind.startswith("float"):
        for corner, grey in GREY.items():
            assert found[corner][0] == pytest.approx(grey, abs=3), (kind, corner)
    else:
        expected = {
            "top-left": make.RED,
            "top-right": make.GREEN,
            "bottom-left": make.BLUE,
            "bottom-right": make.WHITE,
        }
        for corner, colour in expected.items():
            assert found[corner][:3] == pytest.approx(list(colour), abs=30), (kind, corner)


def test_a_turned_lab_tiff_is_upright() -> None:
    """Orientation 6 (turn 90 degrees clockwise to display): Pillow applies it, once."""
    info = probe(make.lab_tiff(tag274=6), "tiff", LIMITS)
    assert (info.width, info.height) == (48, 64)
    image = render(make.lab_tiff(tag274=6))
    assert (image.width, image.height) == (48, 64)
    assert list(image(45, 2))[:3] == pytest.approx(list(make.RED), abs=30)  # was top-left
    assert list(image(2, 2))[:3] == pytest.approx(list(make.BLUE), abs=30)  # was bottom-left


def test_a_cut_fallback_tiff_is_still_415() -> None:
    for data in (make.lab_tiff(300, 200), make.old_jpeg_tiff(300, 200)):
        with pytest.raises(AppError) as caught:
            render(make.truncated(data, 0.6))
        assert caught.value.status == 415


@pytest.mark.parametrize(("scale", "expected"), [(1 / 255, 83), (1.0, 83), (300 / 83, 255)])
def test_pillow_float_grey_is_scaled_from_0_to_1_else_clipped(scale: float, expected: int) -> None:
    grey = make.quadrants(64, 48).convert("L").convert("F").point(lambda v: v * scale)
    image = from_pillow(grey)
    assert (image.bands, image.format) == (1, "uchar")
    assert image(2, 2)[0] == pytest.approx(expected, abs=1)


def test_pillow_lab_becomes_srgb() -> None:
    image = from_pillow(make.quadrants(64, 48).convert("LAB"))
    assert image.interpretation == "srgb"
    assert list(image(2, 2)) == pytest.approx(list(make.RED), abs=12)
    assert list(image(62, 46)) == pytest.approx(list(make.WHITE), abs=6)
