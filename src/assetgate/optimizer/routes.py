"""HTTP edge of the optimizer: ``GET /?file=<path>&...`` and the public form ``GET /<path>?...``.

The route reads like the request's data flow (DESIGN §3): method -> parameters (400) -> safe path
(404) -> stat -> ETag -> 304 before any decoding -> one job through the WorkGate (sniff 415,
header limits 413, codecs 501, render) -> headers. CSS and JavaScript files go to the shared
CSS/JS floor (``minify``). A public URL without any optimizer parameter is a static file. Every
method is routed here so that anything but GET/HEAD/OPTIONS gets our 405 with ``Allow``.
"""

from __future__ import annotations

import mimetypes
import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from assetgate.budget import rate_limited
from assetgate.errors import AppError
from assetgate.imaging.formats import MEDIA_TYPES
from assetgate.imaging.vips import engine_version
from assetgate.minify.respond import asset_response, is_asset
from assetgate.optimizer.openapi import make_paths
from assetgate.optimizer.plan import Limits, Negotiation
from assetgate.optimizer.render import Job, Outcome, process
from assetgate.optimizer.spec import FILE_PARAM, ImageSpec, is_recognised, parse_spec
from assetgate.part import Part, part_state
from assetgate.resources import Resources, resources
from assetgate.web.caching import make_etag, request_is_not_modified, validator_headers
from assetgate.web.params import read_str
from assetgate.web.paths import resolve_under
from assetgate.web.savings import savings_headers

ALLOW: Final = "GET, HEAD, OPTIONS"
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


@asynccontextmanager
async def lifespan(res: Resources) -> AsyncIterator[OptimizerState]:
    settings = res.settings
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
    )


async def optimize_file(request: Request) -> Response:
    """``/?file=<path>&...`` (operation ``optimizeFile``)."""
    _check_method(request)
    if request.method == "OPTIONS":
        return _options(request)
    # Long or odd paths are the path gate's business (404 like any missing file), not a 400.
    name = read_str(request.query_params, "file", min_len=1, max_len=64 * 1024, required=True)
    assert name is not None
    return await _serve(request, name, static_when_plain=False)


async def public_file(request: Request) -> Response:
    """``/<path>?...``: the same transformation on the public URL of the original file."""
    _check_method(request)
    if request.method == "OPTIONS":
        return _options(request)
    return await _serve(request, request.path_params["path"], static_when_plain=True)


async def _serve(request: Request, name: str, *, static_when_plain: bool) -> Response:
    res = resources(request)
    state: OptimizerState = part_state(request, "optimizer")
    query = request.query_params
    static = static_when_plain and not is_recognised(query)
    spec = None if static else parse_spec(query)
    path = resolve_under(res.settings.root, name, reserved=RESERVED)
    if path is None:
        raise AppError.not_found()
    if is_asset(path):
        return await asset_response(
            request,
            path,
            gate=res.gate,
            cache=res.assets,
            cache_control=res.settings.cache_control,
            max_bytes=res.settings.asset_max_bytes,
            extra_headers=state.cors,
        )
    info = _stat(path)
    if spec is None:
        return _static(request, path, info, res.settings.cache_control, state)
    if info.st_size > res.settings.max_source_bytes:
        raise AppError.too_large(
            f"source file is over the limit of {res.settings.max_source_bytes} bytes"
        )
    negotiation = Negotiation.from_accept(
        request.headers.get("accept"), state.limits.decode.disabled
    )
    etag = make_etag(
        state.engine,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        spec.cache_key(),
        negotiation.bucket(spec.format),
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
    outcome = await res.gate.run(process, _job(path, info, spec, negotiation, res, state))
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
    media_type = MEDIA_TYPES[outcome.output]
    headers["X-Output-Format"] = outcome.output
    if outcome.body is None:
        headers["X-Original-Size"] = str(info.st_size)
        headers["X-Optimizer-Status"] = "passthrough"
        return FileResponse(path, headers=headers, media_type=media_type, stat_result=info)
    size = len(outcome.body)
    headers["X-Optimizer-Cache"] = "BYPASS"
    headers.update(savings_headers(info.st_size, size))
    headers["Content-Length"] = str(size)
    body = b"" if request.method == "HEAD" else outcome.body
    return Response(body, headers=headers, media_type=media_type)


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
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return FileResponse(path, headers=headers, media_type=media_type, stat_result=info)


def _stat(path: Path) -> os.stat_result:
    try:
        info = os.stat(path)
    except OSError:
        raise AppError.not_found() from None
    if not stat.S_ISREG(info.st_mode):
        raise AppError.not_found()
    return info


def _check_method(request: Request) -> None:
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        raise AppError.method_not_allowed(request.method, ALLOW)


def _options(request: Request) -> Response:
    state: OptimizerState = part_state(request, "optimizer")
    requested = request.headers.get("access-control-request-headers")
    return Response(
        status_code=204,
        headers={
            "Allow": ALLOW,
            "Access-Control-Allow-Origin": state.cors["Access-Control-Allow-Origin"],
            "Access-Control-Allow-Methods": ALLOW,
            "Access-Control-Allow-Headers": requested[:512]
            if requested
            else "Accept, If-None-Match, If-Modified-Since, Accept-Encoding",
            "Access-Control-Max-Age": "86400",
        },
    )


class AnyMethod:
    """An ASGI endpoint: Starlette routes every method to it (a plain function would get GET only),
    so the 405 and its ``Allow`` header are ours."""

    def __init__(self, handler: Callable[[Request], Awaitable[Response]]) -> None:
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.handler(Request(scope, receive))
        await response(scope, receive, send)


PART = Part(
    name="optimizer",
    routes=[
        Route("/", AnyMethod(rate_limited("optimizer", optimize_file))),
        Route("/{path:path}", AnyMethod(rate_limited("optimizer", public_file))),
    ],
    openapi=make_paths(FILE_PARAM),
    lifespan=lifespan,
)
