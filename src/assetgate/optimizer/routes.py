"""HTTP edge of the optimizer: ``GET /?file=<path>&...`` and the public form ``GET /<path>?...``.

The route reads like the request's data flow (docs/architecture.md): method -> signature (403)
-> parameters (400, read once per query string) -> safe path (404; the gate's stat is the only
one) -> what is asked of the file (``optimizer.variants``: a CSS/JS variant, the file as it is, or
an image variant; 413) -> the file's version (content fingerprint, remembered per stat identity)
-> ``serving.answer``, which does the rest once for every part (validators, the hot lane, 304,
held hit, render through the gate inside the cache, keep). Every method is routed here so that
anything but GET/HEAD/OPTIONS gets our 405 with ``Allow`` (``web.http``).

With a bucket, an origin or several mounts (``sources``, docs/sources.md) the path check is
``Mounts.mount_of`` (no I/O) and ``Mounts.locate``, which hands back a local copy of the remote
file (a ``RemoteCopy``, which the later steps read instead of looking the copy up again); between
the two, an image variant another node rendered is answered from the shared result store before
the source is fetched at all (``variants.shared_answer``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Final

from starlette.requests import Request
from starlette.responses import Response

from assetgate.cache import Cache
from assetgate.errors import AppError
from assetgate.imaging.vips import engine_version
from assetgate.optimizer import result_codec
from assetgate.optimizer.openapi import make_paths
from assetgate.optimizer.params import ALIASES, FILE_PARAM
from assetgate.optimizer.plan import Limits
from assetgate.optimizer.presets import load_presets, transforms
from assetgate.optimizer.queries import QueryReader, query_reader
from assetgate.optimizer.render import Outcome
from assetgate.optimizer.variants import image_ask, shared_answer, variant_for
from assetgate.optimizer.vocabulary import AutoQuality
from assetgate.optimizer.watermark_images import checker
from assetgate.optimizer.watermarks import NO_WATERMARKS, Watermarks, fingerprint, parse_watermarks
from assetgate.part import PageLink, Part, part_state
from assetgate.resources import Resources, resources
from assetgate.serving.answer import FoundFile, answer
from assetgate.serving.tags import Tags, edge_seconds
from assetgate.settings import Settings
from assetgate.sources.copies import RemoteCopy
from assetgate.web.http import READ_METHODS
from assetgate.web.params import read_str
from assetgate.web.paths import clean_relative, locate
from assetgate.web.signing import SIGNATURE_PARAM, require_signature

RESERVED: Final = ("cache/",)
PAGES_HINT: Final = "pages for people are under /ui/"
EXPOSED: Final = (
    "ETag, X-Optimizer-Cache, X-Optimizer-Status, X-Original-Size, X-Compressed-Size, "
    "X-Compression-Ratio, X-Output-Format, X-Output-Quality, X-Output-Score, X-Optimizer-Budget, "
    "Cache-Status"
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
    tag_headers: tuple[str, ...] = ()  # ASSETGATE_CACHE_TAG_HEADERS
    edge_s: int = 0  # the edge's lifetime of an answer (``serving.tags.edge_seconds``)


@asynccontextmanager
async def lifespan(res: Resources) -> AsyncIterator[OptimizerState]:
    settings = res.settings
    # Watermark images are local files under a directory root (docs/optimizer.md "Watermarks").
    watermarks = parse_watermarks(
        settings.watermarks, os.path.realpath(str(settings.root)), checker(res.decode_limits)
    )
    cache = None
    if res.result_disk is not None:
        cache = res.cache(
            result_codec.NAME,
            result_codec.OUTCOME,
            memory_bytes=settings.result_cache_memory_bytes,
            ttl=result_codec.keep_for,
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
                presets=load_presets(settings.presets),
                widths=tuple(settings.allowed_widths),
                auto=AutoQuality.from_settings(settings),
            ),
            results=cache,
            signing_keys=tuple(settings.signing_keys),
            auto_formats=tuple(settings.auto_formats),
            watermarks=MappingProxyType(watermarks),
            tag_headers=tuple(settings.cache_tag_headers),
            edge_s=edge_seconds(settings.edge_revalidate_s, settings.cache_control),
        )
    finally:  # also when the app leaves its lifespan with an error
        if cache is not None:
            await cache.aclose()


async def optimize_file(request: Request) -> Response:
    """``/?file=<path>&...`` (operation ``optimizeFile``)."""
    if "file" not in request.query_params:
        raise AppError(400, f"file: required parameter is missing; {PAGES_HINT}", param="file")
    # Odd paths are the path check's business (404 like any missing file); only one longer than
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
    if state.signing_keys and not (static_when_plain and not transforms(request.query_params)):
        # (a static file, a public URL without any optimizer parameter, needs no signature)
        params = request.query_params
        signature = params.get(SIGNATURE_PARAM)
        require_signature(state.signing_keys, name, params.multi_items(), signature, ALIASES)
    query = state.read_query(request.scope["query_string"], static_when_plain)
    tags = _tags(state, name, query.preset)
    fingerprints = res.mounts.fingerprints  # None: no result store, the nodes share nothing
    mounted = None  # a bucket, an origin or several mounts (sources.mounts): the same path rules
    if state.real_root is None:
        mounted = res.mounts.mount_of(name, reserved=RESERVED)
    # the image variant, worked out once: for another node's rendering and for this one's
    ask = image_ask(request, state, query, None if mounted is None else mounted.shared)
    if state.real_root is not None:
        found = locate(state.real_root, name, reserved=RESERVED)
    elif mounted is None:
        raise AppError.not_found()
    else:
        shared = await shared_answer(request, res, state, mounted, ask, tags)
        if shared is not None:  # rendered by another node: no source fetched, no render
            return shared
        found = await res.mounts.locate(mounted)
    if found is None:
        raise AppError.not_found()
    path = None if tags is None else tags.path
    variant = variant_for(request, res, state, found, query, ask, path)  # 413 before it is read
    version = await res.versions.identify(found.real, found.stat)
    if fingerprints is not None and variant.rendering is not None and isinstance(found, RemoteCopy):
        fingerprints.share(found, version)  # a remote copy's fingerprint, for the other nodes
    offer = functools.partial(res.hot_lane.offer, request.scope, found)
    return await answer(request, FoundFile(found.real, found.stat, version, offer, tags), variant)


def _tags(state: OptimizerState, name: str, preset: str | None) -> Tags | None:
    """The answer's cache tags: the path as its public URL names it (both URL forms alike) and
    the preset; None for a path the path check refuses anyway (a 404 follows)."""
    cleaned = clean_relative(name, reserved=RESERVED)
    if cleaned is None:
        return None
    return Tags("/" + cleaned, "optimizer", preset, headers=state.tag_headers, edge_s=state.edge_s)


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
