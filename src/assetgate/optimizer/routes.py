"""HTTP edge of the optimizer: ``GET /?file=<path>&...`` and the public form ``GET /<path>?...``.

The route reads like the request's data flow (DESIGN §3): method -> parameters (400) -> safe path
(404; the gate's stat is the only one) -> ETag (over the content fingerprint) -> 304 before any
decoding -> the result cache (``X-Optimizer-Cache``) -> one job through the WorkGate (sniff 415,
header limits 413, codecs 501, render) -> headers. CSS and JavaScript files go to the shared CSS/JS
floor (``minify``). A public URL without any optimizer parameter is a static file. Every method is
routed here so that anything but GET/HEAD/OPTIONS gets our 405 with ``Allow`` (``web.http``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from starlette.requests import Request
from starlette.responses import FileResponse, Response

from assetgate.budget import rate_limited
from assetgate.cache import Cache
from assetgate.errors import AppError
from assetgate.imaging.formats import MEDIA_TYPES
from assetgate.imaging.vips import engine_version
from assetgate.minify.respond import asset_response, is_asset
from assetgate.optimizer import results
from assetgate.optimizer.openapi import make_paths
from assetgate.optimizer.params import FILE_PARAM
from assetgate.optimizer.plan import Limits, Negotiation
from assetgate.optimizer.render import Job, Outcome, process
from assetgate.optimizer.spec import ImageSpec, is_recognised, parse_spec
from assetgate.part import Part, part_state
from assetgate.resources import Resources, resources
from assetgate.web.caching import make_etag, request_is_not_modified, validator_headers
from assetgate.web.http import READ_METHODS, any_method, body_for
from assetgate.web.mediatypes import media_type
from assetgate.web.params import read_str
from assetgate.web.paths import resolve_under
from assetgate.web.savings import savings_headers

RESERVED: Final = ("cache/",)
EXPOSED: Final = (
    "ETag, X-Optimizer-Cache, X-Optimizer-Status, X-Original-Size, X-Compressed-Size, "
    "X-Compression-Ratio, X-Output-Format"
)


@dataclass(frozen=True, slots=True)
class OptimizerState:
    engine: str
    limits: Limits
    cors: Mapping[str, str]
    results: Cache[Outcome] | None  # None: ASSETGATE_RESULT_CACHE_BYTES=0


@asynccontextmanager
async def lifespan(res: Resources) -> AsyncIterator[OptimizerState]:
    settings = res.settings
    cache = None
    if res.results is not None:
        cache = res.cache(
            results.NAME,
            results.OUTCOME,
            memory_bytes=settings.result_cache_memory_bytes,
            ttl=results.keep_for,
            on_disk=True,
        )
    yield OptimizerState(
        # The shrink mode changes JPEG output bytes, so it is part of every image ETag.
        engine=engine_version() + ("/fast-shrink" if settings.fast_shrink else ""),
        limits=Limits(
            decode=res.decode_limits,
            max_upscale_pixels=settings.max_upscale_pixels,
            max_avif_pixels=settings.max_avif_pixels,
        ),
        cors={
            "Access-Control-Allow-Origin": settings.cors_origin,
            "Access-Control-Expose-Headers": EXPOSED,
        },
        results=cache,
    )
    if cache is not None:
        await cache.aclose()


async def optimize_file(request: Request) -> Response:
    """``/?file=<path>&...`` (operation ``optimizeFile``)."""
    # Long or odd paths are the path gate's business (404 like any missing file), not a 400.
    name = read_str(request.query_params, "file", min_len=1, max_len=64 * 1024, required=True)
    assert name is not None
    return await _serve(request, name, static_when_plain=False)


async def public_file(request: Request) -> Response:
    """``/<path>?...``: the same transformation on the public URL of the original file."""
    return await _serve(request, request.path_params["path"], static_when_plain=True)


async def _serve(request: Request, name: str, *, static_when_plain: bool) -> Response:
    res = resources(request)
    state: OptimizerState = part_state(request, "optimizer")
    query = request.query_params
    static = static_when_plain and not is_recognised(query)
    spec = None if static else parse_spec(query)
    found = resolve_under(res.settings.root, name, reserved=RESERVED)
    if found is None:
        raise AppError.not_found()
    path, info = found.path, found.stat
    if is_asset(path):
        return await asset_response(
            request,
            path,
            source_stat=info,
            gate=res.gate,
            cache=res.assets,
            fingerprints=res.fingerprints,
            cache_control=res.settings.cache_control,
            max_bytes=res.settings.asset_max_bytes,
            extra_headers=state.cors,
        )
    if spec is None:
        return _static(request, path, info, res.settings.cache_control, state)
    if info.st_size > res.settings.max_source_bytes:
        raise AppError.too_large(
            f"source file is over the limit of {res.settings.max_source_bytes} bytes"
        )
    negotiation = Negotiation.from_accept(
        request.headers.get("accept"), state.limits.decode.disabled
    )
    try:
        content = await res.fingerprints.of(path, info)
    except OSError:
        raise AppError.not_found() from None
    etag = make_etag(
        state.engine, content or str(info), spec.cache_key(), negotiation.bucket(spec.format)
    )
    headers = {
        **state.cors,
        **validator_headers(etag, info.st_mtime, res.settings.cache_control),
        "X-Content-Type-Options": "nosniff",
    }
    if spec.format is None:
        headers["Vary"] = "Accept"
    if request_is_not_modified(request, etag, info.st_mtime):
        return Response(status_code=304, headers=headers)
    job = _job(path, info, spec, negotiation, res, state)
    if state.results is None or content is None:  # off, or the file is being rewritten
        outcome, cache_state = await res.gate.run(process, job), "BYPASS"
    else:
        outcome, hit = await state.results.get_or_compute(etag, lambda: res.gate.run(process, job))
        cache_state = "HIT" if hit else "MISS"
    if outcome.body is not None:  # a pass-through is the file itself: no cache state (§2.3)
        headers["X-Optimizer-Cache"] = cache_state
    return _answer(request, path, info, outcome, headers)


def _job(
    path: Path,
    info: os.stat_result,
    spec: ImageSpec,
    negotiation: Negotiation,
    res: Resources,
    state: OptimizerState,
) -> Job:
    return Job(
        path=path,
        size=info.st_size,
        spec=spec,
        negotiation=negotiation,
        limits=state.limits,
        webp_effort=res.settings.webp_effort,
        avif_effort=res.settings.avif_effort,
        fast_shrink=res.settings.fast_shrink,
    )


def _answer(
    request: Request,
    path: Path,
    info: os.stat_result,
    outcome: Outcome,
    headers: dict[str, str],
) -> Response:
    content_type = MEDIA_TYPES[outcome.output]
    headers["X-Output-Format"] = outcome.output
    if outcome.body is None:
        headers["X-Original-Size"] = str(info.st_size)
        headers["X-Optimizer-Status"] = "passthrough"
        return FileResponse(path, headers=headers, media_type=content_type, stat_result=info)
    size = len(outcome.body)
    headers.update(savings_headers(info.st_size, size))
    headers["Content-Length"] = str(size)
    return Response(body_for(request, outcome.body), headers=headers, media_type=content_type)


def _static(
    request: Request,
    path: Path,
    info: os.stat_result,
    cache_control: str,
    state: OptimizerState,
) -> Response:
    """A public URL with no optimizer parameter: the file as it is, with validators."""
    etag = make_etag("static", info.st_ino, info.st_size, info.st_mtime_ns)
    headers = {
        **state.cors,
        **validator_headers(etag, info.st_mtime, cache_control),
        "X-Content-Type-Options": "nosniff",
        "X-Optimizer-Status": "passthrough",
        "X-Original-Size": str(info.st_size),
    }
    if request_is_not_modified(request, etag, info.st_mtime):
        return Response(status_code=304, headers=headers)
    return FileResponse(path, headers=headers, media_type=media_type(path.name), stat_result=info)


def _cors(request: Request) -> Mapping[str, str]:
    state: OptimizerState = part_state(request, "optimizer")
    return {"Access-Control-Allow-Origin": state.cors["Access-Control-Allow-Origin"]}


PART = Part(
    name="optimizer",
    routes=[
        any_method("/", rate_limited("optimizer", optimize_file), methods=READ_METHODS, cors=_cors),
        any_method(
            "/{path:path}", rate_limited("optimizer", public_file), methods=READ_METHODS, cors=_cors
        ),
    ],
    openapi=make_paths(FILE_PARAM),
    lifespan=lifespan,
)
