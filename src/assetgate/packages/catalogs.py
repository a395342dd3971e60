"""Talking to the two upstreams: the npm registry and a cdnjs-compatible library catalog.

Every function takes a base URL from the settings and builds the request URL itself from validated
names; nothing a client sends is ever used as a URL, and redirects are not followed, so only the
configured origins are contacted (docs/packages.md, SSRF). Every body is read with a byte cap and a
deadline. The upstream shapes are the real ones (docs/packages.md); ``make_*`` functions turn
them into the small typed values the rest of the part uses and are pure.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, urlencode, urlsplit

import anyio.to_thread
import httpx

from assetgate.errors import AppError, NotFound, TimedOut, UpstreamFailed
from assetgate.packages.address import EXACT_LIBRARY_VERSION, LIBRARY_NAME, is_package_name
from assetgate.packages.merge import Hit, Kind
from assetgate.packages.packument import parse_packument
from assetgate.packages.versions import Packument, is_exact
from assetgate.web.upstream_body import BadBody, BodyOverCap, read_body

PACKUMENT_MAX_BYTES: Final = 32 * 1024 * 1024  # ASSETGATE_PACKUMENT_MAX_BYTES' default
SEARCH_MAX_BYTES: Final = 4 * 1024 * 1024
ABBREVIATED: Final = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8"
DEPRECATED: Final = ',"deprecated":"yes"'


class UpstreamRefused(UpstreamFailed):
    """The upstream answered 401 or 403: the credentials sent (or their absence) were refused.
    The caller names the package and the registry's host; no credential is ever in a message."""

    def __init__(self, code: int) -> None:
        super().__init__(f"upstream refused access (HTTP {code})")
        self.code = code


@dataclass(frozen=True, slots=True)
class LibraryVersion:
    files: frozenset[str]
    sri: Mapping[str, str]


async def fetch_body(
    http: httpx.AsyncClient,
    url: str,
    *,
    timeout_s: float,
    max_bytes: int,
    accept: str = "application/json",
    too_large: str = "upstream answer is too large",
    headers: Mapping[str, str] | None = None,
) -> bytes:
    """GET ``url`` (with ``headers``: a registry's credential) -> its decoded body, at most
    ``max_bytes`` (AppError 502 ``too_large`` beyond; read by ``web.upstream_body``); an upstream
    AppError: 404 for a 404, ``Refused`` for a 401/403, 502/504 otherwise."""
    sent = {"Accept": accept, **(headers or {})}
    try:
        async with asyncio.timeout(timeout_s):
            async with http.stream("GET", url, headers=sent, timeout=timeout_s) as response:
                if response.status_code == 404:
                    raise NotFound("not found upstream")
                if response.status_code in (401, 403):
                    raise UpstreamRefused(response.status_code)
                if response.status_code != 200:
                    raise AppError.upstream(f"upstream answered {response.status_code}")
                return await read_body(response, max_bytes)
    except BodyOverCap as exc:
        raise AppError.upstream(too_large) from exc
    except BadBody as exc:
        raise AppError.upstream(f"upstream {exc.reason}") from exc
    except TimeoutError as exc:
        raise TimedOut("upstream timed out") from exc
    except httpx.HTTPError as exc:
        raise AppError.upstream("upstream unreachable") from exc


async def fetch_json(
    http: httpx.AsyncClient,
    url: str,
    *,
    timeout_s: float,
    max_bytes: int,
    accept: str = "application/json",
    headers: Mapping[str, str] | None = None,
) -> object:
    """GET ``url`` -> parsed JSON (small documents: parsed where it is called)."""
    body = await fetch_body(
        http, url, timeout_s=timeout_s, max_bytes=max_bytes, accept=accept, headers=headers
    )
    try:
        return json.loads(body)
    except ValueError as exc:
        raise AppError.upstream("upstream answered invalid JSON") from exc


# --- npm ----------------------------------------------------------------------------------------
def packument_url(registry: str, name: str) -> str:
    return registry + quote(name, safe="@")  # "@scope/name" -> "@scope%2fname"


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def packument_to_json(packument: Packument) -> dict[str, object]:
    """The reduced form kept in the store for stale-if-error (a registry-shaped document)."""
    return {
        "name": packument.name,
        "description": packument.description,
        "dist-tags": dict(packument.dist_tags),
        "versions": {
            version: {
                "dist": {"tarball": d.tarball, "integrity": d.integrity, "shasum": d.shasum},
                **({"deprecated": "yes"} if version in packument.deprecated else {}),
            }
            for version, d in packument.dists.items()
        },
    }


def packument_text(packument: Packument) -> str:
    """``packument_to_json`` as JSON text, encoded a version at a time: one ``json.dumps`` of
    290k versions is one C call holding the GIL (and so the event loop) for a second or more,
    even on a worker thread."""
    head = {
        "name": packument.name,
        "description": packument.description,
        "dist-tags": dict(packument.dist_tags),
    }
    dumps = json.dumps
    # Strings only, no dict per version: 290k new containers also cost the event loop (each
    # garbage collection walks them).
    deprecated = packument.deprecated
    entries = ",".join(
        f'{dumps(version)}:{{"dist":{{"tarball":{dumps(d.tarball)},'
        f'"integrity":{dumps(d.integrity)},"shasum":{dumps(d.shasum)}}}'
        + (DEPRECATED if version in deprecated else "")
        + "}"
        for version, d in packument.dists.items()
    )
    return json.dumps(head, separators=(",", ":"))[:-1] + ',"versions":{' + entries + "}}"


async def fetch_packument(
    http: httpx.AsyncClient,
    registry: str,
    name: str,
    *,
    timeout_s: float,
    max_bytes: int = PACKUMENT_MAX_BYTES,
    full: bool = False,
    headers: Mapping[str, str] | None = None,
) -> Packument:
    """The registry document of ``name``, read up to ``max_bytes`` and parsed on a worker thread
    (``packages.packument``), so a huge one neither stalls the event loop nor fills memory."""
    body = await fetch_body(
        http,
        packument_url(registry, name),
        headers=headers,
        timeout_s=timeout_s,
        max_bytes=max_bytes,
        accept="application/json" if full else ABBREVIATED,
        too_large=(
            f"registry document of {name} is larger than ASSETGATE_PACKUMENT_MAX_BYTES"
            f" ({max_bytes} bytes)"
        ),
    )
    return await anyio.to_thread.run_sync(parse_packument, name, body)


def tarball_url(registry: str, name: str, version: str, dist_tarball: str) -> str:
    """``dist.tarball`` when it is on the registry's own origin, else the conventional path.

    A packument that points elsewhere is not followed (SSRF): the tarball is asked for at
    ``<registry>/<name>/-/<basename>-<version>.tgz`` instead, where npm registries keep it.
    """
    base, given = urlsplit(registry), urlsplit(dist_tarball)
    if (given.scheme, given.hostname, given.port) == (base.scheme, base.hostname, base.port):
        return dist_tarball
    basename = name.rsplit("/", 1)[-1]
    return f"{registry}{quote(name, safe='@/')}/-/{quote(basename)}-{quote(version)}.tgz"


_Found = tuple[str, str, object, str]  # name, version, description as sent, URL


def _ranked(kind: Kind, found: list[_Found]) -> list[Hit]:
    """Hits in the catalog's own order (rank 0 first); a missing description is empty."""
    return [
        Hit(name, version, _str(description) or "", kind, url, rank)
        for rank, (name, version, description, url) in enumerate(found)
    ]


def make_npm_hits(doc: object) -> list[Hit]:
    """``/-/v1/search`` answer -> hits in the registry's order; malformed objects are skipped."""
    if not isinstance(doc, dict) or not isinstance(doc.get("objects"), list):
        raise AppError.upstream("registry search answered an unexpected document")
    found: list[_Found] = []
    for item in doc["objects"]:
        package = item.get("package") if isinstance(item, dict) else None
        if not isinstance(package, dict):
            continue
        name, version = _str(package.get("name")), _str(package.get("version"))
        tags = package.get("dist-tags")
        if version is None and isinstance(tags, dict):
            version = _str(tags.get("latest"))  # Verdaccio names the versions, not the latest
        if not name or not version or not is_package_name(name) or not is_exact(version):
            continue
        url = f"/npm/{name}@{quote(version, safe='')}/"
        found.append((name, version, package.get("description"), url))
    return _ranked("package", found)


async def search_npm(
    http: httpx.AsyncClient,
    registry: str,
    q: str,
    *,
    size: int,
    timeout_s: float,
    packument_max_bytes: int = PACKUMENT_MAX_BYTES,
    headers: Callable[[str], Mapping[str, str]] = lambda url: {},
) -> list[Hit]:
    """Registry search; a registry without ``/-/v1/search`` (404) gets an exact-name lookup.
    ``headers``: the credential for a URL (``Registries.headers``)."""
    url = f"{registry}-/v1/search?{urlencode({'text': q, 'size': size})}"
    try:
        doc = await fetch_json(
            http, url, timeout_s=timeout_s, max_bytes=SEARCH_MAX_BYTES, headers=headers(url)
        )
    except NotFound:
        return await _exact_name_hit(
            http, registry, q, timeout_s=timeout_s, max_bytes=packument_max_bytes, headers=headers
        )
    return make_npm_hits(doc)


async def _exact_name_hit(
    http: httpx.AsyncClient,
    registry: str,
    q: str,
    *,
    timeout_s: float,
    max_bytes: int,
    headers: Callable[[str], Mapping[str, str]],
) -> list[Hit]:
    name = q.strip().lower()
    if not is_package_name(name):
        return []
    try:
        packument = await fetch_packument(
            http,
            registry,
            name,
            timeout_s=timeout_s,
            max_bytes=max_bytes,
            full=True,
            headers=headers(packument_url(registry, name)),
        )
    except NotFound:
        return []
    latest = packument.dist_tags.get("latest")
    if latest is None or latest not in packument.dists:
        return []
    url = f"/npm/{packument.name}@{quote(latest, safe='')}/"
    return [Hit(packument.name, latest, packument.description, "package", url, 0)]


# --- library catalog ----------------------------------------------------------------------------
def make_library_hits(doc: object) -> list[Hit]:
    """``/libraries?search=`` answer -> hits; a library with no version or filename is dropped
    (no version-pinned URL can be made for it)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise AppError.upstream("library catalog answered an unexpected document")
    found: list[_Found] = []
    for item in doc["results"]:
        if not isinstance(item, dict):
            continue
        name, version = _str(item.get("name")), _str(item.get("version"))
        filename = _str(item.get("filename"))
        if not name or not version or not filename:
            continue
        if not LIBRARY_NAME.fullmatch(name) or not EXACT_LIBRARY_VERSION.fullmatch(version):
            continue
        url = f"/npm/lib/{name}@{version}/{quote(filename.lstrip('/'), safe='/')}"
        found.append((name, version, item.get("description"), url))
    return _ranked("library", found)


def library_base(api: str) -> str:
    return api.rstrip("/")


async def search_library(
    http: httpx.AsyncClient, api: str, q: str, *, limit: int, timeout_s: float
) -> list[Hit]:
    query = urlencode(
        {"search": q, "fields": "version,description,filename", "limit": limit}, safe=","
    )
    doc = await fetch_json(
        http,
        f"{library_base(api)}/libraries?{query}",
        timeout_s=timeout_s,
        max_bytes=SEARCH_MAX_BYTES,
    )
    return make_library_hits(doc)


def make_library_version(doc: object) -> LibraryVersion:
    if not isinstance(doc, dict):
        raise AppError.upstream("library catalog answered an unexpected document")
    if doc.get("error"):
        raise NotFound("library version not found")
    files: set[str] = set()
    for key in ("files", "rawFiles"):
        listed = doc.get(key)
        if isinstance(listed, list):
            files.update(f.lstrip("/") for f in listed if isinstance(f, str))
    raw_sri = doc.get("sri")
    sri: dict[str, str] = {}
    if isinstance(raw_sri, dict):
        sri = {k.lstrip("/"): v for k, v in raw_sri.items() if isinstance(v, str)}
    return LibraryVersion(frozenset(files), sri)


async def fetch_library_version(
    http: httpx.AsyncClient, api: str, name: str, version: str, *, timeout_s: float
) -> LibraryVersion:
    url = (
        f"{library_base(api)}/libraries/{quote(name, safe='')}/{quote(version, safe='')}"
        "?fields=files,rawFiles,sri"
    )
    doc = await fetch_json(http, url, timeout_s=timeout_s, max_bytes=SEARCH_MAX_BYTES * 4)
    return make_library_version(doc)


def library_file_url(files_base: str, name: str, version: str, path: str) -> str:
    return (
        f"{files_base.rstrip('/')}/{quote(name, safe='')}/{quote(version, safe='')}/"
        f"{quote(path, safe='/')}"
    )
