"""Each pipeline step does what the README says, leaves alpha alone, and keeps frames apart."""

from __future__ import annotations

from typing import Any

import pytest
import pyvips

from assetgate.imaging.formats import SourceInfo
from assetgate.imaging.limits import DecodeLimits
from assetgate.optimizer.pipeline import STEPS, run
from assetgate.optimizer.plan import Limits, Negotiation, Plan, make_plan
from assetgate.optimizer.spec import parse_spec

LIMITS = Limits(DecodeLimits(50_000_000, 1000), 24_000_000, 4_000_000)
ANY = Negotiation(webp=False)


def grey_card(
    width: int = 40, height: int = 30, *, value: int = 100, alpha: bool = False
) -> pyvips.Image:
    base = pyvips.Image.black(width, height).cast("uchar")
    image = base.new_from_image([value, value // 2, value // 4])
    if alpha:
        image = image.bandjoin(128)
    return image.copy(interpretation="srgb")


def plan_for(image: pyvips.Image, **query: str) -> Plan:
    info = SourceInfo(image.width, image.height, 1, image.hasalpha(), "png", 1)
    return make_plan(parse_spec({**query, "format": "png"}), info, negotiation=ANY, limits=LIMITS)


def mean(image: pyvips.Image, band: int = 0) -> float:
    return float(image.extract_band(band).avg())


def test_steps_follow_rule_1() -> None:
    assert [step.__name__ for step in STEPS] == [
        "crop", "resize", "pad", "orient", "blur_sharpen", "tone", "colour", "stamp", "flatten",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("query", "check"),
    [
        ({"brightness": "40"}, lambda before, after: mean(after) > mean(before) + 90),
        ({"brightness": "-40"}, lambda before, after: mean(after) < mean(before) - 90),
        ({"gamma": "50"}, lambda before, after: mean(after) > mean(before)),
        ({"gamma": "-50"}, lambda before, after: mean(after) < mean(before)),
        ({"contrast": "-100"}, lambda before, after: abs(mean(after) - 128) < 1),
        ({"contrast": "100"}, lambda before, after: mean(after) < mean(before)),  # 100 < 128
        ({"saturation": "-100"}, lambda before, after: abs(mean(after, 0) - mean(after, 2)) < 3),
        (
            {"tint": "ff0000"},
            lambda before, after: mean(after, 1) == 0 and mean(after, 0) == mean(before, 0),
        ),
        ({"sepia": "100"}, lambda before, after: mean(after, 0) > mean(after, 1) > mean(after, 2)),
        ({"hue": "50"}, lambda before, after: mean(after, 2) > mean(before, 2)),
    ],
)
def test_tone_and_colour_filters(query: dict[str, str], check: Any) -> None:
    for alpha in (False, True):
        before = grey_card(alpha=alpha)
        after = run(before, plan_for(before, **query))
        assert (after.width, after.height, after.format) == (40, 30, "uchar")
        assert check(before, after), query
        if alpha:
            assert after.bands == 4
            assert mean(after, 3) == 128  # alpha untouched


def test_blur_smooths_and_sharpen_adds_contrast() -> None:
    edge = pyvips.Image.black(40, 30).draw_rect(255, 20, 0, 20, 30, fill=True)
    edge = edge.bandjoin([edge, edge]).cast("uchar").copy(interpretation="srgb")
    blurred = run(edge, plan_for(edge, blur="20"))
    assert 30 < blurred(20, 15)[0] < 225
    sharpened = run(edge, plan_for(edge, sharpen="100"))
    assert sharpened.extract_band(0).deviate() >= edge.extract_band(0).deviate()


def test_blur_does_not_darken_transparent_edges() -> None:
    image = grey_card(value=240, alpha=True)
    image = image.draw_rect([0, 0, 0, 0], 0, 0, 20, 30, fill=True)
    blurred = run(image, plan_for(image, blur="20"))
    visible = blurred.crop(22, 10, 4, 4)
    assert mean(visible, 0) > 200  # premultiplied: no dark halo from the transparent half


def test_grey_input_can_be_tinted() -> None:
    grey = (pyvips.Image.black(10, 10) + 200).cast("uchar").copy(interpretation="b-w")
    tinted = run(grey, plan_for(grey, tint="00ff00", sepia="10"))
    assert tinted.bands == 3


@pytest.mark.parametrize(
    ("query", "top_left"),
    [
        ({"flop": "1"}, "green"),
        ({"flip": "1"}, "blue"),
        ({"rotate": "90"}, "blue"),
        ({"rotate": "180"}, "white"),
        ({"rotate": "270"}, "green"),
        ({"flip": "1", "flop": "1"}, "white"),
    ],
)
def test_orientation_steps(query: dict[str, str], top_left: str) -> None:
    colours = {
        "red": [255, 0, 0],
        "green": [0, 255, 0],
        "blue": [0, 0, 255],
        "white": [255, 255, 255],
    }
    image = pyvips.Image.black(40, 20, bands=3).copy(interpretation="srgb")
    image = image.draw_rect(colours["red"], 0, 0, 20, 10, fill=True)
    image = image.draw_rect(colours["green"], 20, 0, 20, 10, fill=True)
    image = image.draw_rect(colours["blue"], 0, 10, 20, 10, fill=True)
    image = image.draw_rect(colours["white"], 20, 10, 20, 10, fill=True).cast("uchar")
    out = run(image, plan_for(image, **query))
    assert out(1, 1) == colours[top_left]


def test_frames_are_processed_apart() -> None:
    frames = [
        (pyvips.Image.black(20, 10, bands=3) + colour).cast("uchar")
        for colour in ([255, 0, 0], [0, 0, 255])
    ]
    roll = pyvips.Image.arrayjoin(frames, across=1).copy(interpretation="srgb")
    roll.set_type(pyvips.GValue.gint_type, "page-height", 10)
    roll.set_type(pyvips.GValue.array_int_type, "delay", [50, 70])
    info = SourceInfo(20, 10, 2, False, "gif", 1)
    spec = parse_spec({"flip": "1", "rotate": "90", "blur": "5", "format": "gif"})
    plan = make_plan(spec, info, negotiation=ANY, limits=LIMITS)
    out = run(roll, plan)
    assert (out.width, out.height, out.get("page-height")) == (10, 40, 20)
    assert out.get("delay") == [50, 70]
    assert out(5, 2)[0] > 250  # frame 1 still pure red: the blur did not cross frames
    assert out(5, 38)[2] > 250
