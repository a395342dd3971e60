"""Magic-byte sniffing: every supported format recognised, everything else refused."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from assetgate.imaging.formats import as_output, codec_disabled, sniff
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
