"""The still-image WebP path (Pillow's libwebp) against libvips' encoder, and the animated path."""

from __future__ import annotations

import io

import pytest
import pyvips
from PIL import Image, ImageChops, ImageStat

from assetgate.imaging.encode import encode, encode_webp_still
from assetgate.imaging.frames import is_animated
from assetgate.imaging.pillow import to_pillow


def gradient(width: int, height: int, bands: int) -> pyvips.Image:
    xy = pyvips.Image.xyz(width, height)
    grey = (xy[0] * 3 + xy[1] * 2) % 256
    if bands <= 2:
        image = grey.cast("uchar").copy(interpretation="b-w")
    else:
        image = grey.bandjoin([(xy[0] * 5) % 256, (xy[1] * 7) % 256]).cast("uchar")
        image = image.copy(interpretation="srgb")
    if bands in (2, 4):
        image = image.bandjoin(((xy[0] + xy[1]) % 200 + 55).cast("uchar"))
    return image


def decode(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data), formats=["WEBP"]) as image:
        image.load()
        return image.copy()


def test_lossy_still_matches_the_libvips_encoder() -> None:
    image = gradient(96, 64, 3)
    ours = decode(encode_webp_still(to_pillow(image), quality=85, effort=2, lossless=False))
    floor = decode(image.webpsave_buffer(Q=85, effort=2, keep="none"))
    assert ours.size == floor.size == (96, 64)
    assert ours.mode == floor.mode == "RGB"
    diff = ImageStat.Stat(ImageChops.difference(ours, floor)).mean
    assert max(diff) < 1.0


@pytest.mark.parametrize(("bands", "mode"), [(1, "RGB"), (2, "RGBA"), (3, "RGB"), (4, "RGBA")])
def test_lossless_is_pixel_exact(bands: int, mode: str) -> None:
    image = gradient(40, 30, bands)
    out = decode(encode_webp_still(to_pillow(image), quality=100, effort=4, lossless=True))
    assert out.mode == mode
    expected = image.colourspace("srgb") if bands <= 2 else image
    raw = expected.write_to_memory()
    assert out.tobytes() == Image.frombytes(mode, (40, 30), raw).tobytes()


def test_animation_keeps_its_frames() -> None:
    frames = [gradient(20, 10, 3).linear(1, offset) for offset in (0, 40, 80)]
    roll = pyvips.Image.arrayjoin(frames, across=1).cast("uchar").copy(interpretation="srgb")
    roll.set_type(pyvips.GValue.gint_type, "page-height", 10)
    roll.set_type(pyvips.GValue.array_int_type, "delay", [50, 60, 70])
    assert is_animated(roll)
    data = encode(roll, "webp", quality=80, effort=2)
    with Image.open(io.BytesIO(data), formats=["WEBP"]) as out:
        assert (out.size, out.n_frames) == ((20, 10), 3)
        durations = []
        for index in range(3):
            out.seek(index)
            out.load()
            durations.append(out.info["duration"])
    assert durations == [50, 60, 70]


def test_still_is_not_animated() -> None:
    assert not is_animated(gradient(8, 8, 3))


def test_encode_sends_a_still_webp_through_the_one_still_encoder() -> None:
    image = gradient(50, 40, 4)
    assert encode(image, "webp", quality=70, effort=3) == encode_webp_still(
        to_pillow(image), quality=70, effort=3
    )
