"""A registry document (packument) -> the small ``Packument`` that resolution needs, streamed.

A popular package's document runs to tens of megabytes (every version's manifest). ``json.loads``
of it is one C call that holds the GIL for seconds and builds every manifest as Python objects
(a 60 MB document: a 4 s stall of the event loop, +570 MiB). Here ``ijson`` (yajl in C) walks
the bytes and hands over one version at a time; only ``dist`` and ``deprecated`` of each version,
the dist-tags and the description are kept, and the caller runs it on a worker thread, where
each version handed back lets the event loop in. The byte cap is the caller's
(``ASSETGATE_PACKUMENT_MAX_BYTES``, checked while the body arrives).

This is the one parser of a package document: a registry's answer and the reduced copy the store
keeps for stale-if-error (``catalogs.packument_text``, read back by ``Store.load_packument``) go
through the same rules (exact versions only, sane tags, a tarball per version).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Final

import ijson

from assetgate.errors import AppError, NotFound
from assetgate.packages.integrity import parse_sri
from assetgate.packages.versions import Dist, Packument, is_exact, is_tag

MAX_DESCRIPTION_CHARS: Final = 1024


class Unpublished(NotFound):
    """A registry document with no versions and no dist-tags: every version was unpublished
    (npm keeps ``{"name", "time": {"unpublished": …}}``), or none was ever published. Not an
    upstream failure: a 404 saying so."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} has no published versions")


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def reduce_version(meta: object) -> tuple[Dist, bool] | None:
    """One ``versions[v]`` manifest -> its Dist and whether it is deprecated (None if unusable)."""
    if not isinstance(meta, Mapping):
        return None
    dist = meta.get("dist")
    if not isinstance(dist, Mapping) or not isinstance(dist.get("tarball"), str):
        return None
    integrity = _str(dist.get("integrity"))
    # The sha1 is only ever used when there is no usable SRI: not kept beside one.
    shasum = None if parse_sri(integrity) is not None else _str(dist.get("shasum"))
    found = Dist(dist["tarball"], integrity, shasum)
    return found, bool(meta.get("deprecated"))


def keep_version(version: object, meta: object) -> tuple[Dist, bool] | None:
    """``reduce_version`` of an exact semver version only: a version ends up in headers and
    paths, so a registry's CR/LF or non-Latin-1 "version" is never kept."""
    if not isinstance(version, str) or not is_exact(version):
        return None
    return reduce_version(meta)


def keep_tags(raw: object) -> dict[str, str]:
    """The dist-tags whose name and target are sane (``versions.is_tag``)."""
    if not isinstance(raw, Mapping):
        return {}
    return {k: v for k, v in raw.items() if isinstance(v, str) and is_tag(k, v)}


class _Reader:
    """``body`` as a file whose ``read`` is Python code. yajl's C loop over a ``BytesIO`` never
    returns to the interpreter, so one pass over 29 MB held the GIL (and the event loop, though
    it ran on a worker thread) 0.6 s; a Python ``read`` every 64 KiB lets the loop in."""

    def __init__(self, body: bytes) -> None:
        self._file = io.BytesIO(body)

    def read(self, size: int = -1) -> bytes:
        return self._file.read(size)


def _versions_kind(body: bytes) -> str | None:
    """The JSON event that starts the top-level ``versions`` value (``start_map`` for an
    object), None when there is none. Only asked of documents without a single version (small:
    an unpublished package's), so walking every event costs nothing."""
    events = ijson.parse(io.BytesIO(body), use_float=True)
    for prefix, event, value in events:
        if prefix == "" and event == "map_key" and value == "versions":
            return str(next(events)[1])
    return None


def parse_packument(name: str, body: bytes) -> Packument:
    """Registry document bytes -> Packument; AppError 502 when it is not one."""
    dists: dict[str, Dist] = {}
    deprecated: set[str] = set()
    tags: dict[str, str] = {}
    description = ""
    latest_description = ""
    seen_versions = False
    if not body.lstrip().startswith(b"{"):
        raise AppError.upstream("registry answered an unexpected document")
    try:
        # Small values first, each in a pass of its own: yajl skips what is not asked for.
        for value in ijson.items(_Reader(body), "dist-tags", use_float=True):
            tags = keep_tags(value)
        for value in ijson.items(_Reader(body), "description", use_float=True):
            description = (_str(value) or "")[:MAX_DESCRIPTION_CHARS]
        for version, meta in ijson.kvitems(_Reader(body), "versions", use_float=True):
            seen_versions = True
            kept = keep_version(version, meta)
            if kept is None:
                continue
            dists[version], is_deprecated = kept
            if is_deprecated:
                deprecated.add(version)
            if not description and version == tags.get("latest") and isinstance(meta, Mapping):
                latest_description = (_str(meta.get("description")) or "")[:MAX_DESCRIPTION_CHARS]
    except (ijson.JSONError, ijson.IncompleteJSONError, ValueError) as exc:
        raise AppError.upstream("registry answered invalid JSON") from exc
    if not seen_versions and not dists:
        if not tags and _versions_kind(body) in (None, "start_map"):
            raise Unpublished(name)
        raise AppError.upstream("registry answered an unexpected document")
    return Packument(name, tags, dists, frozenset(deprecated), description or latest_description)
