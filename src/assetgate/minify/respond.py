"""The HTTP answer for a CSS or JavaScript file: ``?min=1&compress=1&safe=1``.

Shared by the optimizer (document-root files) and the package library (pinned package files), so
both behave the same. Callers have already checked the method and the path's safety; this module
owns everything after that, in the order of a cheap request first:

1. flags (400 naming a bad ``min``/``compress``/``safe``), the caller's one ``stat``, the file's
   version (content fingerprint, remembered per stat identity: ``serving.files``);
2. the plan (transformation and encoding, from the flags and ``Accept-Encoding``); once per
   version and plan: a sniff of the first bytes (binary → 415), the ETag over the content and
   the plan, the header blocks (``serving.prepared``);
3. 304 before any work; nothing asked → the file itself (``X-Optimizer-Status: passthrough``);
4. otherwise the cached rendering (a repeat is a header-block copy and the cached bytes), or one
   render through the CPU gate, then the headers.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import rcssmin
import rjsmin
from starlette.requests import Request
from starlette.responses import Response

from assetgate.cache import Cache
from assetgate.errors import AppError
from assetgate.minify.lane import AssetLane
from assetgate.minify.render import Rendered
from assetgate.minify.sniff import SNIFF_BYTES, looks_binary
from assetgate.minify.spec import MEDIA_TYPES, AssetSpec, kind_of, make_asset_plan, parse_asset_spec
from assetgate.serving.files import Source, Sources
from assetgate.serving.hotlane import BodyOf, Offer, file_body
from assetgate.serving.prepared import BlockResponse, Prepared
from assetgate.serving.sendfile import send_file
from assetgate.web.caching import make_etag
from assetgate.web.savings import savings_headers

log = logging.getLogger("assetgate.minify")

# Part of every ETag: a new minifier or scanner may produce other bytes for the same file.
ENGINE_VERSION: Final = f"assets-1/rjsmin-{rjsmin.__version__}/rcssmin-{rcssmin.__version__}"


def is_asset(path: Path | str) -> bool:
    return kind_of(path) is not None


def _read_head(source: str | Path) -> bytes:
    try:
        with open(source, "rb") as handle:
            return handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise AppError.not_found() from exc


def _stat_regular(source: str | Path) -> os.stat_result:
    try:
        info = os.stat(source)
    except OSError as exc:
        raise AppError.not_found() from exc
    if not stat.S_ISREG(info.st_mode):
        raise AppError.not_found()
    return info


async def asset_response(
    request: Request,
    source: str | Path,
    *,
    source_stat: os.stat_result | None = None,
    lane: AssetLane,
    cache: Cache[Rendered],
    sources: Sources,
    cache_control: str,
    max_bytes: int,
    extra_headers: Mapping[str, str] | None = None,
    spec: AssetSpec | None = None,
    offer: Offer | None = None,
) -> Response:
    """Answer GET or HEAD for the CSS/JS file ``source`` (already resolved and safe).

    ``source_stat``: the path gate's stat of ``source`` when the caller has it (else one is taken);
    ``spec``: the flags, when the caller has read them already; ``offer``: the hot lane's, when
    the caller's answers may be replayed (``serving.hotlane``).
    """
    kind = kind_of(source)
    if kind is None:
        raise AppError.unsupported_media("not a CSS or JavaScript file")
    if spec is None:
        spec = parse_asset_spec(request.query_params)
    info = source_stat if source_stat is not None else _stat_regular(source)
    plan = make_asset_plan(
        spec,
        kind,
        accept_encoding=request.headers.get("accept-encoding"),
        size=info.st_size,
        max_bytes=max_bytes,
    )
    version = await sources.identify(source, info)
    extra = extra_headers or {}
    variant = (plan, cache_control, tuple(extra.items()))

    def validators(version: Source) -> Prepared:
        """Once per file version and variant: the sniff (415), the ETag and the headers."""
        head = version.body[:SNIFF_BYTES] if version.body is not None else _read_head(source)
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
            "Cache-Control": cache_control,
            "X-Content-Type-Options": "nosniff",  # a script is only ever run as what we say it is
        }
        if plan.vary:
            headers["Vary"] = "Accept-Encoding"
        ok = None
        if plan.is_passthrough:
            ok = {
                "X-Optimizer-Status": "passthrough",
                "X-Original-Size": str(version.size),
                "Content-Type": MEDIA_TYPES[kind],
                "Accept-Ranges": "bytes",
                "Content-Length": str(version.size),
            }
            if plan.oversize:
                ok["X-Minify-Skipped"] = "size"
        return Prepared.build(etag, version.mtime, headers, ok)

    prepared = version.prepare(variant, validators)
    held = _held(cache)  # a hit's bytes: here and in the hot lane
    if offer is not None:
        offer(version, variant, file_body if plan.is_passthrough else held)
    if plan.is_passthrough:
        return send_file(request, source, info, version, prepared)
    if prepared.matches(request):
        return BlockResponse(304, prepared.not_modified)
    hit = held(version, prepared) if prepared.ok is not None else None
    if hit is not None and prepared.ok is not None:
        return BlockResponse(200, prepared.ok, b"" if request.method == "HEAD" else hit)

    async def render() -> Rendered:
        rendered = await lane.render(Path(source), plan, max_bytes, request.receive)
        if rendered.note is not None:
            log.warning(
                "asset %s served without %s: %s",
                os.path.basename(source),
                plan.transform,
                rendered.note,
            )
        return rendered

    rendered, hit_lower = await cache.get_or_compute(prepared.etag, render)
    fixed = {
        **_result_headers(rendered),
        "Content-Length": str(len(rendered.body)),
        "Content-Type": MEDIA_TYPES[kind],
    }
    version.keep(variant, prepared.with_ok({**fixed, "X-Asset-Cache": "hit"}))
    headers = {**prepared.headers, **fixed}
    headers["X-Asset-Cache"] = "hit" if hit_lower else "miss"
    body = b"" if request.method == "HEAD" else rendered.body
    return Response(body, headers=headers)


def _held(cache: Cache[Rendered]) -> BodyOf:
    def body(version: Source, prepared: Prepared) -> bytes | None:
        held = cache.get(prepared.etag)
        return None if held is None else held.body

    return body


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
