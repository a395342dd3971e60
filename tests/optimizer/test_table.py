"""Every row of the parameter table changes the cache key and the ETag when its value changes.

The rows are walked, not listed: a parameter added to ``optimizer.params.PARAMS`` is checked here
without anyone remembering to, and its ``example`` is the changed value. A few rows only act in
the company of another (a gravity needs something to place); ``CONTEXT`` gives that company, and
the test fails for a row that changes nothing even in its context.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from assetgate.minify.spec import parse_asset_spec
from assetgate.optimizer.param_row import Param
from assetgate.optimizer.params import OPENAPI_PARAMS, PARAMS
from assetgate.optimizer.spec import parse_spec
from assetgate.web.caching import make_etag
from tests.imaging import factory as make

pytestmark = pytest.mark.anyio

#: Rows that act only together with another parameter.
CONTEXT: Mapping[str, Mapping[str, str]] = {
    "crop_gravity": {"crop": "20,10"},
    "dpr": {"width": "100"},
    "fit": {"width": "100", "height": "100"},
}
IMAGE_ROWS = [param for param in PARAMS if param.image]
ASSET_ROWS = [param for param in PARAMS if not param.image]
OLD = {"accept": "image/jpeg"}


def ids(param: Param) -> str:
    return param.name


def test_every_row_has_an_example_that_parses() -> None:
    for param in OPENAPI_PARAMS:
        assert param.example, f"{param.name}: no example in the table"
        param.read({param.name: param.example})


@pytest.mark.parametrize("param", IMAGE_ROWS, ids=ids)
def test_each_image_row_changes_the_cache_key_and_etag(param: Param) -> None:
    base = dict(CONTEXT.get(param.name, {}))
    changed = {**base, param.name: param.example}
    before, after = parse_spec(base).cache_key(), parse_spec(changed).cache_key()
    assert before != after
    assert make_etag("engine", "source", before, "auto") != make_etag(
        "engine", "source", after, "auto"
    )


@pytest.mark.parametrize("param", [p for p in OPENAPI_PARAMS if p.alias is None], ids=ids)
def test_each_short_name_keys_like_its_long_name(param: Param) -> None:
    long = next((p for p in PARAMS if p.alias == param.name), None)
    if long is None:
        return
    context = dict(CONTEXT.get(long.name, {}))
    short = parse_spec({**context, param.name: param.example}).cache_key()
    assert short == parse_spec({**context, long.name: param.example}).cache_key()


@pytest.mark.parametrize("param", ASSET_ROWS, ids=ids)
def test_each_css_js_row_changes_the_asset_spec(param: Param) -> None:
    assert parse_asset_spec({}) != parse_asset_spec({param.name: param.example})


@pytest.fixture
async def walker(
    custom_client: Callable[..., Any], docroot: Path
) -> AsyncIterator[httpx.AsyncClient]:
    """The app with every named thing a row's example refers to configured (the watermark)."""
    logo = docroot / "marks" / "logo.png"
    logo.parent.mkdir(exist_ok=True)
    logo.write_bytes(make.png(20, 10, alpha=True))
    config = json.dumps({"logo": {"path": "marks/logo.png"}})
    async with custom_client(watermarks=config) as client:
        yield client


@pytest.mark.parametrize("param", IMAGE_ROWS, ids=ids)
async def test_each_image_row_changes_the_served_etag(
    walker: httpx.AsyncClient, param: Param
) -> None:
    """Through the app: the ETag a browser and a CDN see (the result cache is keyed by it)."""
    base = dict(CONTEXT.get(param.name, {})) or {"quality": "85"}
    changed = {**base, param.name: param.example}
    tags = []
    for query in (base, changed):
        response = await walker.head(f"/photo.jpg?{urlencode(query)}", headers=OLD)
        assert response.status_code == 200, query
        tags.append(response.headers["etag"])
    assert tags[0] != tags[1]
