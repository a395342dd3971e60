"""A CSS or JavaScript file as a variant: ``?min=1&compress=1&safe=1``.

Shared by the optimizer (document-root files) and the package library (pinned package files), so
both behave the same. The caller has checked the method and the path's safety and identified the
file's version; ``asset_variant`` says what is made of it and ``serving.answer`` does the rest:

1. the plan (transformation and encoding, from the flags and ``Accept-Encoding``); once per
   version and plan: a sniff of the first bytes (binary → 415), the ETag over the content and
   the plan, the header blocks;
2. nothing asked → the file itself (``X-Optimizer-Status: passthrough``);
3. otherwise one render through the CPU gate, inside the asset cache. ``X-Asset-Cache: hit|miss``
   is kept beside ``Cache-Status`` as a deprecated alias (docs/caching.md "Cache-Status").
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import rcssmin
import rjsmin
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive

from assetgate.cache import Cache
from assetgate.errors import AppError
from assetgate.minify.pool import MinifyPool
from assetgate.minify.render import Rendered
from assetgate.minify.sniff import SNIFF_BYTES, looks_binary
from assetgate.minify.spec import (
    MEDIA_TYPES,
    AssetKind,
    AssetPlan,
    AssetSpec,
    kind_of,
    make_asset_plan,
    parse_asset_spec,
)
from assetgate.serving.answer import FoundFile, Rendering, Variant, answer
from assetgate.serving.hotlane import Offer
from assetgate.serving.prepared import Prepared
from assetgate.serving.versions import FileVersion, FileVersions, identify_path
from assetgate.web.cachestatus import CacheState
from assetgate.web.caching import make_etag
from assetgate.web.negotiation import joined_field
from assetgate.web.savings import savings_headers

log = logging.getLogger("assetgate.minify")

# Part of every ETag: a new minifier or scanner may produce other bytes for the same file.
ENGINE_VERSION: Final = f"assets-1/rjsmin-{rjsmin.__version__}/rcssmin-{rcssmin.__version__}"


def is_asset(path: Path | str) -> bool:
    return kind_of(path) is not None


@dataclass(frozen=True, slots=True)
class AssetFloor:
    """What every CSS/JS answer is made with: the minify pool, the asset cache, the size cap."""

    pool: MinifyPool
    cache: Cache[Rendered]
    max_bytes: int


def asset_variant(
    floor: AssetFloor,
    path: str | Path,
    size: int,
    spec: AssetSpec,
    accept_encoding: str | None,
    headers: Mapping[str, str],
) -> Variant[Rendered]:
    """What ``spec`` and ``Accept-Encoding`` ask of the CSS/JS file ``path`` (``size`` bytes by
    the caller's stat); ``headers``: the caller's own (Cache-Control, CORS), in every answer."""
    kind = kind_of(path)
    if kind is None:
        raise AppError.unsupported_media("not a CSS or JavaScript file")
    plan = make_asset_plan(
        spec, kind, accept_encoding=accept_encoding, size=size, max_bytes=floor.max_bytes
    )
    validators = functools.partial(_validators, path, plan, floor.max_bytes, headers)
    key = (plan, tuple(headers.items()))
    if plan.is_passthrough:
        return Variant(key, validators)
    rendering = Rendering(
        make=functools.partial(_render, floor, Path(path), plan),
        body=_body,
        headers=functools.partial(_rendered_headers, kind),
        cache=floor.cache,
    )
    return Variant(key, validators, rendering)


async def asset_response(
    request: Request,
    source: str | Path,
    *,
    source_stat: os.stat_result | None = None,
    pool: MinifyPool,
    cache: Cache[Rendered],
    versions: FileVersions,
    cache_control: str,
    max_bytes: int,
    extra_headers: Mapping[str, str] | None = None,
    spec: AssetSpec | None = None,
    offer: Offer | None = None,
) -> Response:
    """GET or HEAD for the CSS/JS file ``source`` (already resolved and safe), for a caller that
    has not identified its version (a stat is taken when ``source_stat`` is None): the tests' own
    app and ``bench/minify.py``; the parts build ``asset_variant`` themselves."""
    if source_stat is None:
        info, version = await identify_path(versions, source)
    else:
        info, version = source_stat, await versions.identify(source, source_stat)
    variant = asset_variant(
        AssetFloor(pool, cache, max_bytes),
        source,
        info.st_size,
        spec if spec is not None else parse_asset_spec(request.query_params),
        joined_field(request.headers.getlist("accept-encoding")),
        {**(extra_headers or {}), "Cache-Control": cache_control},
    )
    return await answer(request, FoundFile(source, info, version, offer), variant)


def _validators(
    path: str | Path,
    plan: AssetPlan,
    max_bytes: int,
    extra: Mapping[str, str],
    version: FileVersion,
) -> Prepared:
    """Once per file version and variant: the sniff (415), the ETag and the headers."""
    head = version.body[:SNIFF_BYTES] if version.body is not None else _read_head(path)
    if looks_binary(head):
        raise AppError.unsupported_media("the file is not CSS or JavaScript text")
    if plan.oversize:
        log.info(
            "asset served unminified: %s bytes is over the %s byte cap", version.size, max_bytes
        )
    etag = make_etag(ENGINE_VERSION, version.fingerprint, plan.transform, plan.encoding)
    headers = {
        **extra,
        "ETag": etag,
        "Last-Modified": version.last_modified,
        "X-Content-Type-Options": "nosniff",  # a script is only ever run as what we say it is
    }
    if plan.vary:
        headers["Vary"] = "Accept-Encoding"
    if not plan.is_passthrough:
        return Prepared.build(etag, version.mtime, headers)
    ok = {
        "X-Optimizer-Status": "passthrough",
        "X-Original-Size": str(version.size),
        "Content-Type": MEDIA_TYPES[plan.kind],
        "Accept-Ranges": "bytes",
        "Content-Length": str(version.size),
    }
    if plan.oversize:
        ok["X-Minify-Skipped"] = "size"
    return Prepared.build(etag, version.mtime, headers, ok)


async def _render(
    floor: AssetFloor, path: Path, plan: AssetPlan, version: FileVersion, receive: Receive
) -> Rendered:
    rendered = await floor.pool.render(path, plan, floor.max_bytes, receive)
    if rendered.note is not None:
        log.warning("asset %s served without %s: %s", path.name, plan.transform, rendered.note)
    return rendered


def _body(rendered: Rendered) -> bytes:
    return rendered.body


def _rendered_headers(kind: AssetKind, rendered: Rendered, state: CacheState) -> dict[str, str]:
    return {
        **_result_headers(rendered),
        "Content-Length": str(len(rendered.body)),
        "Content-Type": MEDIA_TYPES[kind],
        "X-Asset-Cache": "hit" if state == "HIT" else "miss",  # deprecated: Cache-Status says it
    }


def _read_head(source: str | Path) -> bytes:
    try:
        with open(source, "rb") as handle:
            return handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise AppError.not_found() from exc


def _result_headers(rendered: Rendered) -> dict[str, str]:
    if rendered.unchanged:
        headers = {
            "X-Optimizer-Status": "passthrough",
            "X-Original-Size": str(rendered.original_size),
        }
        if rendered.skipped is not None:
            headers["X-Minify-Skipped"] = rendered.skipped
        return headers
    headers = savings_headers(rendered.original_size, len(rendered.body))
    if rendered.encoding == "gzip":
        headers["Content-Encoding"] = "gzip"
    if rendered.skipped is not None:
        headers["X-Minify-Skipped"] = rendered.skipped
    return headers
