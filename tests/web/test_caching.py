from __future__ import annotations

from datetime import UTC, datetime

import pytest

from assetgate.web.caching import http_date, is_not_modified, make_etag, parse_http_date

MTIME = datetime(2024, 5, 1, 12, 0, 0, 500_000, tzinfo=UTC)
ETAG = make_etag("file", 123, "w=100")


def test_etag_is_strong_quoted_and_depends_on_every_part() -> None:
    assert ETAG.startswith('"')
    assert ETAG.endswith('"')
    assert make_etag("file", 123, "w=100") == ETAG
    assert make_etag("file", 124, "w=100") != ETAG


@pytest.mark.parametrize(
    ("inm", "ims", "expected"),
    [
        (ETAG, None, True),
        (f'"x", {ETAG}', None, True),
        (f"W/{ETAG}", None, True),
        ("*", None, True),
        ('"other"', None, False),
        # If-None-Match wins even when If-Modified-Since alone would match
        ('"other"', "Wed, 01 May 2024 12:00:00 GMT", False),
        (None, "Wed, 01 May 2024 12:00:00 GMT", True),
        (None, "Wed, 01 May 2024 11:59:59 GMT", False),
        (None, "garbage", False),
        (None, None, False),
    ],
)
def test_is_not_modified(inm: str | None, ims: str | None, expected: bool) -> None:
    assert is_not_modified(inm, ims, etag=ETAG, last_modified=MTIME) is expected


def test_http_date_round_trip() -> None:
    text = http_date(MTIME)
    assert text == "Wed, 01 May 2024 12:00:00 GMT"
    assert parse_http_date(text) == MTIME.replace(microsecond=0)
