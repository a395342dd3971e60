"""Every row of the spec's parameter table (§4.1): ranges, aliases, defaults, canonical keys."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assetgate.errors import AppError
from assetgate.optimizer.params import OPENAPI_PARAMS, PARAMS, bare_switches
from assetgate.optimizer.spec import (
    Crop,
    Filters,
    FocusCrop,
    ImageSpec,
    is_recognised,
    parse_spec,
)


def parse(**query: str) -> ImageSpec:
    return parse_spec(query)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, ImageSpec()),
        ({"width": "300"}, ImageSpec(width=300)),
        ({"w": "300"}, ImageSpec(width=300)),
        ({"width": "300", "w": "20"}, ImageSpec(width=300)),
        ({"h": "50", "height": "40"}, ImageSpec(height=40)),
        ({"q": "30"}, ImageSpec(quality=30)),
        ({"quality": "70", "q": "30"}, ImageSpec(quality=70)),
        ({"f": "png"}, ImageSpec(format="png")),
        ({"format": "jpg", "f": "png"}, ImageSpec(format="jpeg")),
        ({"format": "JPEG"}, ImageSpec(format="jpeg")),
        ({"width": "1"}, ImageSpec(width=1)),
        ({"width": "50000"}, ImageSpec(width=50000)),
        ({"upscaling": "resampling"}, ImageSpec(upscale=True)),
        ({"upscaling": "off"}, ImageSpec()),
        ({"crop": "10,20"}, ImageSpec(crop=Crop(10, 20))),
        ({"crop": "10,20,3,4"}, ImageSpec(crop=Crop(10, 20, 3, 4))),
        ({"aspect_ratio": "16:9"}, ImageSpec(aspect_ratio=round(16 / 9, 9))),
        ({"aspect_ratio": "1.5:1"}, ImageSpec(aspect_ratio=1.5)),
        # Every ratio of two positive numbers the pattern allows is a usable crop.
        ({"aspect_ratio": "100000:1"}, ImageSpec(aspect_ratio=100000.0)),
        ({"crop": "50000,1"}, ImageSpec(crop=Crop(50000, 1))),
        ({"aspect_ratio": "auto"}, ImageSpec()),
        ({"crop_gravity": "northeast"}, ImageSpec(gravity="northeast")),
        ({"focus_crop": "10,10,5,6"}, ImageSpec(focus=FocusCrop(10, 10, 5, 6, False))),
        ({"focus_crop": "10,10,0.5,0.25"}, ImageSpec(focus=FocusCrop(10, 10, 0.5, 0.25, True))),
        ({"flip": "true", "flop": "1"}, ImageSpec(flip=True, flop=True)),
        ({"flip": "false"}, ImageSpec()),
        ({"rotate": "90"}, ImageSpec(rotate=90)),
        ({"rotate": "-90"}, ImageSpec(rotate=270)),
        ({"rotate": "-270"}, ImageSpec(rotate=90)),
        ({"blur": "100"}, ImageSpec(filters=Filters(blur=100))),
        ({"sharpen": "true"}, ImageSpec(filters=Filters(sharpen=50))),
        ({"sharpen": "false"}, ImageSpec()),
        ({"sharpen": "30"}, ImageSpec(filters=Filters(sharpen=30))),
        ({"brightness": "-100"}, ImageSpec(filters=Filters(brightness=-100))),
        (
            {"gamma": "100", "contrast": "-5", "saturation": "7"},
            ImageSpec(filters=Filters(gamma=100, contrast=-5, saturation=7)),
        ),
        ({"hue": "30"}, ImageSpec(filters=Filters(hue=30))),
        ({"hue": "100"}, ImageSpec()),  # a full turn
        ({"tint": "FF8800"}, ImageSpec(filters=Filters(tint=(255, 136, 0)))),
        ({"sepia": "40"}, ImageSpec(filters=Filters(sepia=40))),
        ({"min": "1", "compress": "1", "safe": "0"}, ImageSpec()),
        ({"v": "123", "utm_source": "x"}, ImageSpec()),  # unknown parameters are ignored
    ],
)
def test_valid_values(query: dict[str, str], expected: ImageSpec) -> None:
    assert parse_spec(query) == expected


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ({"width": "0"}, "width"),
        ({"width": "50001"}, "width"),
        ({"width": "abc"}, "width"),
        ({"width": "1.5"}, "width"),
        ({"w": "-3"}, "w"),
        ({"height": ""}, "height"),
        ({"h": "0"}, "h"),
        ({"upscaling": "on"}, "upscaling"),
        ({"crop": "10"}, "crop"),
        ({"crop": "10,20,3"}, "crop"),
        ({"crop": "0,20"}, "crop"),
        ({"crop": "-1,20"}, "crop"),
        ({"crop": "a,b"}, "crop"),
        ({"aspect_ratio": "16/9"}, "aspect_ratio"),
        ({"aspect_ratio": "0:9"}, "aspect_ratio"),
        ({"aspect_ratio": "1:0"}, "aspect_ratio"),
        ({"aspect_ratio": "0.0:1"}, "aspect_ratio"),
        ({"crop": "0,0"}, "crop"),
        ({"crop": "50001,1"}, "crop"),
        ({"focus_crop": "10,10,5,0.5"}, "focus_crop"),
        ({"crop_gravity": "middle"}, "crop_gravity"),
        ({"focus_crop": "10,10,5"}, "focus_crop"),
        ({"focus_crop": "0,10,5,5"}, "focus_crop"),
        ({"focus_crop": "10,10,1.5,0.5"}, "focus_crop"),
        ({"focus_crop": "10,10,-1,5"}, "focus_crop"),
        ({"flip": "maybe"}, "flip"),
        ({"flip": ""}, "flip"),
        ({"flop": " "}, "flop"),
        ({"sharpen": ""}, "sharpen"),
        ({"flop": "2"}, "flop"),
        ({"rotate": "45"}, "rotate"),
        ({"rotate": "360"}, "rotate"),
        ({"blur": "101"}, "blur"),
        ({"blur": "-1"}, "blur"),
        ({"sharpen": "101"}, "sharpen"),
        ({"sharpen": "sharp"}, "sharpen"),
        ({"brightness": "101"}, "brightness"),
        ({"gamma": "-101"}, "gamma"),
        ({"contrast": "x"}, "contrast"),
        ({"saturation": "200"}, "saturation"),
        ({"hue": "-1"}, "hue"),
        ({"hue": "101"}, "hue"),
        ({"tint": "#ff0000"}, "tint"),
        ({"tint": "ff00"}, "tint"),
        ({"tint": "gg0000"}, "tint"),
        ({"sepia": "101"}, "sepia"),
        ({"quality": "101"}, "quality"),
        ({"q": "-1"}, "q"),
        ({"format": "bmp"}, "format"),
        ({"f": "tiff"}, "f"),
        ({"min": "2"}, "min"),
        ({"compress": "yes"}, "compress"),
        ({"safe": "true"}, "safe"),
        ({"face_crop": "1"}, "face_crop"),
        ({"face_crop": ""}, "face_crop"),
    ],
)
def test_invalid_values_name_the_parameter(query: dict[str, str], param: str) -> None:
    with pytest.raises(AppError) as caught:
        parse_spec(query)
    assert caught.value.status == 400
    assert caught.value.param == param
    assert caught.value.message.startswith(f"{param}:")


def test_message_says_what_was_expected_and_what_came() -> None:
    with pytest.raises(AppError) as caught:
        parse(width="0")
    assert caught.value.message == "width: expected an integer 1..50000, got '0'"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"w": "100"}, {"width": "100"}),
        ({"w": "100", "h": "50"}, {"height": "50", "width": "100"}),
        ({"w": "100"}, {"width": "100", "rotate": "0", "upscaling": "off", "flip": "0"}),
        ({"w": "100"}, {"width": "100", "quality": "85", "blur": "0", "aspect_ratio": "auto"}),
        ({"w": "100"}, {"width": "100", "crop_gravity": "north"}),  # gravity without crop
        ({"crop": "5,5"}, {"crop": "5,5", "crop_gravity": "center"}),
        (
            {"focus_crop": "5,5,1,1"},
            {"focus_crop": "5,5,1,1", "crop": "3,3", "aspect_ratio": "1:1"},
        ),
        ({"crop": "5,5,1,1"}, {"crop": "5,5,1,1", "crop_gravity": "south"}),
        ({"f": "jpg"}, {"format": "jpeg"}),
        ({"sharpen": "true"}, {"sharpen": "50"}),
        ({"rotate": "-90"}, {"rotate": "270"}),
        ({"w": "100", "v": "1"}, {"w": "100", "v": "2"}),
    ],
)
def test_equivalent_queries_share_a_cache_key(
    first: dict[str, str], second: dict[str, str]
) -> None:
    assert parse_spec(first).cache_key() == parse_spec(second).cache_key()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"w": "100"}, {"w": "101"}),
        ({"crop": "5,5"}, {"crop": "5,5", "crop_gravity": "north"}),
        ({"quality": "80"}, {"quality": "81"}),
        ({"format": "png"}, {}),
    ],
)
def test_different_queries_differ(first: dict[str, str], second: dict[str, str]) -> None:
    assert parse_spec(first).cache_key() != parse_spec(second).cache_key()


def test_recognised_parameters() -> None:
    assert not is_recognised({})
    assert not is_recognised({"v": "1"})
    assert is_recognised({"w": "1"})
    assert is_recognised({"min": "1"})
    assert is_recognised({"face_crop": "1"})


def test_openapi_rows_cover_every_parameter_and_alias() -> None:
    names = [p.name for p in OPENAPI_PARAMS]
    assert len(names) == len(set(names))
    spec_names = {
        "width", "w", "height", "h", "upscaling", "crop", "aspect_ratio", "crop_gravity",
        "focus_crop", "flip", "flop", "rotate", "blur", "sharpen", "brightness", "gamma",
        "contrast", "saturation", "hue", "tint", "sepia", "quality", "q", "format", "f", "min",
        "compress", "safe",
    }  # fmt: skip
    assert {p.name for p in OPENAPI_PARAMS if not p.extension} == spec_names
    extensions = {"dpr", "fit", "background", "trim", "max_bytes", "info", "watermark"}
    assert {p.name for p in OPENAPI_PARAMS if p.extension} == extensions
    assert {p.name for p in PARAMS} <= set(names)


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        ("flip", "flip=true"),
        ("w=10&flip&flop=0", "w=10&flip=true&flop=0"),
        ("flip=", "flip="),  # empty stays empty: a 400
        ("sharpen&v", "sharpen=true&v"),  # only switches; an unknown bare name stays as it was
        ("width", "width"),
        ("", ""),
    ],
)
def test_a_bare_switch_reads_as_true(raw: str, read: str) -> None:
    assert bare_switches(raw) == read


def test_the_filter_table_in_the_docs_states_the_parsers_ranges() -> None:
    """docs/optimizer.md once said blur and sharpen run 1..100; the parser takes 0..100."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "optimizer.md").read_text()
    rows = re.findall(r"^\| `([a-z_]+)=[A-Z]+` \(([−-]?[0-9]+)\.\.([0-9]+)", text, re.MULTILINE)
    table = {p.name: (p.low, p.high) for p in PARAMS}
    assert {name for name, _, _ in rows} >= {"blur", "sharpen", "brightness", "hue", "sepia"}
    for name, low, high in rows:
        assert (int(low.replace("−", "-")), int(high)) == table[name], name
