"""Geometry, crop precedence, limits and format choice, computed without a pixel."""

from __future__ import annotations

import pytest

from assetgate.errors import AppError
from assetgate.imaging.formats import InputFormat, OutputFormat, SourceInfo, as_output
from assetgate.imaging.limits import DecodeLimits
from assetgate.optimizer.plan import (
    Box,
    Limits,
    Negotiation,
    Plan,
    choose_format,
    make_plan,
    may_serve_source,
)
from assetgate.optimizer.spec import parse_spec

LIMITS = Limits(
    decode=DecodeLimits(max_pixels=50_000_000, max_frames=1000),
    max_upscale_pixels=24_000_000,
    max_avif_pixels=4_000_000,
)
NO_WEBP = Negotiation(webp=False)
WEBP = Negotiation(webp=True, named=frozenset({"webp"}))


def info(
    width: int = 800, height: int = 600, *, pages: int = 1, fmt: InputFormat = "jpeg"
) -> SourceInfo:
    return SourceInfo(width, height, pages, False, fmt)


def plan(
    query: dict[str, str], source: SourceInfo | None = None, output: OutputFormat = "jpeg"
) -> Plan:
    spec = parse_spec({"format": output, **query})
    return make_plan(spec, source or info(), negotiation=NO_WEBP, limits=LIMITS)


def negotiated(
    query: dict[str, str], source: SourceInfo | None = None, negotiation: Negotiation = NO_WEBP
) -> Plan:
    """The plan when the request names no format: the negotiation picks it."""
    return make_plan(parse_spec(query), source or info(), negotiation=negotiation, limits=LIMITS)


def final_box(p: Plan, source: SourceInfo) -> tuple[int, int, int, int] | None:
    """The crop box in source coordinates, whichever path the plan took."""
    if p.crop is None:
        return None
    if p.load_size is None:
        return (p.crop.x, p.crop.y, p.crop.width, p.crop.height)
    sx = source.width / p.load_size[0]
    sy = source.height / p.load_size[1]
    return (
        round(p.crop.x * sx),
        round(p.crop.y * sy),
        round(p.crop.width * sx),
        round(p.crop.height * sy),
    )


@pytest.mark.parametrize(
    ("query", "size"),
    [
        ({}, (800, 600)),
        ({"width": "400"}, (400, 300)),
        ({"height": "300"}, (400, 300)),
        ({"width": "400", "height": "100"}, (133, 100)),
        ({"width": "100", "height": "400"}, (100, 75)),
        ({"width": "1600"}, (800, 600)),  # never enlarged by default
        ({"width": "1600", "upscaling": "resampling"}, (1600, 1200)),
        ({"height": "1200", "upscaling": "resampling"}, (1600, 1200)),
        ({"width": "1"}, (1, 1)),
        ({"rotate": "90"}, (600, 800)),
        ({"rotate": "270", "width": "400"}, (300, 400)),
        ({"rotate": "180", "width": "400"}, (400, 300)),
        ({"crop": "200,100"}, (200, 100)),
        ({"crop": "2000,100"}, (800, 100)),  # clipped to the image
        ({"crop": "200,100", "width": "100"}, (100, 50)),
        ({"aspect_ratio": "1:1"}, (600, 600)),
        ({"aspect_ratio": "2:1"}, (800, 400)),
        ({"aspect_ratio": "1:1", "width": "300"}, (300, 300)),
        ({"focus_crop": "100,50,0.5,0.5"}, (100, 50)),
    ],
)
def test_output_size(query: dict[str, str], size: tuple[int, int]) -> None:
    p = plan(query)
    assert (p.width, p.height) == size


@pytest.mark.parametrize(
    ("gravity", "x", "y"),
    [
        ("center", 300, 250),
        ("north", 300, 0),
        ("south", 300, 500),
        ("east", 600, 250),
        ("west", 0, 250),
        ("northeast", 600, 0),
        ("northwest", 0, 0),
        ("southeast", 600, 500),
        ("southwest", 0, 500),
    ],
)
def test_two_value_crop_uses_gravity(gravity: str, x: int, y: int) -> None:
    p = plan({"crop": "200,100", "crop_gravity": gravity})
    assert p.crop == Box(x, y, 200, 100)
    assert p.load_size is None


def test_four_value_crop_at_coordinates_and_clipped() -> None:
    assert plan({"crop": "100,50,10,20"}).crop == Box(10, 20, 100, 50)
    assert plan({"crop": "500,500,700,500"}).crop == Box(700, 500, 100, 100)


@pytest.mark.parametrize("crop", ["10,10,800,0", "10,10,0,600", "10,10,5000,5000"])
def test_crop_fully_outside_is_400(crop: str) -> None:
    with pytest.raises(AppError) as caught:
        plan({"crop": crop})
    assert (caught.value.status, caught.value.param) == (400, "crop")


@pytest.mark.parametrize(
    ("focus", "box"),
    [
        ("100,50,0.5,0.5", Box(350, 275, 100, 50)),
        ("100,50,400,300", Box(350, 275, 100, 50)),
        ("100,50,0.0,0.0", Box(0, 0, 100, 50)),  # clamped inside the image
        ("100,50,1.0,1.0", Box(700, 550, 100, 50)),
        ("100,50,99999,10", Box(700, 0, 100, 50)),
        ("5000,5000,0.5,0.5", None),  # bigger than the image: the whole image
    ],
)
def test_focus_crop_centres_and_clamps(focus: str, box: Box | None) -> None:
    assert plan({"focus_crop": focus}).crop == box


def test_crop_precedence_focus_then_crop_then_ratio() -> None:
    both = {"focus_crop": "100,50,0,0", "crop": "300,300", "aspect_ratio": "1:1"}
    assert plan(both).crop == Box(0, 0, 100, 50)
    assert plan({"crop": "300,300", "aspect_ratio": "2:1"}).crop == Box(250, 150, 300, 300)
    assert plan({"aspect_ratio": "1:2"}).crop == Box(250, 0, 300, 600)


def test_downscale_uses_shrink_on_load() -> None:
    p = plan({"width": "200"})
    assert (p.load_size, p.crop, p.resize) == ((200, 150), None, None)


def test_downscaled_crop_is_mapped_into_the_loaded_scale() -> None:
    source = info(4000, 3000)
    p = plan({"crop": "2000,1000,1000,500", "width": "500"}, source)
    assert (p.width, p.height) == (500, 250)
    assert p.load_size == (1000, 750)
    assert p.crop == Box(250, 125, 500, 250)
    assert final_box(p, source) == (1000, 500, 2000, 1000)


def test_enlarging_decodes_then_resamples() -> None:
    p = plan({"crop": "100,100", "width": "400", "upscaling": "resampling"})
    assert (p.load_size, p.crop, p.resize) == (None, Box(350, 250, 100, 100), (400, 400))


def test_upscale_limit_is_24_mp() -> None:
    ok = plan({"width": "5600", "upscaling": "resampling"})  # 5600 x 4200 = 23.5 MP
    assert (ok.width, ok.height) == (5600, 4200)
    with pytest.raises(AppError) as caught:
        plan({"width": "5700", "upscaling": "resampling"})  # 24.4 MP
    assert caught.value.status == 413
    # A big source that is not enlarged is not an upscale.
    big = info(6000, 5000)
    assert plan({"width": "6000", "upscaling": "resampling"}, big).width == 6000


def test_avif_limit_is_4_mp_of_output() -> None:
    big = info(4000, 3000)
    with pytest.raises(AppError) as caught:
        plan({}, big, output="avif")
    assert caught.value.status == 413
    assert plan({"width": "2000"}, big, output="avif").width == 2000  # 3 MP
    assert plan({}, big, output="webp").width == 4000


def test_animation_limits() -> None:
    animated = SourceInfo(1000, 1000, 60, False, "gif")
    with pytest.raises(AppError) as caught:
        plan({}, animated, output="gif")  # 60 MP over all frames
    assert caught.value.status == 413
    still = plan({}, animated, output="jpeg")  # only the first frame is decoded
    assert not still.animated
    few = SourceInfo(100, 100, 5, False, "gif")
    assert plan({}, few, output="webp").animated
    limits = Limits(DecodeLimits(10**9, max_frames=4), 10**9, 10**9)
    with pytest.raises(AppError) as caught:
        make_plan(parse_spec({"format": "gif"}), few, negotiation=NO_WEBP, limits=limits)
    assert "5 frames" in caught.value.message


def test_disabled_output_codec_is_501() -> None:
    limits = Limits(DecodeLimits(10**9, 1000, disabled=("avif",)), 10**9, 10**9)
    with pytest.raises(AppError) as caught:
        make_plan(parse_spec({"format": "avif"}), info(), negotiation=NO_WEBP, limits=limits)
    assert caught.value.status == 501


@pytest.mark.parametrize(
    ("requested", "webp", "source", "alpha", "expected"),
    [
        ("png", True, "jpeg", False, "png"),
        (None, True, "jpeg", False, "webp"),
        (None, False, "jpeg", False, "jpeg"),
        (None, False, "gif", False, "gif"),
        (None, False, "apng", True, "png"),
        (None, False, "avif", False, "avif"),
        (None, False, "bmp", False, "jpeg"),
        (None, False, "tiff", True, "png"),
        (None, False, "heif", False, "jpeg"),
    ],
)
def test_choose_format(
    requested: OutputFormat | None, webp: bool, source: InputFormat, alpha: bool, expected: str
) -> None:
    same = as_output(source)
    assert choose_format(requested, accepts_webp=webp, same=same, has_alpha=alpha) == expected


@pytest.mark.parametrize(
    ("webp", "source", "alpha", "expected"),
    [
        (True, "jpeg", False, "jpeg"),  # WebP accepted, but the output is too wide for it
        (True, "png", True, "png"),
        (False, "webp", False, "jpeg"),  # a WebP source enlarged past 16383 px
        (True, "webp", True, "png"),
        (False, "bmp", False, "jpeg"),
    ],
)
def test_choose_format_when_webp_cannot_hold_the_output(
    webp: bool, source: InputFormat, alpha: bool, expected: OutputFormat
) -> None:
    same = as_output(source)
    chosen = choose_format(None, accepts_webp=webp, same=same, has_alpha=alpha, webp_fits=False)
    assert chosen == expected


def test_format_bucket_has_three_values_without_an_explicit_format() -> None:
    assert WEBP.bucket(None) == "webp"
    assert NO_WEBP.bucket(None) == "auto"
    assert WEBP.bucket("avif") == "avif"


def test_negotiation_reads_accept_once() -> None:
    assert Negotiation.from_accept("image/avif,image/webp,*/*") == Negotiation(
        webp=True, named=frozenset({"webp", "avif"})
    )
    assert Negotiation.from_accept("*/*") == NO_WEBP
    # A switched-off encoder is not negotiated, but the client still names the format.
    off = Negotiation.from_accept("image/webp", disabled=["webp"])
    assert (off.webp, off.named) == (False, frozenset({"webp"}))


def test_passthrough_only_when_nothing_changes() -> None:
    assert negotiated({}).passthrough
    assert not negotiated({}, negotiation=WEBP).passthrough
    assert not negotiated({"q": "50"}).passthrough
    assert negotiated({"q": "85"}).passthrough
    assert not negotiated({"w": "10"}).passthrough
    assert not negotiated({"blur": "1"}).passthrough
    assert negotiated({}, info(fmt="apng")).passthrough
    assert negotiated({"format": "jpg"}).passthrough


@pytest.mark.parametrize(
    ("query", "source", "negotiation", "fallback"),
    [
        ({}, "jpeg", WEBP, "jpeg"),  # a bigger WebP re-encode: the JPEG is served
        ({"q": "50"}, "jpeg", NO_WEBP, "jpeg"),
        ({"format": "webp"}, "jpeg", WEBP, None),  # asked for WebP explicitly
        ({"w": "10"}, "jpeg", WEBP, None),  # pixels change: the original is not the answer
        ({}, "bmp", WEBP, None),  # browsers cannot show the source
        ({}, "apng", NO_WEBP, "png"),
    ],
)
def test_never_bigger_rule_is_planned(
    query: dict[str, str],
    source: InputFormat,
    negotiation: Negotiation,
    fallback: OutputFormat | None,
) -> None:
    assert negotiated(query, info(fmt=source), negotiation).fallback == fallback


@pytest.mark.parametrize(
    ("requested", "source", "accept", "output", "expected"),
    [
        (None, "jpeg", None, "jpeg", True),
        (None, "png", "image/webp", "webp", True),
        (None, "webp", "image/webp,*/*", "webp", True),
        (None, "webp", "*/*", "webp", True),  # answered as WebP anyway
        (None, "avif", "image/avif,image/webp", "webp", True),
        (None, "avif", "image/webp", "webp", False),  # the client named WebP, not AVIF
        (None, "avif", "*/*", "avif", True),
        (None, "bmp", "*/*", "jpeg", False),
        ("jpeg", "jpeg", None, "jpeg", True),
        ("webp", "jpeg", "image/webp", "webp", False),  # asked for WebP explicitly
    ],
)
def test_may_serve_source(
    requested: OutputFormat | None,
    source: InputFormat,
    accept: str | None,
    output: OutputFormat,
    expected: bool,
) -> None:
    negotiation = Negotiation.from_accept(accept)
    assert may_serve_source(requested, as_output(source), negotiation, output) is expected


@pytest.mark.parametrize(
    ("query", "width", "height", "fits"),
    [
        ({}, 16383, 100, True),
        ({}, 16384, 100, False),
        ({}, 100, 16384, False),
        ({"w": "800"}, 20000, 100, True),
        ({"crop": "16000,10"}, 20000, 100, True),
        ({"rotate": "90"}, 100, 16384, False),
        ({"upscaling": "resampling", "w": "16384"}, 8000, 10, False),
    ],
)
def test_webp_is_negotiated_only_when_it_can_hold_the_output(
    query: dict[str, str], width: int, height: int, fits: bool
) -> None:
    chosen = negotiated(query, info(width, height), WEBP).output
    assert chosen == ("webp" if fits else "jpeg")
