"""What the optimizer makes of a file it found: a ``serving.answer.Variant``.

A CSS or JavaScript file goes to the CSS/JS floor (``minify.respond``); a public URL without any
optimizer parameter is the file as it is (``optimizer.static``); anything else is an image
variant: its key is the spec's canonical key and the negotiated format's bucket, its ETag covers
the engine, the content fingerprint and that key, and its rendering is one job through the work
gate (sniff 415, header limits 413, codecs 501, render) inside the result cache, which answers
``X-Optimizer-Cache: HIT|MISS|BYPASS`` (docs/interfaces.md §2.3) beside ``Cache-Status``.

With a bucket, an origin or several mounts, an image variant another node rendered is answered
from the shared result store by the fingerprint that node shared, before the source is fetched
(``shared_answer``, served by ``serving.answer.answer_stored``); it is the same image variant
(``image_variant``), built from the shared version's size instead of the file's. The ETag needs
that fingerprint, so the node that renders a variant of a remote copy also stores it under a
second name that needs none, its alias "by source" (``variant_alias``: the engine, the object's
source-cache ident, the variant's key), holding the ETag it was rendered under. Node B starts the
alias's read, then reads the fingerprint: both at once, one round trip; the alias is served only
when the ETag inside is the one the fingerprint gives (docs/sources.md).

What the request asks of an image, known before the file is (``ImageAsk``: the negotiation, the
variant's key and alias), is worked out once and serves both the shared answer and the render.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive

from assetgate.cache import Cache
from assetgate.errors import AppError
from assetgate.imaging.formats import MEDIA_TYPES
from assetgate.minify.respond import AssetFloor, asset_variant, is_asset
from assetgate.optimizer.plan import Limits, Negotiation
from assetgate.optimizer.queries import Query
from assetgate.optimizer.render import Job, Outcome, Probed, prepare, render
from assetgate.optimizer.spec import ImageSpec
from assetgate.optimizer.static import static_variant
from assetgate.optimizer.watermarks import Watermarks
from assetgate.resources import Resources
from assetgate.serving.answer import AnyVariant, Rendering, Variant, answer_stored
from assetgate.serving.prepared import Prepared
from assetgate.serving.tags import Tags
from assetgate.serving.versions import FileVersion, stat_key
from assetgate.sources.mounts import MountedPath
from assetgate.web.cachestatus import CacheState
from assetgate.web.caching import make_etag
from assetgate.web.negotiation import joined_field
from assetgate.web.paths import Located
from assetgate.web.savings import savings_headers

#: ``max_bytes`` (extension): ``met``, or ``exceeded`` when even the lowest quality is over.
BUDGET_HEADER: Final = "X-Optimizer-Budget"
#: ``quality=auto`` (extension): the SSIMULACRA2 score of the answer against its lossless render.
SCORE_HEADER: Final = "X-Output-Score"

#: An image variant's key among its version's answers: the spec's canonical key, the format bucket.
VariantKey = tuple[Hashable, str]


class Conditions(Protocol):
    """What of the part's state decides a variant (``optimizer.routes.OptimizerState``)."""

    @property
    def engine(self) -> str: ...  # codec versions and encoder knobs: part of every image ETag
    @property
    def limits(self) -> Limits: ...
    @property
    def cors(self) -> Mapping[str, str]: ...
    @property
    def results(self) -> Cache[Outcome] | None: ...
    @property
    def auto_formats(self) -> tuple[str, ...]: ...
    @property
    def watermarks(self) -> Watermarks: ...


@dataclass(frozen=True, slots=True)
class ImageAsk:
    """What the request asks of an image before the file is known: worked out once per request,
    for the shared answer and the render alike."""

    spec: ImageSpec
    negotiation: Negotiation
    key: VariantKey  # the spec's canonical key and the negotiated format's bucket
    alias: str | None = None  # its name "by source" (``variant_alias``); None: nothing shared


def image_ask(
    request: Request, conditions: Conditions, query: Query, ident: str | None = None
) -> ImageAsk | None:
    """The image variant ``query`` asks for, or None when it asks for none. ``ident``: the remote
    object's source-cache ident when the nodes share renderings (its alias is named then)."""
    spec = query.image
    if spec is None:
        return None
    negotiation, bucket = negotiate(request, conditions, spec)
    key = (query.cache_key, bucket)
    alias = None
    if ident is not None and conditions.results is not None:
        alias = variant_alias(conditions.engine, ident, key)
    return ImageAsk(spec, negotiation, key, alias)


def variant_for(
    request: Request,
    res: Resources,
    conditions: Conditions,
    found: Located,
    query: Query,
    ask: ImageAsk | None,
    path: str | None = None,
) -> AnyVariant:
    """What the request asks of the file ``found``; 413 for an image source over the limit.
    ``ask``: the image variant the query names (``image_ask``, worked out before the file was
    found); ``path``: its public path, under which a rendering is entered in the purge index."""
    settings = res.settings
    if is_asset(found.real):
        floor = AssetFloor(res.minify_pool, res.assets, settings.asset_max_bytes)
        headers = {**conditions.cors, "Cache-Control": settings.cache_control}
        accept_encoding = joined_field(request.headers.getlist("accept-encoding"))
        return asset_variant(
            floor, found.real, found.stat.st_size, query.asset, accept_encoding, headers
        )
    if ask is None:
        return static_variant(
            found.real, cache_control=settings.cache_control, cors=conditions.cors
        )
    if found.stat.st_size > settings.max_source_bytes:
        raise AppError.too_large(
            f"source file is over the limit of {settings.max_source_bytes} bytes"
        )
    work = _ImageWork(res, conditions, found, ask, path)
    return image_variant(conditions, ask, res.settings.cache_control, found.stat.st_size, work)


def image_variant(
    conditions: Conditions,
    ask: ImageAsk,
    cache_control: str,
    source_size: int,
    make: Callable[[FileVersion, Receive], Awaitable[Outcome]],
) -> Variant[Outcome]:
    """The image variant ``ask`` names, of a source of ``source_size`` bytes, rendered by
    ``make``: one naming (key, ETag, headers) for the render and the shared answer."""
    validators = functools.partial(_image_validators, conditions, ask.spec, cache_control, ask.key)
    headers = functools.partial(_outcome_headers, source_size)
    return Variant(ask.key, validators, Rendering(make, _outcome_body, headers, conditions.results))


async def shared_answer(
    request: Request,
    res: Resources,
    conditions: Conditions,
    mounted: MountedPath,
    ask: ImageAsk | None,
    tags: Tags | None = None,
) -> Response | None:
    """An image variant another node rendered, answered from the result store by the fingerprint
    it shared for the remote object ``mounted`` names, before this node fetches the source; None:
    the long way (not an image variant, nothing shared, a current copy here, not stored).

    The variant's alias is read while the fingerprint is (not for a conditional request: a 304
    needs no variant); the read is cancelled whenever it is not used."""
    results, fingerprints, ident = conditions.results, res.mounts.fingerprints, mounted.shared
    if ask is None or ask.alias is None or results is None or fingerprints is None:
        return None
    if ident is None or not mounted.ask_others or is_asset(mounted.key):
        return None
    early = None if _conditional(request) else results.prefetch(ask.alias)
    try:
        version = await fingerprints.read(ident)
        if version is None or version.size > res.settings.max_source_bytes:
            return None
        cache_control = res.settings.cache_control
        variant = image_variant(conditions, ask, cache_control, version.size, _rendered_elsewhere)
        find = functools.partial(results.find, early=early)
        return await answer_stored(request, version, variant, find, tags)
    finally:
        if early is not None:
            early.cancel()


async def _rendered_elsewhere(source: FileVersion, receive: Receive) -> Outcome:
    """The shared answer's rendering: made by the node that holds the file, never here
    (``answer_stored`` only reads it)."""
    raise RuntimeError("a shared answer is read from the result store, never rendered here")


def negotiate(request: Request, conditions: Conditions, spec: ImageSpec) -> tuple[Negotiation, str]:
    """The output format's negotiation and its bucket (a part of the ETag and the cache key): one
    function, so a node answering from the result store names the variant as the node that
    rendered it did (``ASSETGATE_AUTO_FORMATS`` included)."""
    if spec.info:  # JSON whatever the client accepts: one variant
        return Negotiation(webp=False), "info"
    negotiation = _negotiation(
        joined_field(request.headers.getlist("accept")),
        conditions.limits.decode.disabled,
        conditions.auto_formats,
    )
    return negotiation, negotiation.bucket(spec.format)


@functools.lru_cache(maxsize=256)
def _negotiation(
    accept: str | None, disabled: tuple[str, ...], auto: tuple[str, ...]
) -> Negotiation:
    """``Negotiation.from_accept``, remembered: browsers send a handful of ``Accept`` values, each
    parsed once rather than per request (~8 k instructions); the bound keeps a client inventing
    values from growing it."""
    return Negotiation.from_accept(accept, disabled, auto)


def variant_etag(engine: str, fingerprint: str, key: VariantKey) -> str:
    """An image variant's ETag, its result-cache key: one function for the validators, the
    renderer's alias and a node answering from the store, so all three name it alike."""
    return make_etag(engine, fingerprint, *key)


def variant_alias(engine: str, ident: str, key: VariantKey) -> str:
    """The variant's name "by source" in the result store: what a node that holds no copy of the
    remote object knows before its fingerprint (the source cache's ident of the object)."""
    return hashlib.blake2b(repr((engine, ident, *key)).encode(), digest_size=16).hexdigest()


def _conditional(request: Request) -> bool:
    headers = request.headers
    return "if-none-match" in headers or "if-modified-since" in headers


def _image_validators(
    conditions: Conditions,
    spec: ImageSpec,
    cache_control: str,
    key: VariantKey,
    source: FileVersion,
) -> Prepared:
    etag = variant_etag(conditions.engine, source.fingerprint, key)
    headers = _image_headers(etag, source.last_modified, spec, cache_control, conditions)
    return Prepared.build(etag, source.mtime, headers)


@dataclass(frozen=True, slots=True)
class _ImageWork:
    """One image variant's work, through the gate: the header decides what the render costs in
    memory, so it goes through the door twice. The header of a version is read once; a later
    render of the variant goes straight on. A rendering of a remote copy is also shared under
    the variant's alias (``alias``; None for a local file or without a result store)."""

    res: Resources
    conditions: Conditions
    found: Located
    ask: ImageAsk
    path: str | None = None  # the public path, for the purge index

    async def __call__(self, source: FileVersion, receive: Receive) -> Outcome:
        outcome = await self._make(source, receive)
        results, alias = self.conditions.results, self.ask.alias
        # as ``serving.answer`` keeps it: a copy being rewritten has no trusted fingerprint
        kept = source.key == stat_key(self.found.stat)
        if alias is not None and results is not None and outcome.body is not None and kept:
            etag = variant_etag(self.conditions.engine, source.fingerprint, self.ask.key)
            results.share_as(alias, etag, outcome, path=self.path)
        return outcome

    async def _make(self, source: FileVersion, receive: Receive) -> Outcome:
        gate = self.res.gate
        job = Job.from_settings(
            self.res.settings,
            path=self.found.real,
            size=self.found.stat.st_size,
            spec=self.ask.spec,
            negotiation=self.ask.negotiation,
            limits=self.conditions.limits,
            watermarks=self.conditions.watermarks,
        )
        ready = source.recall(self.ask.key, Probed)
        if ready is not None:
            ready = ready.at(job.path)
        else:
            probed = await gate.run(prepare, job, receive=receive)
            if isinstance(probed, Outcome):
                return probed
            if probed.by_name:  # a small file's head (its bytes) is not kept twice
                source.note(self.ask.key, probed)
            ready = probed
        return await gate.run(render, job, ready, cost=ready.cost, receive=receive)


def _image_headers(
    etag: str, last_modified: str, spec: ImageSpec, cache_control: str, conditions: Conditions
) -> dict[str, str]:
    headers = {
        **conditions.cors,
        "ETag": etag,
        "Last-Modified": last_modified,
        "Cache-Control": cache_control,
        "X-Content-Type-Options": "nosniff",
    }
    if spec.format is None and not spec.info:
        headers["Vary"] = "Accept"
    return headers


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
    if outcome.quality:  # max_bytes or quality=auto searched the quality (extensions)
        headers["X-Output-Quality"] = outcome.quality_label or str(outcome.quality)
    if outcome.score:
        headers[SCORE_HEADER] = f"{outcome.score:.2f}"
    if outcome.budgeted:
        headers[BUDGET_HEADER] = "met" if outcome.budget_met else "exceeded"
    return headers
