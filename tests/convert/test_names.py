"""Pure rules: output names, the extension gate, Content-Disposition, form options."""

from __future__ import annotations

import pytest

from assetgate.convert.names import (
    has_image_extension,
    make_content_disposition,
    make_entry_names,
    safe_stem,
    shown_name,
)
from assetgate.convert.options import ConvertOptions, parse_options
from assetgate.errors import AppError


@pytest.mark.parametrize(
    ("filename", "stem"),
    [
        ("cat.jpg", "cat"),
        ("holiday photo.JPEG", "holiday photo"),
        ("archive.tar.png", "archive.tar"),
        ("../../etc/passwd.png", "passwd"),
        ("C:\\Users\\me\\Desktop\\shot.png", "shot"),
        ("..", "image"),
        ("...png", "png"),
        (".hidden.png", "hidden"),
        ("", "image"),
        ("a\x00b\nc.png", "a_b_c"),
        ('quote"me<>|?*.gif', "quote_me_____"),
        ("trailing dots... .png", "trailing dots"),
        ("фото.jpg", "фото"),
        ("x" * 300 + ".png", "x" * 100),
        # Windows device names, whatever the case or what follows the first dot (issue 24).
        ("con.png", "_con"),
        ("CON.png", "_CON"),
        ("nul.tar.png", "_nul.tar"),
        ("Aux .png", "_Aux"),
        ("com1.gif", "_com1"),
        ("LPT9.webp", "_LPT9"),
        ("com\u00b9.png", "_com\u00b9"),
        ("console.png", "console"),
        ("com10.png", "com10"),
        ("nullable.png", "nullable"),
    ],
)
def test_safe_stem(filename: str, stem: str) -> None:
    assert safe_stem(filename) == stem


def test_device_names_stay_unique() -> None:
    assert make_entry_names(["con.png", "CON.jpg", "_con.gif"]) == [
        "_con.webp",
        "_CON-1.webp",
        "_con-2.webp",
    ]


def test_entry_names_keep_order_and_are_unique() -> None:
    names = make_entry_names(["a.png", "a.jpg", "b.gif", "A.webp", "sub/a.bmp"])
    assert names == ["a.webp", "a-1.webp", "b.webp", "A-2.webp", "a-3.webp"]


def test_numbered_name_is_left_to_the_upload_that_carries_it() -> None:
    assert make_entry_names(["a.png", "a.jpg", "a-1.png"]) == ["a.webp", "a-2.webp", "a-1.webp"]


def test_entry_names_never_hold_a_directory() -> None:
    for name in make_entry_names(["../x.png", "/abs/y.png", "..\\z.png", "..", "."]):
        assert "/" not in name
        assert "\\" not in name
        assert not name.startswith(".")


@pytest.mark.parametrize(
    ("filename", "ok"),
    [
        ("a.jpg", True), ("a.JPG", True), ("a.jpeg", True), ("a.png", True), ("a.apng", True),
        ("a.gif", True), ("a.webp", True), ("a.avif", True), ("a.bmp", True), ("a.tif", True),
        ("a.tiff", True), ("a.tga", True), ("a.pbm", True), ("a.pgm", True), ("a.ppm", True),
        ("a.heic", True), ("a.heif", True), ("a.txt", False), ("a.svg", False), ("a.pdf", False),
        ("a.png.exe", False), ("png", False), (".png", False), ("a", False), ("", False),
    ],
)  # fmt: skip
def test_extension_gate(filename: str, ok: bool) -> None:
    assert has_image_extension(filename) is ok


def test_shown_name_is_one_bounded_line() -> None:
    assert shown_name("dir/evil\nname\x1b[31m.png") == "evil?name?[31m.png"
    assert len(shown_name("y" * 500)) == 80
    assert shown_name("") == "(unnamed)"


def test_content_disposition() -> None:
    assert make_content_disposition("cat.webp") == 'attachment; filename="cat.webp"'
    assert make_content_disposition("фото.webp") == (
        "attachment; filename=\"____.webp\"; filename*=UTF-8''%D1%84%D0%BE%D1%82%D0%BE.webp"
    )


def test_options_default() -> None:
    assert parse_options({}, effort=4) == ConvertOptions(quality=85, lossless=False, effort=4)


def test_options_read() -> None:
    assert parse_options({"quality": "0", "lossless": "1"}, effort=2) == ConvertOptions(
        quality=0, lossless=True, effort=2
    )
    assert parse_options({"quality": "100", "lossless": "0"}, effort=2).quality == 100


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"quality": "101"}, "quality"),
        ({"quality": "-1"}, "quality"),
        ({"quality": "high"}, "quality"),
        ({"quality": ""}, "quality"),
        ({"lossless": "2"}, "lossless"),
        ({"lossless": "true"}, "lossless"),
    ],
)
def test_bad_option_is_named(fields: dict[str, str], param: str) -> None:
    with pytest.raises(AppError) as caught:
        parse_options(fields, effort=2)
    assert (caught.value.status, caught.value.param) == (400, param)
    assert caught.value.message.startswith(f"{param}: expected")
