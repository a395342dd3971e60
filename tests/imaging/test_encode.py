"""Encoders: the right format, metadata stripped, alpha flattened for JPEG, animation kept."""

from __future__ import annotations

import pytest
import pyvips

from assetgate.imaging.encode import DEFAULT_EFFORT, encode
from assetgate.imaging.formats import OutputFormat, sniff
from assetgate.imaging.load import open_image
from tests.imaging import factory as make
from tests.imaging.decode_limits import LIMITS

FORMATS: list[OutputFormat] = ["jpeg", "png", "gif", "webp", "avif"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_encode_each_format_strips_metadata(fmt: OutputFormat) -> None:
    image = open_image(make.oriented_jpeg(6), "jpeg", LIMITS)
    body = encode(image, fmt, quality=80)
    assert sniff(body) == fmt
    decoded = make.decode(body)
    assert (decoded.width, decoded.height) == (64, 48)
    for field in ("exif-data", "xmp-data", "iptc-data", "icc-profile-data", "orientation"):
        assert not decoded.get_typeof(field), (fmt, field)
    assert b"Exif" not in body


def test_jpeg_flattens_alpha_onto_white() -> None:
    image = open_image(make.palette_png(), "png", LIMITS)
    decoded = make.decode(encode(image, "jpeg"))
    assert decoded.bands == 3
    assert min(decoded(2, 2)) > 240  # the transparent half is white, not black


@pytest.mark.parametrize("fmt", ["gif", "webp"])
def test_animation_survives_gif_and_webp(fmt: OutputFormat) -> None:
    roll = open_image(make.apng(), "apng", LIMITS, animated=True)
    body = encode(roll, fmt)
    decoded = pyvips.Image.new_from_buffer(body, "", n=-1)
    assert decoded.get("n-pages") == 3
    assert (decoded.width, decoded.get("page-height")) == (40, 30)


@pytest.mark.parametrize("fmt", ["jpeg", "png", "avif"])
def test_still_formats_get_the_first_frame(fmt: OutputFormat) -> None:
    roll = open_image(make.gif(), "gif", LIMITS, animated=True)
    decoded = make.decode(encode(roll, fmt))
    assert (decoded.width, decoded.height) == (40, 30)


def test_quality_changes_jpeg_size() -> None:
    image = open_image(make.noise_jpeg(), "jpeg", LIMITS)
    assert len(encode(image, "jpeg", quality=20)) < len(encode(image, "jpeg", quality=90))


def test_server_efforts_are_the_measured_settings() -> None:
    """WebP at libwebp's default effort (6-7 % fewer bytes than 2 at equal SSIMULACRA2), AVIF
    at a fast one (docs/optimizer.md "Encoders")."""
    assert DEFAULT_EFFORT["webp"] == 4
    assert DEFAULT_EFFORT["avif"] <= 2


def test_jpeg_uses_mozjpegs_table_2_for_the_same_look() -> None:
    """On a real photo: fewer bytes than libjpeg's Annex K table at the same quality number and
    the same SSIMULACRA2 within a point, still baseline (docs/optimizer.md "Encoders")."""
    from pathlib import Path

    import pyvips

    from assetgate.imaging.ssimulacra2 import Reference

    photo = Path(__file__).parent.parent / "data" / "corpus" / "photo-astronaut.jpg"
    image = pyvips.Image.new_from_file(str(photo)).copy_memory()
    now = encode(image, "jpeg", quality=85)
    before = image.jpegsave_buffer(Q=85, optimize_coding=True, keep="none")
    assert b"\xff\xc2" not in now  # baseline: progressive costs the cold render 50 % more
    assert len(now) < len(before)
    reference = Reference(image)
    score_now = reference.score(pyvips.Image.new_from_buffer(now, ""))
    score_before = reference.score(pyvips.Image.new_from_buffer(before, ""))
    assert abs(score_now - score_before) < 1.0
