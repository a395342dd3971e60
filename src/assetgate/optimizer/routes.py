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
from types import MappingProxyType
from typing import Final

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive

from assetgate.budget import rate_limited
from assetgate.cache import Cache
from assetgate.errors import AppError
from assetgate.imaging.formats import MEDIA_TYPES
from assetgate.imaging.vips import engine_version
from assetgate.minify.respond import AssetFloor, asset_variant, is_asset
from assetgate.optimizer import results
from assetgate.optimizer.openapi import make_paths
from assetgate.optimizer.params import ALIASES, FILE_PARAM
from assetgate.optimizer.plan import Limits, Negotiation
from assetgate.optimizer.presets import load_presets, transforms
from assetgate.optimizer.queries import Query, QueryReader, query_reader
from assetgate.optimizer.render import Job, Outcome, Probed, prepare, render
from assetgate.optimizer.spec import ImageSpec
from assetgate.optimizer.static import static_variant
from assetgate.optimizer.watermarks import NO_WATERMARKS, Watermarks, fingerprint, parse_watermarks
from assetgate.part import Part, part_state
from assetgate.resources import Resources, resources
from assetgate.serving.answer import AnyVariant, Rendering, Variant, Version, answer
from assetgate.serving.files import Source
from assetgate.serving.prepared import BlockResponse, Prepared
from assetgate.web.cachestatus import HEADER as CACHE_STATUS
from assetgate.web.cachestatus import VALUES as CACHE_VALUES
from assetgate.web.cachestatus import CacheState
from assetgate.web.caching import make_etag
from assetgate.web.http import READ_METHODS, any_method, body_for
from assetgate.web.params import read_str
from assetgate.web.paths import Located, locate
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
            cors={
                "Access-Control-Allow-Origin": settings.cors_origin,
                "Access-Control-Expose-Headers": EXPOSED,
            },
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
    image = None if is_asset(found.real) else query.image
    if image is not None and found.stat.st_size > res.settings.max_source_bytes:
        raise AppError.too_large(
            f"source file is over the limit of {res.settings.max_source_bytes} bytes"
        )
    source = await res.sources.identify(found.real, found.stat)
    if image is not None and state.real_root is None:
        res.mounts.note(found, source)  # a remote copy's fingerprint, for the other nodes
    version = Version(
        found.real, found.stat, source, functools.partial(res.lane.offer, request.scope, found)
    )
    return await answer(request, version, _variant(request, res, state, found, query, image))


def _variant(
    request: Request,
    res: Resources,
    state: OptimizerState,
    found: Located,
    query: Query,
    image: ImageSpec | None,
) -> AnyVariant:
    """What the request asks of the file: a CSS/JS variant, the file as it is, or an image."""
    cache_control = res.settings.cache_control
    if is_asset(found.real):
        floor = AssetFloor(res.asset_lane, res.assets, res.settings.asset_max_bytes)
        accept_encoding = request.headers.get("accept-encoding")
        headers = {**state.cors, "Cache-Control": cache_control}
        return asset_variant(
            floor, found.real, found.stat.st_size, query.asset, accept_encoding, headers
        )
    if image is None:
        return static_variant(found.real, cache_control=cache_control, cors=state.cors)
    negotiation, bucket = _negotiate(request, state, image)
    key = (query.cache_key, bucket)
    return Variant(
        key,
        functools.partial(_image_validators, state, image, cache_control, key),
        Rendering(
            make=_ImageWork(res, state, found, image, negotiation, key),
            body=_outcome_body,
            headers=functools.partial(_outcome_headers, found.stat.st_size),
            cache=state.results,
        ),
    )


def _image_validators(
    state: OptimizerState,
    spec: ImageSpec,
    cache_control: str,
    key: tuple[object, ...],
    source: Source,
) -> Prepared:
    etag = make_etag(state.engine, source.fingerprint, *key)
    headers = _image_headers(etag, source.last_modified, spec, cache_control, state)
    return Prepared.build(etag, source.mtime, headers)


@dataclass(frozen=True, slots=True)
class _ImageWork:
    """One image variant's work, through the gate: the header decides what the render costs in
    memory, so it goes through the door twice. The header of a version is read once; a later
    render of the variant goes straight on."""

    res: Resources
    state: OptimizerState
    found: Located
    spec: ImageSpec
    negotiation: Negotiation
    key: Hashable

    async def __call__(self, source: Source, receive: Receive) -> Outcome:
        gate = self.res.gate
        job = Job.from_settings(
            self.res.settings,
            path=self.found.path,
            size=self.found.stat.st_size,
            spec=self.spec,
            negotiation=self.negotiation,
            limits=self.state.limits,
            watermarks=self.state.watermarks,
        )
        ready = source.recall(self.key, Probed)
        if ready is not None:
            ready = ready.at(job.path)
        else:
            probed = await gate.run(prepare, job, receive=receive)
            if isinstance(probed, Outcome):
                return probed
            if probed.by_name:  # a small file's head (its bytes) is not kept twice
                source.note(self.key, probed)
            ready = probed
        return await gate.run(render, job, ready, cost=ready.cost, receive=receive)


def _outcome_body(outcome: Outcome) -> bytes | None:
    return outcome.body


def _outcome_headers(source_size: int, outcome: Outcome, cache_state: CacheState) -> dict[str, str]:
    """What a rendering adds to the variant's shared headers; a pass-through (the file itself)
    has no ``X-Optimizer-Cache`` (§2.3)."""
    if outcome.body is None:
        return {
            "X-Output-Format": outcome.output,
            "X-Original-Size": str(source_size),
            "X-Optimizer-Status": "passthrough",
            "Content-Type": MEDIA_TYPES[outcome.output],
        }
    return _rendered_headers(source_size, outcome, cache_state)


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
    hit = {CACHE_STATUS: CACHE_VALUES["HIT"]}  # as ``serving.answer`` says it
    prepared = Prepared.build(etag, version.mtime, {**headers, **hit})
    if prepared.matches(request):
        return BlockResponse(304, prepared.not_modified)
    outcome = await state.results.find(etag)
    if outcome is None or outcome.body is None:
        return None
    rendered = _rendered_headers(version.size, outcome, "HIT")
    return Response(body_for(request, outcome.body), headers={**headers, **rendered, **hit})


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


def _rendered_headers(
    source_size: int, outcome: Outcome, cache_state: CacheState
) -> dict[str, str]:
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


def _cors(request: Request) -> Mapping[str, str]:
    state = part_state(request, "optimizer", OptimizerState)
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
