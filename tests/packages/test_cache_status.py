"""``Cache-Status`` (RFC 9211) on the package library's pinned files, through the real app: the
same header and values as the optimizer's (``serving.answer``), and the access line reads it."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pytest

from assetgate.operations.logs import ACCESS_LOGGER, JsonFormatter
from assetgate.settings import Settings
from tests.conftest import app_client
from tests.packages.upstream import Registry

pytestmark = pytest.mark.anyio

HIT = "assetgate; hit"
MISS = "assetgate; fwd=miss; stored"
BYPASS = "assetgate; fwd=bypass"
CSS = b"/* theme */\n.card  {  color : red ;  margin : 0 auto ; }\n" * 30


def cache_lines(caplog: pytest.LogCaptureFixture) -> list[str | None]:
    lines = [json.loads(JsonFormatter().format(r)) for r in caplog.records]
    return [line["cache"] for line in lines if line.get("logger") == ACCESS_LOGGER]


async def test_a_stored_file_is_a_bypass_and_its_304_a_hit(
    pkg_settings: Callable[..., Settings], registry: Registry, caplog: pytest.LogCaptureFixture
) -> None:
    registry.publish("theme", "1.0.0", {"theme.css": CSS})
    url = "/npm/theme@1.0.0/theme.css"
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        async with app_client(pkg_settings()) as client:
            first = await client.get(url)
            again = await client.get(url)
            head = await client.head(url)
            etag = first.headers["etag"]
            not_modified = await client.get(url, headers={"if-none-match": etag})
            # a stored file has no Last-Modified, so If-Modified-Since alone never makes a 304
            since = await client.get(
                url, headers={"if-modified-since": "Fri, 01 Jan 2100 0:0:0 GMT"}
            )
    for response in (first, again, head, since):
        assert response.status_code == 200
        assert response.headers["cache-status"] == BYPASS
        assert "last-modified" not in response.headers
    assert first.content == again.content == since.content == CSS
    assert head.content == b""
    assert not_modified.status_code == 304
    assert not_modified.headers["cache-status"] == HIT
    assert not_modified.headers["etag"] == etag
    assert cache_lines(caplog) == ["BYPASS", "BYPASS", "BYPASS", "HIT", "BYPASS"]


async def test_a_minified_stored_file_is_a_miss_then_a_hit(
    pkg_settings: Callable[..., Settings], registry: Registry, caplog: pytest.LogCaptureFixture
) -> None:
    registry.publish("theme", "1.0.0", {"theme.css": CSS})
    url = "/npm/theme@1.0.0/theme.css?min=1"
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        async with app_client(pkg_settings()) as client:
            miss = await client.get(url)
            hit = await client.get(url)
            not_modified = await client.get(url, headers={"if-none-match": miss.headers["etag"]})
    assert (miss.status_code, hit.status_code, not_modified.status_code) == (200, 200, 304)
    assert (miss.headers["cache-status"], miss.headers["x-asset-cache"]) == (MISS, "miss")
    assert (hit.headers["cache-status"], hit.headers["x-asset-cache"]) == (HIT, "hit")
    assert hit.content == miss.content
    assert len(hit.content) < len(CSS)
    assert not_modified.headers["cache-status"] == HIT
    assert cache_lines(caplog) == ["MISS", "HIT", "HIT"]
