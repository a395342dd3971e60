from __future__ import annotations

import pytest

from assetgate.web.negotiation import accepts, accepts_encoding


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
