"""Header probes and strict decoding of every input format, limits and corrupt data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import pyvips

from assetgate.errors import AppError
from assetgate.imaging.encode import encode
from assetgate.imaging.formats import InputFormat, SourceInfo, sniff
from assetgate.imaging.load import _jpeg_shrink, decoding, open_image, probe
from tests.imaging import factory as make
from tests.imaging.decode_limits import LIMITS

EVERY_FORMAT: list[tuple[Callable[[], bytes], str, InputFormat]] = [
    (make.jpeg, "a.jpg", "jpeg"),
    (make.png, "a.png", "png"),
    (make.webp, "a.webp", "webp"),
    (make.avif, "a.avif", "avif"),
    (make.heic, "a.heic", "heif"),
    (make.bmp, "a.bmp", "bmp"),
    (make.tiff, "a.tif", "tiff"),
    (make.tga, "a.tga", "tga"),
    (make.ppm, "a.ppm", "pnm"),
]


def near(actual: list[float], expected: tuple[int, int, int], tolerance: float = 40) -> bool:
    return all(abs(a - e) <= tolerance for a, e in zip(actual[:3], expected, strict=True))


@pytest.mark.parametrize(("build", "name", "fmt"), EVERY_FORMAT)
def test_every_format_decodes_to_srgb_with_exact_size(
    build: Callable[[], bytes], name: str, fmt: InputFormat, tmp_path: Path
) -> None:
    data = build()
    path = tmp_path / name
    path.write_bytes(data)
    for source in (data, path):
        info = probe(source, fmt, LIMITS)
        assert (info.width, info.height, info.pages, info.fmt) == (64, 48, 1, fmt)
        image = open_image(source, fmt, LIMITS)
        assert (image.width, image.height, image.format) == (64, 48, "uchar")
        assert image.interpretation == "srgb"
        assert near(image(8, 8), make.RED)
        assert near(image(56, 40), make.WHITE)


@pytest.mark.parametrize("build", [make.pgm, make.pbm])
def test_grey_pnm(build: Callable[[], bytes]) -> None:
    image = open_image(build(), "pnm", LIMITS)
    assert (image.width, image.height, image.bands, image.interpretation) == (64, 48, 1, "b-w")


@pytest.mark.parametrize("fast_shrink", [False, True])
@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation_is_applied(orientation: int, fast_shrink: bool) -> None:
    data = make.oriented_jpeg(orientation)
    info = probe(data, "jpeg", LIMITS)
    assert (info.width, info.height, info.orientation) == (64, 48, orientation)
    for size in (None, (32, 24), (16, 12)):
        image = open_image(data, "jpeg", LIMITS, size=size, fast_shrink=fast_shrink)
        scale = 1 if size is None else 64 // size[0]
        assert (image.width, image.height) == (64 // scale, 48 // scale)
        assert near(image(4 // scale, 4 // scale), make.RED), orientation
        assert near(image(60 // scale, 4 // scale), make.GREEN), orientation
        assert near(image(4 // scale, 44 // scale), make.BLUE), orientation
        assert not image.get_typeof("orientation") or image.get("orientation") == 1


@pytest.mark.parametrize(
    ("width", "height", "size", "shrink"),
    [
        (4000, 3000, (800, 600), 4),  # 5x: libvips' thumbnail would decode at 1/2
        (4000, 3000, (2000, 1500), 2),
        (4000, 3000, (2001, 1500), 1),  # 1/2 would not cover the width
        (4000, 3000, (500, 375), 8),
        (4000, 3000, (100, 75), 8),  # libjpeg scales down to 1/8 at most
        (3000, 4000, (750, 1000), 4),
        (100, 100, (100, 100), 1),
    ],
)
def test_jpeg_shrink_is_the_largest_dct_scale_covering_the_target(
    width: int, height: int, size: tuple[int, int], shrink: int
) -> None:
    info = SourceInfo(width, height, 1, False, "jpeg", 1)
    assert _jpeg_shrink(info, size) == shrink


@pytest.mark.parametrize("orientation", range(1, 9))
def test_fast_shrink_turns_large_images(orientation: int) -> None:
    """2400x1800 decoded at 1/2: big enough that a sequential read could not be turned."""
    data = make.oriented_jpeg(orientation, 2400, 1800)
    image = open_image(data, "jpeg", LIMITS, size=(1000, 750), fast_shrink=True)
    assert (image.width, image.height) == (1000, 750)
    assert near(image(50, 50), make.RED), orientation
    assert near(image(950, 50), make.GREEN), orientation
    assert near(image(50, 700), make.BLUE), orientation
    assert near(image(950, 700), make.WHITE), orientation


def test_fast_shrink_looks_like_the_quality_path() -> None:
    data = make.noise_jpeg(800, 600)
    fast = open_image(data, "jpeg", LIMITS, size=(190, 143), fast_shrink=True)
    slow = open_image(data, "jpeg", LIMITS, size=(190, 143))
    assert (fast.width, fast.height) == (slow.width, slow.height) == (190, 143)
    difference = (fast - slow).abs()
    assert 0 < difference.avg() < 8  # differs (the DCT-scaled decode ran); noise is the worst case


@pytest.mark.parametrize("fast_shrink", [False, True])
def test_shrunk_cmyk_jpeg_becomes_correct_srgb(fast_shrink: bool) -> None:
    image = open_image(make.cmyk_jpeg(), "jpeg", LIMITS, size=(10, 7), fast_shrink=fast_shrink)
    assert (image.width, image.height, image.bands, image.interpretation) == (10, 7, 3, "srgb")
    red, green, blue = image(5, 3)
    assert red < 90
    assert green > 120
    assert blue > 180


def test_cmyk_jpeg_becomes_correct_srgb() -> None:
    image = open_image(make.cmyk_jpeg(), "jpeg", LIMITS)
    assert (image.bands, image.interpretation) == (3, "srgb")
    red, green, blue = image(5, 5)
    assert red < 90
    assert green > 120
    assert blue > 180


@pytest.mark.parametrize(("build", "expected"), [(make.png16, 128), (make.grey16_png, 192)])
def test_16_bit_png_becomes_8_bit(build: Callable[[], bytes], expected: int) -> None:
    image = open_image(build(), "png", LIMITS)
    assert image.format == "uchar"
    assert abs(image(3, 3)[0] - expected) <= 2


def test_palette_png_with_trns_keeps_alpha() -> None:
    data = make.palette_png()
    assert probe(data, "png", LIMITS).has_alpha
    image = open_image(data, "png", LIMITS)
    assert image.hasalpha()
    assert image(2, 2)[-1] == 0
    assert image(30, 2)[-1] == 255


def test_grey_alpha_png() -> None:
    image = open_image(make.grey_alpha_png(), "png", LIMITS)
    assert (image.bands, image.interpretation) == (2, "b-w")


@pytest.mark.parametrize(
    ("build", "fmt"), [(make.gif, "gif"), (make.webp_animated, "webp"), (make.apng, "apng")]
)
def test_animation_keeps_every_frame_when_asked(
    build: Callable[[], bytes], fmt: InputFormat
) -> None:
    data = build()
    assert sniff(data) == fmt
    info = probe(data, fmt, LIMITS)
    assert (info.width, info.height, info.pages, info.animated) == (40, 30, 3, True)
    roll = open_image(data, fmt, LIMITS, animated=True)
    assert (roll.width, roll.height, roll.get("page-height")) == (40, 90, 30)
    assert near(roll(5, 5), make.RED)
    assert near(roll(5, 35), make.GREEN)
    still = open_image(data, fmt, LIMITS)
    assert (still.width, still.height) == (40, 30)
    small = open_image(data, fmt, LIMITS, animated=True, size=(20, 15))
    assert (small.width, small.height, small.get("page-height")) == (20, 45, 15)


def test_animation_limits_count_every_frame() -> None:
    data = make.gif(40, 30, 3)
    small = replace(LIMITS, max_pixels=3000)
    with pytest.raises(AppError) as caught:
        open_image(data, "gif", small, animated=True)
    assert caught.value.status == 413
    with pytest.raises(AppError) as caught:
        open_image(data, "gif", replace(LIMITS, max_frames=2), animated=True)
    assert caught.value.status == 413
    assert open_image(data, "gif", small).height == 30  # one frame is fine


@pytest.mark.parametrize(
    ("build", "fmt", "name"),
    [
        (make.bomb_png, "png", "b.png"),
        (make.bomb_jpeg, "jpeg", "b.jpg"),
        (make.bomb_gif, "gif", "b.gif"),
        (make.bomb_bmp, "bmp", "b.bmp"),
        (make.bomb_tga, "tga", "b.tga"),
        (make.bomb_ppm, "pnm", "b.ppm"),
        (make.bomb_webp, "webp", "b.webp"),
        (make.bomb_tiff, "tiff", "b.tif"),
        (make.bomb_heic, "heif", "b.heic"),
        (make.bomb_avif, "avif", "b.avif"),
    ],
)
def test_header_bombs_are_413_before_decoding(
    build: Callable[[], bytes], fmt: InputFormat, name: str
) -> None:
    data = build()
    assert len(data) < 16_000
    assert sniff(data, name) == fmt
    with pytest.raises(AppError) as caught:
        probe(data, fmt, LIMITS)
    assert caught.value.status == 413
    assert "MP" in caught.value.message or "limit" in caught.value.message


@pytest.mark.parametrize(
    ("build", "fmt"),
    [
        (make.noise_jpeg, "jpeg"),
        (lambda: make.png(300, 200, alpha=True), "png"),
        (lambda: make.webp(300, 200), "webp"),
        (lambda: make.gif(300, 200, 3), "gif"),
        (lambda: make.tiff(300, 200), "tiff"),
        (lambda: make.bmp(300, 200), "bmp"),
        (lambda: make.ppm(300, 200), "pnm"),
        (lambda: make.avif(300, 200), "avif"),
        (lambda: make.heic(300, 200), "heif"),
    ],
)
@pytest.mark.parametrize("size", [None, (60, 40), (30, 20)])
def test_truncated_data_is_415_not_a_grey_image(
    build: Callable[[], bytes], fmt: InputFormat, size: tuple[int, int] | None
) -> None:
    data = make.truncated(build(), 0.6)

    def decode_all() -> None:
        with decoding():
            image = open_image(data, fmt, LIMITS, animated=True, size=size, fast_shrink=True)
            encode(image, "png")

    with pytest.raises(AppError) as caught:
        decode_all()
    assert caught.value.status == 415


def test_memory_input_outlives_the_callers_reference() -> None:
    image = open_image(bytes(make.noise_jpeg()), "jpeg", LIMITS, size=(40, 30))
    assert len(encode(image, "webp")) > 0  # the temporary bytes object was kept alive


@pytest.mark.parametrize(
    ("fmt", "disabled"), [("avif", ["avif"]), ("jpeg", ["jpg"]), ("heif", ["heic"])]
)
def test_disabled_codec_is_501(fmt: InputFormat, disabled: list[str]) -> None:
    data = {"avif": make.avif, "jpeg": make.jpeg, "heif": make.heic}[fmt]()
    with pytest.raises(AppError) as caught:
        probe(data, fmt, replace(LIMITS, disabled=tuple(disabled)))
    assert caught.value.status == 501


def test_garbage_after_magic_is_415() -> None:
    with pytest.raises(AppError) as caught:
        probe(b"\xff\xd8\xff\xe0" + b"garbage" * 20, "jpeg", LIMITS)
    assert caught.value.status == 415


@pytest.mark.parametrize("orientation", [1, 3, 6])
def test_one_pass_decode_of_a_large_photo(orientation: int) -> None:
    """Sequential for an unturned photo, whole for a turned one: both read correctly once."""
    data = make.oriented_jpeg(orientation, 2400, 1800)
    image = open_image(data, "jpeg", LIMITS, one_pass=True)
    pixels = image.write_to_memory()  # the one pass
    assert (image.width, image.height, image.bands) == (2400, 1800, 3)
    copy = pyvips.Image.new_from_memory(pixels, 2400, 1800, 3, "uchar")
    assert near(copy(50, 50), make.RED), orientation
    assert near(copy(2350, 50), make.GREEN), orientation
    assert near(copy(50, 1750), make.BLUE), orientation


def test_one_pass_decode_of_truncated_data_is_415() -> None:
    data = make.truncated(make.noise_jpeg(), 0.6)
    with pytest.raises(AppError) as caught, decoding():
        open_image(data, "jpeg", LIMITS, one_pass=True).write_to_memory()
    assert caught.value.status == 415
