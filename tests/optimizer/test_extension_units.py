"""The pure parts of the issue-25 extensions: planning, the byte-budget search, the watermark
setting and the negotiation buckets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assetgate.errors import AppError
from assetgate.imaging.formats import SourceInfo
from assetgate.imaging.limits import DecodeLimits
from assetgate.optimizer.bytebudget import MIN_QUALITY, fit_quality
from assetgate.optimizer.plan import Box, Limits, Negotiation, Pad, Plan, make_plan
from assetgate.optimizer.spec import parse_spec
from assetgate.optimizer.watermark_images import checker
from assetgate.optimizer.watermarks import Watermark, fingerprint, parse_watermarks
from assetgate.settings import Settings
from tests.imaging import factory as make

LIMITS = Limits(
    decode=DecodeLimits(max_pixels=50_000_000, max_frames=1000),
    max_upscale_pixels=24_000_000,
    max_avif_pixels=4_000_000,
)
JPEG = SourceInfo(800, 600, 1, False, "jpeg")
CHROME = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"


def plan(query: dict[str, str], source: SourceInfo = JPEG, **kw: object) -> Plan:
    negotiation = kw.pop("negotiation", Negotiation(webp=False))
    assert isinstance(negotiation, Negotiation)
    return make_plan(parse_spec(query), source, negotiation=negotiation, limits=LIMITS, **kw)  # type: ignore[arg-type]


def test_pad_plans_the_canvas_and_the_place() -> None:
    p = plan({"w": "200", "h": "200", "fit": "pad", "background": "ff000080"})
    assert (p.width, p.height) == (200, 200)
    assert p.load_size == (200, 150)
    assert p.pad == Pad(200, 200, 0, 25, (255, 0, 0, 128))
    south = plan({"w": "200", "h": "200", "fit": "pad", "crop_gravity": "south"})
    assert south.pad == Pad(200, 200, 0, 50, (0, 0, 0, 0))
    # transparent padding: an input without an output format of its own becomes PNG, not JPEG
    bmp = plan({"w": "20", "h": "20", "fit": "pad"}, SourceInfo(40, 30, 1, False, "bmp"))
    assert bmp.output == "png"


def test_pad_canvas_counts_against_the_upscale_limit() -> None:
    with pytest.raises(AppError) as caught:
        plan({"w": "6000", "h": "6000", "fit": "pad"})
    assert caught.value.status == 413


def test_cover_and_fill_geometry() -> None:
    cover = plan({"w": "100", "h": "100", "fit": "cover"})
    assert (cover.width, cover.height) == (100, 100)
    assert cover.load_size == (133, 100)
    assert cover.crop == Box(17, 0, 100, 100)  # (100, 0, 600, 600) in the source
    east = plan({"w": "100", "h": "100", "fit": "cover", "crop_gravity": "east"})
    assert east.crop == Box(33, 0, 100, 100)
    small = plan({"w": "1000", "h": "1000", "fit": "cover"})  # no upscaling: the ratio cut only
    assert (small.width, small.height) == (600, 600)
    fill = plan({"w": "100", "h": "300", "fit": "fill"})
    assert (fill.width, fill.height) == (100, 300)
    assert fill.load_size == (100, 300)
    # fit needs both sides: with one it is the spec's rule
    assert plan({"w": "100", "fit": "fill"}).height == 75


def test_smart_gravity_leaves_the_place_to_the_pixels() -> None:
    crop = plan({"crop": "100,100", "crop_gravity": "smart"})
    assert (crop.crop, crop.smart) == (None, (100, 100))
    scaled = plan({"w": "50", "h": "50", "fit": "cover", "crop_gravity": "smart"})
    assert scaled.load_size == (67, 50)
    assert (scaled.crop, scaled.smart) == (None, (50, 50))
    focus = plan({"focus_crop": "400,400,0.5,0.5", "w": "100", "h": "50", "fit": "cover",
                  "crop_gravity": "smart"})  # fmt: skip
    assert focus.crop == Box(50, 25, 100, 100)  # (200, 100, 400, 400) in the source
    assert focus.smart == (100, 50)
    # an animation gets one crop for every frame: the centre
    anim = plan({"crop": "10,10", "crop_gravity": "smart"}, SourceInfo(40, 30, 3, False, "gif"))
    assert (anim.crop, anim.smart) == (Box(15, 10, 10, 10), None)


def test_trim_max_bytes_and_watermark_are_planned() -> None:
    p = plan({"trim": "true", "max_bytes": "5000"})
    assert (p.trim, p.max_bytes, p.passthrough, p.fallback) == (10, 5000, False, None)
    assert plan({"max_bytes": "5000", "format": "png"}).max_bytes is None  # lossless: no search
    budget = plan({"max_bytes": "5000"})
    assert not budget.passthrough  # the source may be over the budget
    assert budget.fallback == "jpeg"  # ... but a re-encode never beats a smaller original
    mark = Watermark(b"png")
    assert plan({"watermark": "logo"}, watermarks={"logo": mark}).watermark is mark
    with pytest.raises(AppError) as caught:
        plan({"watermark": "other"}, watermarks={"logo": mark})
    assert caught.value.param == "watermark"
    assert "logo" in caught.value.message


def test_negotiation_follows_the_operators_order() -> None:
    default = Negotiation.from_accept(CHROME)
    assert (default.preference, default.bucket(None)) == (("webp",), "webp")
    both = Negotiation.from_accept(CHROME, auto=("avif", "webp"))
    assert (both.preference, both.bucket(None)) == (("avif", "webp"), "avif+webp")
    webp_first = Negotiation.from_accept(CHROME, auto=("webp", "avif"))
    assert webp_first.bucket(None) == "webp+avif"
    off = Negotiation.from_accept(CHROME, disabled=["avif"], auto=("avif", "webp"))
    assert off.bucket(None) == "webp"
    assert Negotiation.from_accept("image/png", auto=("avif", "webp")).bucket(None) == "auto"
    assert both.bucket("png") == "png"


def test_avif_is_chosen_within_its_limit_only() -> None:
    both = Negotiation.from_accept(CHROME, auto=("avif", "webp"))
    negotiated = plan({"w": "400"}, negotiation=both)
    # AVIF's own scale: the quality whose SSIMULACRA2 matches WebP's at the requested one.
    assert (negotiated.output, negotiated.quality) == ("avif", 70)
    assert plan({"w": "400", "q": "40"}, negotiation=both).quality == 38
    assert plan({"w": "400", "q": "100"}, negotiation=both).quality == 100
    assert plan({"w": "400", "format": "avif"}, negotiation=both).quality == 85  # as asked
    big = SourceInfo(3000, 2000, 1, False, "jpeg")
    assert plan({}, big, negotiation=both).output == "webp"
    only = Negotiation.from_accept("image/avif", auto=("avif",))
    assert plan({}, big, negotiation=only).output == "jpeg"


def test_settings_read_auto_formats() -> None:
    assert Settings(auto_formats="avif, webp").auto_formats == ["avif", "webp"]  # type: ignore[arg-type]
    assert Settings().auto_formats == ["webp"]
    for bad in ("jxl", "webp,webp"):
        with pytest.raises(ValueError, match="auto_formats"):
            Settings(auto_formats=bad)  # type: ignore[arg-type]


def sizes(table: dict[int, int]) -> tuple[list[int], object]:
    tried: list[int] = []

    def encode(quality: int) -> bytes:
        tried.append(quality)
        return b"x" * table.get(quality, quality * 100)

    return tried, encode


def test_budget_search_finds_the_highest_fitting_quality() -> None:
    tried, encode = sizes({})
    fitted = fit_quality(encode, 85, 5000)  # type: ignore[arg-type]
    assert (fitted.quality, fitted.met, len(fitted.body)) == (50, True, 5000)
    assert fitted.encodes == len(tried) <= 8
    assert tried[0] == 85


def test_budget_search_is_one_encode_when_it_fits() -> None:
    tried, encode = sizes({})
    fitted = fit_quality(encode, 85, 10_000)  # type: ignore[arg-type]
    assert (fitted.quality, fitted.encodes, tried) == (85, 1, [85])


def test_budget_search_reports_the_smallest_when_nothing_fits() -> None:
    tried, encode = sizes({})
    fitted = fit_quality(encode, 85, 10)  # type: ignore[arg-type]
    assert (fitted.quality, fitted.met) == (MIN_QUALITY, False)
    assert len(fitted.body) == MIN_QUALITY * 100
    assert len(tried) <= 8


def test_watermark_setting_is_checked(tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_bytes(make.png(20, 10, alpha=True))
    (tmp_path / "notes.txt").write_text("not an image")
    root = str(tmp_path)
    marks = parse_watermarks(
        json.dumps({"a": {"path": "logo.png", "gravity": "north", "opacity": 0.5}}), root
    )
    assert marks["a"].gravity == "north"
    assert marks["a"].opacity == 0.5
    assert parse_watermarks("", root) == {}
    assert fingerprint(marks) != fingerprint({"a": Watermark(b"other")})
    for text, message in [
        ("{", "not JSON"),
        ("[]", "expected a JSON object"),
        ('{"a b": {"path": "logo.png"}}', "watermark name"),
        ('{"a": {"path": "../etc/passwd"}}', "no such file"),
        ('{"a": {"path": "missing.png"}}', "no such file"),
        ('{"a": {"path": "notes.txt"}}', "expected a PNG"),
        ('{"a": {"path": "logo.png", "gravity": "up"}}', "gravity"),
        ('{"a": {"path": "logo.png", "opacity": 2}}', "opacity"),
        ('{"a": {"path": "logo.png", "size": 0}}', "size"),
        ('{"a": {"path": "logo.png", "colour": 1}}', "unknown key"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_watermarks(text, root)


@pytest.mark.parametrize(
    ("query", "width", "height"),
    [
        ({"dpr": "2", "width": "100"}, 200, None),
        ({"dpr": "1.5", "width": "101", "height": "20"}, 152, 30),
        ({"dpr": "8", "width": "40000"}, 50_000, None),  # capped at the spec's maximum side
        ({"dpr": "3"}, None, None),  # nothing to multiply
    ],
)
def test_dpr_is_folded_into_the_sides(
    query: dict[str, str], width: int | None, height: int | None
) -> None:
    spec = parse_spec(query)
    assert (spec.width, spec.height) == (width, height)


def test_canonical_spec_drops_what_cannot_change_the_answer() -> None:
    assert parse_spec({"fit": "pad", "w": "10"}).cache_key() == parse_spec({"w": "10"}).cache_key()
    assert parse_spec({"info": "1", "w": "10", "blur": "5"}).cache_key() == (
        parse_spec({"info": "1"}).cache_key()
    )
    gravity = {"w": "10", "h": "10", "crop_gravity": "north"}
    assert parse_spec(gravity).cache_key() == parse_spec({"w": "10", "h": "10"}).cache_key()
    assert parse_spec({**gravity, "fit": "cover"}).cache_key() != (
        parse_spec({"w": "10", "h": "10", "fit": "cover"}).cache_key()
    )
    smart = {"aspect_ratio": "1:1", "crop_gravity": "smart"}
    assert parse_spec(smart).cache_key() != parse_spec({"aspect_ratio": "1:1"}).cache_key()
    assert parse_spec({"aspect_ratio": "1:1", "crop_gravity": "north"}).cache_key() == (
        parse_spec({"aspect_ratio": "1:1"}).cache_key()
    )


def test_a_watermark_gets_the_request_limits_at_start(tmp_path: Path) -> None:
    """Issue 35, item 13: only the file size was checked; a 400 MP PNG, a 2,080-scan JPEG and a
    5,000-frame GIF were accepted, each decoded again for every render that asks for it."""
    images = {
        "logo.png": make.png(20, 10, alpha=True),
        "huge.png": make.bomb_png(20_000),  # 400 MP claimed in a few hundred bytes
        "photo.png": make.png(2_100, 2_000),  # 4.2 MP: a photo, not a logo
        "scans.jpg": make.scan_bomb_jpeg(64, 64),
        "frames.gif": make.gif(4, 4, count=12),
    }
    for name, data in images.items():
        (tmp_path / name).write_bytes(data)
    check = checker(DecodeLimits(max_pixels=50_000_000, max_frames=10, max_scans=100))
    root = str(tmp_path)
    assert parse_watermarks('{"a": {"path": "logo.png"}}', root, check)["a"].data
    for name, message in [
        ("huge.png", "over the input limit of 4 MP"),
        ("photo.png", "over the input limit of 4 MP"),
        ("scans.jpg", "scans"),
        ("frames.gif", "12 frames, over the limit of 10"),
    ]:
        with pytest.raises(ValueError, match=rf"watermark 'a': path: .*{message}"):
            parse_watermarks(json.dumps({"a": {"path": name}}), root, check)
