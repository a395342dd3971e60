from __future__ import annotations

import pytest

from assetgate.web.negotiation import accepts, accepts_encoding, edge_bucket, joined_field


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("image/avif,image/webp,*/*", True),
        ("image/webp;q=0.5", True),
        ("image/webp;q=0", False),
        ("*/*", False),
        ("", False),
        (None, False),
    ],
)
def test_accepts_webp_only_when_named(accept: str | None, expected: bool) -> None:
    assert accepts(accept, "image/webp") is expected


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("gzip, deflate, br", True),
        ("gzip;q=0", False),
        ("*", True),
        ("*;q=0", False),
        ("br", False),
        ("identity", False),
        (None, False),
        ("GZIP;q=0.5", True),
    ],
)
def test_accepts_gzip(header: str | None, expected: bool) -> None:
    assert accepts_encoding(header, "gzip") is expected


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        # Issue 35, item 3: a repeated range keeps its lowest weight, whichever comes first.
        ("image/webp;q=0,image/webp", False),
        ("image/webp, image/webp;q=0", False),
        ("image/webp;q=0.5, image/webp;q=0.8", True),
        # A quoted string holds commas and semicolons; a range with another parameter does not
        # apply to our outputs (they carry none).
        ('image/webp;x=";q=0;", image/webp', True),
        ('image/webp;x="a,image/webp"', False),
        ("image/webp;level=1", False),
        # The most specific range decides; wildcards never name a format.
        ("image/*;q=0, image/webp", True),
        ("image/webp;q=0, image/*", False),
        # Only valid qvalues (0..1, three decimals at most) count.
        ("image/webp;q=0.0001", False),
        ("image/webp;q=00", False),
        ("image/webp;q=1.5", False),
        ("image/webp;q=0.001", True),
        ("IMAGE/WEBP ; Q=0.5", True),
        ("image/webpx", False),
    ],
)
def test_accept_is_read_by_rfc_9110(accept: str, expected: bool) -> None:
    assert accepts(accept, "image/webp") is expected


@pytest.mark.parametrize(
    ("accept", "bucket"),
    [
        (None, "auto"),
        ("image/avif,image/webp,*/*;q=0.8", "avif+webp"),
        ("image/avif;q=0,image/webp", "webp"),
        ("image/avif,image/webp;q=0,image/webp", "avif+auto"),
        ("image/png,image/*;q=0.8,*/*;q=0.5", "auto"),
    ],
)
def test_the_edge_bucket_is_the_same_reading(accept: str | None, bucket: str) -> None:
    assert edge_bucket(accept) == bucket


def test_several_lines_are_one_list() -> None:
    assert joined_field(["image/webp;q=0", "image/webp"]) == "image/webp;q=0, image/webp"
    assert joined_field([]) is None
    assert not accepts(joined_field(["image/webp;q=0", "image/webp"]), "image/webp")
