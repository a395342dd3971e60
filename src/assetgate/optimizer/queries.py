"""The optimizer's reading of a query string, remembered per app.

Validating every parameter (the 400s name the bad one) is a third of a cache hit's work, and it
is a pure function of the query string, so the result is kept in a bounded LRU built in the
lifespan. Invalid queries raise every time (exceptions are not remembered).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from starlette.datastructures import QueryParams

from assetgate.minify.spec import AssetSpec, parse_asset_spec
from assetgate.optimizer.params import bare_switches
from assetgate.optimizer.presets import (
    NO_PRESETS,
    PRESET_PARAM,
    Presets,
    expand,
    snap_width,
    transforms,
)
from assetgate.optimizer.spec import ImageSpec, parse_spec
from assetgate.optimizer.vocabulary import NO_AUTO_DEFAULT, AutoQuality

ENTRIES: Final = 4096


@dataclass(frozen=True, slots=True)
class Query:
    image: ImageSpec | None  # None: a public URL without any optimizer parameter (static file)
    cache_key: tuple[object, ...]  # the image spec's canonical key (empty for a static file)
    asset: AssetSpec  # the CSS/JS flags, for when the file turns out to be CSS or JavaScript
    preset: str | None = None  # the ``preset`` named (a cache tag), None for a static file


QueryReader = Callable[[bytes, bool], Query]


def read_query(
    query_string: bytes,
    static_when_plain: bool,
    presets: Presets = NO_PRESETS,
    widths: tuple[int, ...] = (),
    auto: AutoQuality = NO_AUTO_DEFAULT,
) -> Query:
    """Presets expanded, the width snapped and a bare ``quality=auto`` given the server's target
    here, so the ETag's key is what gets rendered."""
    query = QueryParams(bare_switches(query_string.decode("latin-1")))
    if static_when_plain and not transforms(query):
        return Query(None, (), parse_asset_spec(query))
    spec = snap_width(parse_spec(expand(query, presets), auto), widths)
    return Query(spec, spec.cache_key(), parse_asset_spec(query), query.get(PRESET_PARAM))


def query_reader(
    entries: int = ENTRIES,
    presets: Presets = NO_PRESETS,
    widths: tuple[int, ...] = (),
    auto: AutoQuality = NO_AUTO_DEFAULT,
) -> QueryReader:
    read = functools.partial(read_query, presets=presets, widths=widths, auto=auto)
    return functools.lru_cache(maxsize=entries)(read)
