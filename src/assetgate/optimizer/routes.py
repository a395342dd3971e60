"""HTTP edge of the optimizer: ``GET /?file=<path>&...`` and the public form ``GET /<path>?...``.

The route reads like the request's data flow (docs/architecture.md): method -> parameters (400,
read once per query string) -> safe path (404; the gate's stat is the only one) -> the file's
version (content fingerprint, remembered per stat identity) -> ETag and headers, prepared once per
version and variant -> 304 before any decoding -> the result cache (``X-Optimizer-Cache``; a hit is
the variant's prepared header block and the kept bytes) -> one job through the WorkGate (sniff 415,
header limits 413, codecs 501, render) -> headers. CSS and JavaScript files go to the shared CSS/JS
floor (``minify``). A public URL without any optimizer parameter is a static file. Every method is
routed here so that anything but GET/HEAD/OPTIONS gets our 405 with ``Allow`` (``web.http``).

With a bucket, an origin or several mounts (``sources``, docs/sources.md) the path gate is
``Mounts.locate``, which hands back a local copy of the remote file, and an image variant another
node rendered is answered from the shared result store before the source is fetched at all.
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator, Hashable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Final

from starlette.requests import Request
from starlette.responses import FileResponse, Response

from assetgate.cache import Cache
from assetgate.errors import AppError
from assetgate.imaging.formats import MEDIA_TYPES
from assetgate.imaging.vips import engine_version
from assetgate.minify.respond import asset_response, is_asset
from assetgate.optimizer import results
from assetgate.optimizer.openapi import make_paths
from assetgate.optimizer.params import ALIASES, FILE_PARAM
from assetgate.optimizer.plan import Limits, Negotiation
from assetgate.optimizer.presets import load_presets, transforms
from assetgate.optimizer.queries import QueryReader, query_reader
from assetgate.optimizer.render import Job, Outcome, Probed, prepare, render
from assetgate.optimizer.spec import ImageSpec
from assetgate.optimizer.static import VARIANT as STATIC_VARIANT
from assetgate.optimizer.static import static_prepared
from assetgate.optimizer.watermarks import NO_WATERMARKS, Watermarks, fingerprint, parse_watermarks
from assetgate.part import PageLink, Part, part_state
from assetgate.resources import Resources, resources
from assetgate.serving.files import Source, stat_key
from assetgate.serving.hotlane import file_body
from assetgate.serving.prepared import BlockResponse, Prepared
from assetgate.serving.sendfile import send_file
from assetgate.settings import Settings
from assetgate.web.caching import make_etag
from assetgate.web.http import READ_METHODS, body_for
from assetgate.web.params import read_str
from assetgate.web.paths import locate
from assetgate.web.savings import savings_headers
from assetgate.web.signing import SIGNATURE_PARAM, canonical_message, verify

RESERVED: Final = ("cache/",)
#: ``max_bytes`` (extension): ``met``, or ``exceeded`` when even the lowest quality is over.
BUDGET_HEADER: Final = "X-Optimizer-Budget"
PAGES_HINT: Final = "pages for people are under /ui/"
EXPOSED: Final = (
    "ETag, X-Optimizer-Cache, X-Optimizer-Status, X-Original-Size, X-Compressed-Size, "
    "X-Compression-Ratio, X-Output-Format, X-Output-Quality, X-Optimizer-Budget"
)


@dataclass(frozen=True, slots=True)
class OptimizerState:
    engine: str
    limits: Limits
    cors: Mapping[str, str]
    real_root: str | None  # the one directory every path is under (realpath); None: mounts
    read_query: QueryReader
    results: Cache[Outcome] | None  # None: ASSETGATE_RESULT_CACHE_BYTES=0
    signing_keys: tuple[str, ...]
    auto_formats: tuple[str, ...] = ("webp",)  # ASSETGATE_AUTO_FORMATS
    watermarks: Watermarks = field(default_factory=lambda: NO_WATERMARKS)


@asynccontextmanager
async def lifespan(res: Resources) -> AsyncIterator[OptimizerState]:
    settings = res.settings
    # Watermark images are local files under a directory root (docs/optimizer.md "Watermarks").
    watermarks = parse_watermarks(settings.watermarks, os.path.realpath(str(settings.root)))
    cache = None
    if res.results is not None:
        cache = res.cache(
            results.NAME,
            results.OUTCOME,
            memory_bytes=settings.result_cache_memory_bytes,
            ttl=results.keep_for,
            on_disk=True,
            stored=True,
        )
    try:
        yield OptimizerState(
            # The shrink mode changes JPEG output bytes, so it is part of every image ETag.
            # So do the encoders' efforts and the watermarks' images and placements.
            engine=engine_version()
            + ("/fast-shrink" if settings.fast_shrink else "")
            + f"/effort-webp{settings.webp_effort}-avif{settings.avif_effort}"
            + (f"/watermarks-{fingerprint(watermarks)}" if watermarks else ""),
            limits=Limits.from_settings(settings, res.decode_limits),
            cors={**_preflight_cors(settings), "Access-Control-Expose-Headers": EXPOSED},
            real_root=res.mounts.single_root,
            read_query=query_reader(
                presets=load_presets(settings.presets), widths=tuple(settings.allowed_widths)
            ),
            results=cache,
            signing_keys=tuple(settings.signing_keys),
            auto_formats=tuple(settings.auto_formats),
            watermarks=MappingProxyType(watermarks),
        )
    finally:  # also when the app leaves its lifespan with an error
        if cache is not None:
            await cache.aclose()


async def optimize_file(request: Request) -> Response:
    """``/?file=<path>&...`` (operation ``optimizeFile``)."""
    if "file" not in request.query_params:
        raise AppError(400, f"file: required parameter is missing; {PAGES_HINT}", param="file")
    # Odd paths are the path gate's business (404 like any missing file); only one longer than
    # the schema's maxLength (1024 characters) is a 400.
    name = read_str(
        request.query_params, "file", min_len=1, max_len=FILE_PARAM.max_len, required=True
    )
    assert name is not None
    return await _serve(request, name, static_when_plain=False)


async def public_file(request: Request) -> Response:
    """``/<path>?...``: the same transformation on the public URL of the original file."""
    return await _serve(request, request.path_params["path"], static_when_plain=True)


async def _serve(request: Request, name: str, *, static_when_plain: bool) -> Response:
    res = resources(request)
    state = part_state(request, "optimizer", OptimizerState)
    if state.signing_keys:
        _check_signature(request, name, state.signing_keys, static_when_plain)
    query = state.read_query(request.scope["query_string"], static_when_plain)
    if state.real_root is None and query.image is not None and state.results is not None:
        shared = await _shared_answer(request, res, state, name, query.cache_key, query.image)
        if shared is not None:  # rendered by another node: no source fetched, no render
            return shared
    if state.real_root is not None:
        found = locate(state.real_root, name, reserved=RESERVED)
    else:  # a bucket, an origin or several mounts (sources.mounts): the same path rules
        found = await res.mounts.locate(name, reserved=RESERVED)
    if found is None:
        raise AppError.not_found()
    path, info = found.real, found.stat
    if is_asset(path):
        return await asset_response(
            request,
            path,
            source_stat=info,
            lane=res.asset_lane,
            cache=res.assets,
            sources=res.sources,
            cache_control=res.settings.cache_control,
            max_bytes=res.settings.asset_max_bytes,
            extra_headers=state.cors,
            spec=query.asset,
            offer=functools.partial(res.lane.offer, request.scope, found),
        )
    spec = query.image
    if spec is None:
        source = await res.sources.identify(path, info)
        prepared = static_prepared(
            path, source, cache_control=res.settings.cache_control, cors=state.cors
        )
        res.lane.offer(request.scope, found, source, STATIC_VARIANT, file_body)
        return send_file(request, path, info, source, prepared)
    if info.st_size > res.settings.max_source_bytes:
        raise AppError.too_large(
            f"source file is over the limit of {res.settings.max_source_bytes} bytes"
        )
    negotiation, bucket = _negotiate(request, state, spec)
    source = await res.sources.identify(path, info)
    if state.real_root is None:
        res.mounts.note(found, source)  # a remote copy's fingerprint, for the other nodes
    variant = (query.cache_key, bucket)

    def validators(source: Source) -> Prepared:
        etag = make_etag(state.engine, source.fingerprint, *variant)
        headers = _image_headers(
            etag, source.last_modified, spec, res.settings.cache_control, state
        )
        return Prepared.build(etag, source.mtime, headers)

    prepared = source.prepare(variant, validators)
    cache = state.results
    held_body = functools.partial(_held_body, cache)  # a hit's bytes: here and in the hot lane
    res.lane.offer(request.scope, found, source, variant, held_body)
    if prepared.matches(request):
        return BlockResponse(304, prepared.not_modified)
    if prepared.ok is not None:  # the variant was rendered and kept here
        body = held_body(source, prepared)
        if body is not None:
            return BlockResponse(200, prepared.ok, body_for(request, body))
    job = Job.from_settings(
        res.settings,
        path=found.path,
        size=info.st_size,
        spec=spec,
        negotiation=negotiation,
        limits=state.limits,
        watermarks=state.watermarks,
    )

    async def run() -> Outcome:
        # Two trips through the door: the header decides what the render costs in memory. The
        # header of a version is read once; a later render of the variant goes straight on.
        ready = source.recall(variant, Probed)
        if ready is not None:
            ready = ready.at(job.path)
        else:
            probed = await res.gate.run(prepare, job, receive=request.receive)
            if isinstance(probed, Outcome):
                return probed
            if probed.by_name:  # a small file's head (its bytes) is not kept twice
                source.note(variant, probed)
            ready = probed
        return await res.gate.run(render, job, ready, cost=ready.cost, receive=request.receive)

    if cache is None or source.key != stat_key(info):  # off, or the file is being rewritten
        outcome, cache_state = await run(), "BYPASS"
    else:
        outcome, hit = await cache.get_or_compute(prepared.etag, run)
        cache_state = "HIT" if hit else "MISS"
    if outcome.body is None:  # a pass-through is the file itself: no cache state (§2.3)
        return _passthrough(found.path, info, outcome, dict(prepared.headers))
    if cache_state != "BYPASS":  # the next request for this variant is a header-block copy
        source.keep(variant, prepared.with_ok(_rendered_headers(info.st_size, outcome, "HIT")))
    headers = {**prepared.headers, **_rendered_headers(info.st_size, outcome, cache_state)}
    return Response(body_for(request, outcome.body), headers=headers)


async def _shared_answer(
    request: Request,
    res: Resources,
    state: OptimizerState,
    name: str,
    cache_key: Hashable,
    spec: ImageSpec,
) -> Response | None:
    """A variant another node rendered, answered from the result store by the fingerprint it
    shared (``sources.mounts``), before this node fetches the source; None: the long way."""
    assert state.results is not None
    if is_asset(name):
        return None
    version = await res.mounts.version(name, reserved=RESERVED)
    if version is None or version.size > res.settings.max_source_bytes:
        return None
    etag = make_etag(
        state.engine, version.fingerprint, cache_key, _negotiate(request, state, spec)[1]
    )
    headers = _image_headers(etag, version.last_modified, spec, res.settings.cache_control, state)
    prepared = Prepared.build(etag, version.mtime, headers)
    if prepared.matches(request):
        return BlockResponse(304, prepared.not_modified)
    outcome = await state.results.find(etag)
    if outcome is None or outcome.body is None:
        return None
    rendered = _rendered_headers(version.size, outcome, "HIT")
    return Response(body_for(request, outcome.body), headers={**headers, **rendered})


def _negotiate(request: Request, state: OptimizerState, spec: ImageSpec) -> tuple[Negotiation, str]:
    """The output format's negotiation and its bucket (a part of the ETag and the cache key): one
    function, so a node answering from the result store names the variant as the node that
    rendered it did (``ASSETGATE_AUTO_FORMATS`` included)."""
    if spec.info:  # JSON whatever the client accepts: one variant
        return Negotiation(webp=False), "info"
    negotiation = Negotiation.from_accept(
        request.headers.get("accept"), state.limits.decode.disabled, state.auto_formats
    )
    return negotiation, negotiation.bucket(spec.format)


def _held_body(cache: Cache[Outcome] | None, source: Source, prepared: Prepared) -> bytes | None:
    """A variant's rendering while this process holds it (the hot lane's replay of a hit)."""
    held = None if cache is None else cache.get(prepared.etag)
    return None if held is None else held.body


def _check_signature(
    request: Request, name: str, keys: tuple[str, ...], static_when_plain: bool
) -> None:
    """Before any file is looked at: an unsigned request learns nothing and costs nothing.

    A static file (public URL, no optimizer parameter) needs no signature."""
    params = request.query_params
    if static_when_plain and not transforms(params):
        return
    message = canonical_message(name, params.multi_items(), ALIASES)
    if not verify(keys, message, params.get(SIGNATURE_PARAM)):
        raise AppError(
            403, f"{SIGNATURE_PARAM}: missing or wrong URL signature", param=SIGNATURE_PARAM
        )


def _image_headers(
    etag: str, last_modified: str, spec: ImageSpec, cache_control: str, state: OptimizerState
) -> dict[str, str]:
    headers = {
        **state.cors,
        "ETag": etag,
        "Last-Modified": last_modified,
        "Cache-Control": cache_control,
        "X-Content-Type-Options": "nosniff",
    }
    if spec.format is None and not spec.info:
        headers["Vary"] = "Accept"
    return headers


def _passthrough(
    path: Path, info: os.stat_result, outcome: Outcome, headers: dict[str, str]
) -> Response:
    headers["X-Output-Format"] = outcome.output
    headers["X-Original-Size"] = str(info.st_size)
    headers["X-Optimizer-Status"] = "passthrough"
    return FileResponse(
        path, headers=headers, media_type=MEDIA_TYPES[outcome.output], stat_result=info
    )


def _rendered_headers(source_size: int, outcome: Outcome, cache_state: str) -> dict[str, str]:
    """What a rendering adds to the variant's shared headers."""
    assert outcome.body is not None
    size = len(outcome.body)
    if outcome.info:
        return {
            "X-Optimizer-Cache": cache_state,
            "Content-Length": str(size),
            "Content-Type": "application/json",
        }
    headers = {
        "X-Output-Format": outcome.output,
        "X-Optimizer-Cache": cache_state,
        **savings_headers(source_size, size),
        "Content-Length": str(size),
        "Content-Type": MEDIA_TYPES[outcome.output],
    }
    if outcome.quality:  # max_bytes searched the quality (extension)
        headers["X-Output-Quality"] = str(outcome.quality)
        headers[BUDGET_HEADER] = "met" if outcome.budget_met else "exceeded"
    return headers


def _preflight_cors(settings: Settings) -> Mapping[str, str]:
    """The preflight's CORS field; every answer adds the headers a page may read (``EXPOSED``)."""
    return {"Access-Control-Allow-Origin": settings.cors_origin}


def _has_index_page(settings: Settings) -> bool:
    return isinstance(settings.root, Path) and (settings.root / "index.html").is_file()


PART = Part(
    name="optimizer",
    prefixes=("/",),  # the catch-all: every path no other part owns is a file's public URL
    endpoints={"/": optimize_file, "/{path:path}": public_file},
    methods=READ_METHODS,
    budget=True,
    cors=_preflight_cors,
    replayed=True,
    pages=(PageLink("/index.html", "the document root's index page (optimizer)", _has_index_page),),
    openapi=make_paths(FILE_PARAM),
    lifespan=lifespan,
)
