"""Issue 35, item 13: a ``Range`` that is not a valid byte-range set is ignored (RFC 9110 §14.2):
the whole file with 200, where Starlette answered ``bytes=5-1`` with a text/plain 400."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from assetgate.settings import Settings
from assetgate.web.ranges import usable_range
from tests.conftest import app_client

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "value",
    ["bytes=0-9", "bytes=5-", "bytes=-10", "Bytes = 0-0, 5-9", "bytes=0-1,,-3", "bytes=5-5"],
)
def test_valid_byte_range_sets_are_acted_on(value: str) -> None:
    assert usable_range(value)


@pytest.mark.parametrize(
    "value",
    [None, "", "bytes=5-1", "bytes=0-9,7-3", "bytes=x", "bytes=", "bytes=-", "items=0-9",
     "bytes 0-9", "bytes=0-9;x", "bytes=1-2-3", "bytes=+1-2"],
)  # fmt: skip
def test_anything_else_is_ignored(value: str | None) -> None:
    assert not usable_range(value)


@pytest.mark.parametrize("size", [1000, 2 * 1024 * 1024])  # sent from memory, and streamed
async def test_an_invalid_range_gets_the_whole_file_and_a_valid_one_its_part(
    make_settings: Callable[..., Settings], docroot: Path, size: int
) -> None:
    data = os.urandom(size)
    (docroot / "blob.bin").write_bytes(data)
    async with app_client(make_settings()) as client:
        ignored = await client.get("/blob.bin", headers={"Range": "bytes=5-1"})
        foreign = await client.get("/blob.bin", headers={"Range": "pages=1-2"})
        part = await client.get("/blob.bin", headers={"Range": "bytes=5-9"})
        past = await client.get("/blob.bin", headers={"Range": f"bytes={size}-"})
    for whole in (ignored, foreign):
        assert whole.status_code == 200
        assert whole.content == data
    assert part.status_code == 206
    assert part.content == data[5:10]
    assert past.status_code == 416
