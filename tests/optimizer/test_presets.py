"""Presets and snapped widths, pure: expansion, overrides, snapping, a bad file's one reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from assetgate.errors import AppError
from assetgate.optimizer.presets import expand, load_presets, parse_presets, snap_width
from assetgate.optimizer.spec import parse_spec

PRESETS = parse_presets('{"thumb": {"w": 200, "format": "webp", "flip": true}}')


def test_a_preset_is_its_parameters_in_long_names() -> None:
    assert PRESETS == {"thumb": {"width": "200", "format": "webp", "flip": "true"}}
    spec = parse_spec(expand({"preset": "thumb"}, PRESETS))
    assert spec == parse_spec({"width": "200", "format": "webp", "flip": "true"})


@pytest.mark.parametrize("override", [{"width": "90"}, {"w": "90"}])
def test_explicit_parameters_override_the_preset(override: dict[str, str]) -> None:
    spec = parse_spec(expand({"preset": "thumb", **override}, PRESETS))
    assert (spec.width, spec.format, spec.flip) == (90, "webp", True)


def test_an_unknown_preset_is_a_400_naming_preset() -> None:
    with pytest.raises(AppError) as caught:
        expand({"preset": "huge"}, PRESETS)
    assert (caught.value.status, caught.value.param) == (400, "preset")
    assert "thumb" in caught.value.message


@pytest.mark.parametrize(
    ("requested", "snapped"), [(1, 320), (320, 320), (321, 640), (1000, 1280), (5000, 1920)]
)
def test_widths_snap_up_to_the_next_allowed(requested: int, snapped: int) -> None:
    allowed = (320, 640, 960, 1280, 1920)
    assert snap_width(parse_spec({"width": str(requested)}), allowed).width == snapped


def test_no_allowed_widths_or_no_width_changes_nothing() -> None:
    spec = parse_spec({"width": "333"})
    assert snap_width(spec, ()) is spec
    bare = parse_spec({"height": "50"})
    assert snap_width(bare, (320,)) is bare


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{", "not JSON"),
        ("[1]", "expected a JSON object"),
        ('{"t": 3}', "expected an object of parameters"),
        ('{"t": {"width": "abc"}}', "width: expected"),
        ('{"t": {"colour": "red"}}', "names no optimizer parameter"),
        ('{"t": {"width": 10, "colour": "red"}}', "unknown parameter 'colour'"),
        ('{"t": {"face_crop": 1}}', "face_crop"),
        ('{"a b": {"width": 10}}', "preset name"),
        ('{"t": {"width": [1]}}', "strings, integers or booleans"),
    ],
)
def test_a_bad_preset_file_says_why(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_presets(text)


def test_an_unreadable_file_is_named_by_its_whole_path(tmp_path: Path) -> None:
    """Issue 36: "cannot read presets.json" left the operator guessing which directory."""
    missing = tmp_path / "secret" / "presets.json"
    with pytest.raises(ValueError, match="cannot read ") as caught:
        load_presets(missing)
    assert str(caught.value) == f"cannot read {missing}: No such file or directory"
    assert load_presets(None) == {}


def test_presets_are_accepted_inline_as_in_a_file(tmp_path: Path) -> None:
    text = '{"thumb": {"width": 200, "format": "webp"}}'
    (tmp_path / "presets.json").write_text(text)
    assert load_presets(text) == load_presets(str(tmp_path / "presets.json"))
    assert load_presets(text)["thumb"]["width"] == "200"
