from __future__ import annotations

import pytest

from assetgate.errors import AppError
from assetgate.web.params import read_bool, read_choice, read_flag, read_int, read_str


@pytest.mark.parametrize(
    ("query", "expected"),
    [({}, None), ({"width": "10"}, 10), ({"w": "7"}, 7), ({"width": "10", "w": "7"}, 10)],
)
def test_read_int_alias_loses_to_long_name(query: dict[str, str], expected: int | None) -> None:
    assert read_int(query, "width", alias="w", low=1, high=50_000) == expected


@pytest.mark.parametrize("raw", ["0", "50001", "abc", "1.5", "", "9" * 20, "0x10"])
def test_read_int_rejection_names_parameter_expectation_and_value(raw: str) -> None:
    with pytest.raises(AppError) as caught:
        read_int({"width": raw}, "width", low=1, high=50_000)
    assert caught.value.status == 400
    assert caught.value.param == "width"
    assert caught.value.message.startswith("width: expected an integer 1..50000, got ")


def test_read_bool_and_flag() -> None:
    assert read_bool({"flip": "true"}, "flip") is True
    assert read_bool({"flip": "0"}, "flip") is False
    assert read_flag({"min": "1"}, "min") is True
    with pytest.raises(AppError, match="min: expected 0 or 1"):
        read_flag({"min": "true"}, "min")
    with pytest.raises(AppError, match="flip: expected a boolean"):
        read_bool({"flip": "maybe"}, "flip")


def test_read_choice_lists_the_allowed_values() -> None:
    table = {"jpeg": "jpeg", "jpg": "jpeg"}
    assert read_choice({"f": "JPG"}, "format", table, alias="f") == "jpeg"
    with pytest.raises(AppError, match="format: expected one of jpeg, jpg, got 'tiff'"):
        read_choice({"format": "tiff"}, "format", table)


def test_read_str_required_and_length() -> None:
    with pytest.raises(AppError, match="q: required parameter is missing"):
        read_str({}, "q", required=True)
    with pytest.raises(AppError, match=r"q: expected 2\.\.80 characters"):
        read_str({"q": "a"}, "q", min_len=2, max_len=80)
    assert read_str({"q": "react"}, "q", min_len=2, max_len=80) == "react"


def test_a_rejected_alias_is_named_as_the_client_sent_it() -> None:
    with pytest.raises(AppError, match=r"^w: expected an integer 1\.\.50000, got 'abc'$") as caught:
        read_int({"w": "abc"}, "width", alias="w", low=1, high=50_000)
    assert caught.value.param == "w"
    with pytest.raises(AppError, match=r"^f: expected one of jpeg, jpg, got 'bmp'$"):
        read_choice({"f": "bmp"}, "format", {"jpeg": "jpeg", "jpg": "jpeg"}, alias="f")
    with pytest.raises(AppError, match=r"^fl: expected a boolean"):
        read_bool({"fl": "maybe"}, "flip", alias="fl")
    # The long name wins, so a bad alias beside a good long name is never read.
    assert read_int({"width": "10", "w": "abc"}, "width", alias="w", low=1, high=50_000) == 10
