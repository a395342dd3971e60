"""Serve one variant of one file version: the steps every part's file answer shares, written once.

A part finds the file, identifies its version (``serving.versions``) and says what it wants made of
it, a ``Variant``: its key among the version's prepared answers, its validators and header block,
and how its body is made (a ``Rendering`` through the part's cache, or none: the file as it is).
``answer`` does the rest, in the order of a cheap request first:

1. the variant's validators and header blocks, built once per version (``FileVersion.prepare``);
2. the offer to the hot lane, so a repeat is replayed before routing (``serving.hotlane``);
3. 304 from the validators, before any work;
4. the file as it is, the cheapest way its size allows (``serving.sendfile``);
5. a held hit: the kept 200 block with the bytes this process holds;
6. the rendering inside the part's cache (single flight over its tiers; the part's ``make``
   goes through the CPU gate), bypassed when the cache is off or the file is being rewritten;
7. keep the 200's block, so the next request for the variant is a header-block copy.

Every answer says what the cache did in ``Cache-Status`` (``web.cachestatus``): ``hit`` for a
304 or a kept rendering, ``fwd=miss; stored`` for one made now, ``fwd=bypass`` for the file as it
is (asked so, or a rendering that found nothing to change) or a rendering no cache holds. A part
adds its own cache header through ``Rendering.headers`` (the optimizer's ``X-Optimizer-Cache``).

``answer_stored`` is the same answer without the file: a variant another node rendered, of a
version that node identified and shared (a remote source's object, ``sources.fingerprints``),
read from the part's shared tier by its ETag. Steps 1, 3 and 5 with the same blocks, so node B's
304 and 200 are node A's; anything else (not stored, a pass-through) is the caller's long way:
find the file, then ``answer``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Generic, Protocol, TypeVar

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive

from assetgate.serving.hotlane import BodyOf, Offer, file_body
from assetgate.serving.prepared import BlockResponse, HeaderBlock, Prepared, encode_headers
from assetgate.serving.sendfile import RangedFileResponse, send_file
from assetgate.serving.tags import Tags
from assetgate.serving.versions import FileVersion, stat_key
from assetgate.web.cachestatus import HEADER, VALUES, CacheState

T = TypeVar("T")

_HIT_HEADER: Final = {HEADER: VALUES["HIT"]}
_BYPASS_HEADER: Final = {HEADER: VALUES["BYPASS"]}
_STAMP_HIT: Final = ((HEADER.lower().encode("latin-1"), VALUES["HIT"].encode("latin-1")),)
_STAMP_BYPASS: Final = ((HEADER.lower().encode("latin-1"), VALUES["BYPASS"].encode("latin-1")),)


class ResultCache(Protocol[T]):
    """What ``answer`` needs of a part's cache (``cache.Cache`` is one)."""

    def get(self, key: str) -> T | None: ...

    async def get_or_compute(
        self, key: str, compute: Callable[[], Awaitable[T]], *, path: str | None = None
    ) -> tuple[T, bool]: ...


@dataclass(frozen=True, slots=True)
class FoundFile:
    """One version of one file, where the part's path check found it."""

    path: str | Path
    stat: os.stat_result  # the request's one stat of ``path``
    version: FileVersion  # its identity: fingerprint, validators, prepared answers
    offer: Offer | None = None  # the hot lane's, when this answer may be replayed
    tags: Tags | None = None  # its cache tags (``serving.tags``); None: untagged


@dataclass(frozen=True, slots=True)
class Rendering(Generic[T]):
    """How a variant's body is made, and what it adds to the 200's headers."""

    make: Callable[[FileVersion, Receive], Awaitable[T]]  # the work, through the part's gate
    body: Callable[[T], bytes | None]  # None: a pass-through, the file itself answers
    headers: Callable[[T, CacheState], Mapping[str, str]]  # Content-Type, -Length, the part's
    cache: ResultCache[T] | None = None  # None: off, every answer is made (``fwd=bypass``)


@dataclass(frozen=True, slots=True)
class Variant(Generic[T]):
    """One answer made from a version: its key, its validators, how its body is made."""

    key: Hashable  # among the version's prepared answers (and the hot lane's replays)
    # the ETag and the 304's headers; for the file as it is also the 200's (``ok``: Content-Type,
    # Content-Length, ``Accept-Ranges: bytes``). Raises the part's errors (415, say) once.
    validators: Callable[[FileVersion], Prepared]
    rendering: Rendering[T] | None = None  # None: the file as it is


#: What a part's router hands on when its variants render different things.
AnyVariant = Variant[Any]


async def answer(request: Request, found: FoundFile, variant: Variant[T]) -> Response:
    """GET or HEAD for ``variant`` of ``found`` (method, path and parameters already checked)."""
    version = found.version
    tags = found.tags
    # The tags belong to the path, not the bytes: one version (a hard link, a package blob two
    # packages share) keeps one block per path it was answered under.
    key: Hashable = variant.key if tags is None else (variant.key, tags)
    prepared = version.prepare(key, functools.partial(_prepare, variant, tags))
    rendering = variant.rendering
    held: BodyOf = file_body if rendering is None else functools.partial(_held, rendering)
    if found.offer is not None:
        found.offer(version, key, held)
    if prepared.matches(request):
        return BlockResponse(304, prepared.not_modified)
    if rendering is None:
        return send_file(request, found.path, found.stat, version, prepared)
    if prepared.ok is not None:  # rendered and kept here
        body = held(version, prepared)
        if body is not None:
            return BlockResponse(200, prepared.ok, body)
    make = functools.partial(rendering.make, version, request.receive)
    cache = rendering.cache
    state: CacheState
    if cache is None or version.key != stat_key(found.stat):  # off, or being rewritten
        result, state = await make(), "BYPASS"
    else:
        path = None if tags is None else tags.path  # what a purge of the path forgets
        result, hit = await cache.get_or_compute(prepared.etag, make, path=path)
        state = "HIT" if hit else "MISS"
    body = rendering.body(result)
    if body is None:  # a pass-through: the file itself (streamed if large), no kept bytes
        headers = {**prepared.headers, **rendering.headers(result, state), **_BYPASS_HEADER}
        return RangedFileResponse(found.path, headers=headers, stat_result=found.stat)
    own = {**rendering.headers(result, state), HEADER: VALUES[state]}
    if state != "BYPASS":  # the next request for this variant is a header-block copy
        kept = {**rendering.headers(result, "HIT"), **_HIT_HEADER}
        version.keep(key, prepared.with_ok(kept))
    return prepared.rendered(own, body)


async def answer_stored(
    request: Request,
    version: FileVersion,
    variant: Variant[T],
    find: Callable[[str], Awaitable[T | None]],
    tags: Tags | None = None,
) -> Response | None:
    """GET or HEAD for ``variant`` of a ``version`` another node identified, with no file here:
    304 from the validators, or 200 from the rendering ``find`` reads by its ETag; None when it
    holds none (or the file itself would answer). Nothing is kept: the version is no file's."""
    rendering = variant.rendering
    if rendering is None:
        return None  # the file as it is: only the file answers
    prepared = _prepare(variant, tags, version)
    if prepared.matches(request):
        return BlockResponse(304, prepared.not_modified)
    result = await find(prepared.etag)
    body = None if result is None else rendering.body(result)
    if result is None or body is None:
        return None
    return prepared.rendered({**rendering.headers(result, "HIT"), **_HIT_HEADER}, body)


def _prepare(variant: Variant[T], tags: Tags | None, version: FileVersion) -> Prepared:
    """The variant's validators, with its cache tags on both answers and ``Cache-Status`` on its
    304 (and on its 200 when the file is answered as it is); built once per version, variant
    and path."""
    prepared = variant.validators(version)
    fields = {} if tags is None else tags.fields()
    if fields:
        block = encode_headers(fields)
        prepared = replace(
            prepared,
            headers={**prepared.headers, **fields},
            not_modified=prepared.not_modified + block,
            ok=None if prepared.ok is None else prepared.ok + block,
            shared=prepared.shared + block,
        )
    ok: HeaderBlock | None = None
    if variant.rendering is None and prepared.ok is not None:
        ok = prepared.ok + _STAMP_BYPASS
    return replace(prepared, not_modified=prepared.not_modified + _STAMP_HIT, ok=ok)


def _held(rendering: Rendering[T], version: FileVersion, prepared: Prepared) -> bytes | None:
    """A variant's rendering while this process holds it (also the hot lane's replay of a hit)."""
    cache = rendering.cache
    kept = None if cache is None else cache.get(prepared.etag)
    return None if kept is None else rendering.body(kept)
