"""Magic-byte sniffing: every supported format recognised, everything else refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import get_args

import pytest
import pyvips
from PIL import Image as PILImage

from assetgate.imaging.formats import (
    ANIMATED_FORMATS,
    FORMATS,
    IMAGE_EXTENSIONS,
    INPUT_FORMATS,
    MEDIA_TYPES,
    OUTPUT_FORMATS,
    HeaderCheck,
    as_output,
    codec_disabled,
    sniff,
)
from tests.imaging import factory as make


@pytest.mark.parametrize(
    ("build", "name", "expected"),
    [
        (make.jpeg, "a.jpg", "jpeg"),
        (make.png, "a.png", "png"),
        (make.apng, "a.png", "apng"),
        (lambda: make.gif(count=1), "a.gif", "gif"),
        (make.gif, "a.gif", "gif"),
        (make.webp, "a.webp", "webp"),
        (make.avif, "a.avif", "avif"),
        (make.heic, "a.heic", "heif"),
        (make.bmp, "a.bmp", "bmp"),
        (make.tiff, "a.tiff", "tiff"),
        (make.tga, "a.tga", "tga"),
        (make.ppm, "a.ppm", "pnm"),
        (make.pgm, "a.pgm", "pnm"),
        (make.pbm, "a.pbm", "pnm"),
    ],
)
def test_sniff_by_content(build: Callable[[], bytes], name: str, expected: str) -> None:
    assert sniff(build(), name) == expected


@pytest.mark.parametrize("name", ["a.jpg", "a.png", "photo", None])
def test_sniff_ignores_the_extension(name: str | None) -> None:
    assert sniff(make.png(), name) == "png"
    assert sniff(make.jpeg(), name) == "jpeg"


def test_tga_needs_its_extension_and_a_valid_header() -> None:
    assert sniff(make.tga(), "x.TGA") == "tga"
    assert sniff(make.tga(), "x.bin") is None
    assert sniff(make.tga(), None) is None
    assert sniff(b"\x00" * 18, "x.tga") is None
    assert sniff(b"hello world, this is text", "x.tga") is None


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b"hello",
        b"<svg xmlns='http://www.w3.org/2000/svg'></svg>",
        b"%PDF-1.7\n",
        b"\x00\x00\x01\x00\x01\x00",  # ICO
        b"8BPS\x00\x01",  # PSD
        b"qoif\x00\x00\x00\x10",
        b"BM\x00\x00",  # a truncated BMP header
        b"P7\nWIDTH 1\n",  # PAM is not in the allow-list
        b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom",  # MP4 video
    ],
)
def test_sniff_refuses_everything_else(head: bytes) -> None:
    assert sniff(head, "x.jpg") is None


def test_as_output() -> None:
    assert as_output("apng") == "png"
    assert as_output("jpeg") == "jpeg"
    assert as_output("bmp") is None
    assert as_output("heif") is None


def test_codec_disabled_aliases() -> None:
    assert codec_disabled("jpeg", ["JPG"])
    assert codec_disabled("heif", ["heic"])
    assert codec_disabled("pnm", ["ppm"])
    assert codec_disabled("apng", ["png"])
    assert not codec_disabled("png", ["apng"])
    assert not codec_disabled("webp", [])


# --- the format table ---------------------------------------------------------------------------


def test_the_table_keeps_the_specs_extensions() -> None:
    # Spec §4.1 ``file``: what convert and the listing accept, now the union of the rows.
    assert {
        "jpg", "jpeg", "jpe", "jfif", "png", "apng", "gif", "webp", "avif", "bmp", "dib",
        "tif", "tiff", "tga", "icb", "vda", "vst", "pbm", "pgm", "ppm", "pnm", "heic", "heif",
        "heics", "heifs", "hif",
    } == IMAGE_EXTENSIONS  # fmt: skip


def test_every_format_has_one_row_and_every_output_a_saver() -> None:
    assert set(FORMATS) == set(INPUT_FORMATS)
    for name, row in FORMATS.items():
        assert row.name == name
        assert name in row.codec_names  # the format's own name always switches it off
        assert (row.saver is not None) == (name in OUTPUT_FORMATS)
        assert row.served_as is None or FORMATS[row.served_as].saver is not None
    assert dict(MEDIA_TYPES) == {
        "jpeg": "image/jpeg",
        "png": "image/png",
        "gif": "image/gif",
        "webp": "image/webp",
        "avif": "image/avif",
    }
    assert {"gif", "webp", "apng"} == ANIMATED_FORMATS


def test_the_rows_name_real_loaders_savers_and_checks() -> None:
    # A misspelt name would only surface as a 501 or a KeyError on the first such file.
    PILImage.init()  # Pillow registers its decoders lazily
    for row in FORMATS.values():
        for operation in (row.vips_loader, row.saver and row.saver.operation):
            if operation:
                assert pyvips.type_find("VipsOperation", operation), operation
        if row.pillow_name is not None:
            assert row.pillow_name in PILImage.OPEN, row.pillow_name
        assert row.vips_loader is not None or row.pillow_use == "always"

    assert {check for row in FORMATS.values() for check in row.header_checks} == set(
        get_args(HeaderCheck)
    )
