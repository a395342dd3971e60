"""``Cache-Status`` (RFC 9211) through the real app: one header for the optimizer's images and
static files and for CSS/JS (``serving.answer``), and the access line's ``cache`` read from it."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from assetgate.operations.logs import ACCESS_LOGGER, JsonFormatter
from assetgate.settings import Settings
from tests.conftest import app_client
from tests.imaging import factory as make

pytestmark = pytest.mark.anyio

HIT = "assetgate; hit"
MISS = "assetgate; fwd=miss; stored"
BYPASS = "assetgate; fwd=bypass"
CSS = b"/* c */\nbody {\n  color : red ;\n}\n" * 20
JPEG = {"accept": "image/jpeg"}


@pytest.fixture
def files(docroot: Path) -> Path:
    (docroot / "photo.jpg").write_bytes(make.jpeg(120, 90))
    (docroot / "site.css").write_bytes(CSS)
    return docroot


def cache_lines(caplog: pytest.LogCaptureFixture) -> list[str | None]:
    lines = [json.loads(JsonFormatter().format(r)) for r in caplog.records]
    return [line["cache"] for line in lines if line.get("logger") == ACCESS_LOGGER]


async def test_image_miss_hit_and_304(
    files: Path, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    url = "/photo.jpg?w=50&format=jpeg"
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        async with app_client(settings) as client:
            miss = await client.get(url)
            hit = await client.get(url)
            head = await client.head(url)
            etag = {"if-none-match": miss.headers["etag"]}
            not_modified = await client.get(url, headers=etag)
    assert (miss.status_code, hit.status_code, head.status_code) == (200, 200, 200)
    assert (miss.headers["cache-status"], miss.headers["x-optimizer-cache"]) == (MISS, "MISS")
    assert (hit.headers["cache-status"], hit.headers["x-optimizer-cache"]) == (HIT, "HIT")
    assert (head.headers["cache-status"], head.content) == (HIT, b"")
    assert hit.content == miss.content
    assert not_modified.status_code == 304
    assert not_modified.headers["cache-status"] == HIT
    assert "x-optimizer-cache" not in not_modified.headers
    assert cache_lines(caplog) == ["MISS", "HIT", "HIT", "HIT"]


async def test_image_with_the_result_cache_off_is_a_bypass(
    files: Path, make_settings: Callable[..., Settings], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        async with app_client(make_settings(result_cache_bytes=0)) as client:
            answers = [await client.get("/photo.jpg?w=50", headers=JPEG) for _ in range(2)]
    for response in answers:
        assert response.status_code == 200
        assert response.headers["content-type"] == "image/jpeg"
        assert response.headers["cache-status"] == BYPASS
        assert response.headers["x-optimizer-cache"] == "BYPASS"
    assert cache_lines(caplog) == ["BYPASS", "BYPASS"]


async def test_the_file_as_it_is_is_a_bypass_and_its_304_a_hit(
    files: Path, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        async with app_client(settings) as client:
            static = await client.get("/photo.jpg")
            passthrough = await client.get("/photo.jpg?format=jpeg")  # nothing to change
            plain_css = await client.get("/site.css")
            not_modified = await client.get(
                "/photo.jpg", headers={"if-none-match": static.headers["etag"]}
            )
    for response in (static, passthrough, plain_css):
        assert response.status_code == 200
        assert response.headers["cache-status"] == BYPASS
        assert response.headers["x-optimizer-status"] == "passthrough"
        assert "x-optimizer-cache" not in response.headers  # spec §2.3: omitted on pass-through
    assert static.content == passthrough.content == (files / "photo.jpg").read_bytes()
    assert plain_css.content == CSS
    assert not_modified.status_code == 304
    assert not_modified.headers["cache-status"] == HIT
    assert cache_lines(caplog) == ["BYPASS", "BYPASS", "BYPASS", "HIT"]


async def test_css_miss_hit_and_304(
    files: Path, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    url = "/site.css?min=1"
    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        async with app_client(settings) as client:
            miss = await client.get(url)
            hit = await client.get(url)
            not_modified = await client.get(url, headers={"if-none-match": miss.headers["etag"]})
    assert (miss.status_code, hit.status_code, not_modified.status_code) == (200, 200, 304)
    assert (miss.headers["cache-status"], miss.headers["x-asset-cache"]) == (MISS, "miss")
    assert (hit.headers["cache-status"], hit.headers["x-asset-cache"]) == (HIT, "hit")
    assert len(hit.content) < len(CSS)
    assert hit.content == miss.content
    assert not_modified.headers["cache-status"] == HIT
    assert "x-optimizer-cache" not in miss.headers  # the optimizer's own header is for images
    assert cache_lines(caplog) == ["MISS", "HIT", "HIT"]
