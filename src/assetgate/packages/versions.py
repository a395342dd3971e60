"""npm version resolution: exact version, dist-tag or range -> one exact version (pure).

Order as in npm-pick-manifest and jsDelivr's resolver (docs/packages.md): an exact version that
exists wins; then a dist-tag; then a range, where ``dist-tags.latest`` is taken when it satisfies
the range, else the highest satisfying version, preferring non-deprecated ones. Prereleases only
match a range that names a prerelease (npm's rule, implemented by ``semantic_version.NpmSpec``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from semantic_version import NpmSpec, Version


@dataclass(frozen=True, slots=True)
class Dist:
    """Where a version's tarball is and how to verify it (packument ``versions[v].dist``)."""

    tarball: str
    integrity: str | None
    shasum: str | None


@dataclass(frozen=True, slots=True)
class Packument:
    """The part of a registry document assetgate needs; everything else is dropped on arrival."""

    name: str
    dist_tags: Mapping[str, str]
    dists: Mapping[str, Dist]
    deprecated: frozenset[str] = field(default_factory=frozenset)
    description: str = ""


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except ValueError:
        return None


# A dist-tag name: printable ASCII, no blanks (npm's own are words such as ``next``, ``v3-lts``).
_TAG_NAME: Final = re.compile(r"[!-~]{1,128}")


def is_tag(name: str, version: str) -> bool:
    """A dist-tag fit to keep: a sane name pointing at an exact version.

    A registry is not trusted to send clean strings: a version with CR/LF or non-Latin-1
    characters once went raw into ``X-Resolved-Version`` and the client got an empty reply.
    """
    return _TAG_NAME.fullmatch(name) is not None and is_exact(version)


@functools.lru_cache(maxsize=4096)
def is_exact(spec: str) -> bool:
    """A full semver version (``1.2.3``, ``1.0.0-beta.1``): the URL is already pinned."""
    parsed = _version(spec)
    return parsed is not None and str(parsed) == spec


def resolve_without_scan(packument: Packument, spec: str) -> tuple[bool, str | None]:
    """(settled, version): an exact version, a dist-tag, ``latest`` when it satisfies the range,
    or a spec that is no range, all without looking at every version; ``settled`` False when
    only ``resolve_version``'s scan can tell (a scan of 290k versions is seconds of CPU: the
    caller runs it on a worker thread)."""
    spec = spec.strip()
    if spec in packument.dists:
        return True, spec
    tag = "latest" if spec in ("", "*") else spec
    tagged = packument.dist_tags.get(tag)
    if tagged is not None and tagged in packument.dists:
        return True, tagged
    wanted = _range(spec)
    if wanted is None:
        return True, None
    latest = _version(packument.dist_tags.get("latest", ""))
    if latest is not None and str(latest) in packument.dists and wanted.match(latest):
        return True, str(latest)
    return False, None


@functools.lru_cache(maxsize=1024)
def _range(spec: str) -> NpmSpec | None:
    try:
        return NpmSpec(spec)
    except ValueError:
        return None


def resolve_version(packument: Packument, spec: str) -> str | None:
    """The exact version ``spec`` names in ``packument``, or None when nothing matches."""
    settled, found = resolve_without_scan(packument, spec)
    wanted = _range(spec.strip())
    if settled or wanted is None:
        return found
    # One pass keeping only the best two: no list of every parsed version (290k of them, kept
    # alive, made each garbage collection walk them all while the event loop waited).
    best: Version | None = None
    best_fresh: Version | None = None
    for text in packument.dists:
        parsed = _version(text)
        if parsed is None or not wanted.match(parsed):
            continue
        if best is None or parsed > best:
            best = parsed
        if text not in packument.deprecated and (best_fresh is None or parsed > best_fresh):
            best_fresh = parsed
    chosen = best_fresh or best
    return None if chosen is None else str(chosen)
