"""One stored file as an HTTP answer: a pinned variant of its version (``serving.answer``: 304,
from memory, inline or streamed), through the CSS/JS floor when asked, the ``.min.js`` a package
lacks, listings and folder pages, SRI bodies; and a blob another process evicted is fetched again
once (``serve_stored``)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Never
from urllib.parse import quote

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from assetgate.errors import AppError, NotFound, Unavailable
from assetgate.minify.render import Rendered
from assetgate.minify.respond import AssetFloor, asset_variant
from assetgate.minify.spec import AssetSpec, parse_asset_spec
from assetgate.packages.bodies import (
    CROSS_ORIGIN,
    FOLDER_CSP,
    PINNED_CACHE,
    make_folder_html,
    make_listing,
    make_sri_body,
    package_media_type,
    pinned_headers,
)
from assetgate.packages.state import PackagesState
from assetgate.packages.store import FileRow, Namespace
from assetgate.resources import resources
from assetgate.serving.answer import AnyVariant, FoundFile, Variant, answer
from assetgate.serving.prepared import Prepared
from assetgate.serving.tags import Tags, edge_seconds
from assetgate.serving.versions import FileVersion, identify_path
from assetgate.web.negotiation import joined_field

ASSET_QUERY: Final = ("min", "compress", "safe")
ASSET_SUFFIXES: Final = (".css", ".js", ".mjs")
MINIFIED_NAME: Final = re.compile(r"^(?P<stem>.+)\.min\.(?P<ext>js|css)$")


def json_answer(body: object, headers: Mapping[str, str]) -> Response:
    return JSONResponse(body, headers=dict(headers))


def sri_answer(pinned: str, found: FileRow, module: str | None = None) -> Response:
    """``module``: for a JavaScript file, what a classic ``<script>`` would meet
    (``packages.moduleformat``), so the page can offer a tag that runs."""
    headers = {**CROSS_ORIGIN, "Cache-Control": PINNED_CACHE}
    body = make_sri_body(pinned, found)
    if module is not None:
        body["module"] = module
    return json_answer(body, headers)


def folder_answer(
    rows: list[FileRow], name: str, version: str, folder: str, *, listing: bool
) -> Response:
    """A folder of a version: unpkg's ``?meta`` JSON listing, or a plain HTML list below the root
    (names escaped, no script at all); ``rows``: every file of the version."""
    stripped = folder.strip("/")
    prefix = stripped + "/" if stripped or not listing else ""
    rows = [row for row in rows if row.path.startswith(prefix)]
    if not rows:
        raise AppError.not_found()
    if listing:
        headers = {**CROSS_ORIGIN, "Cache-Control": PINNED_CACHE}
        return json_answer(make_listing(name, version, prefix, rows), headers)
    headers = {**CROSS_ORIGIN, "Cache-Control": PINNED_CACHE, "Content-Security-Policy": FOLDER_CSP}
    html = make_folder_html(name, version, prefix, rows)
    return Response(html, media_type="text/html; charset=utf-8", headers=headers)


async def file_answer(
    request: Request,
    state: PackagesState,
    key: tuple[Namespace, str, str],
    found: FileRow,
    *,
    sibling: bool = False,
) -> Response:
    """A stored file as it is, or through the CSS/JS floor when ``?min=1``… asks for it;
    ``sibling``: minified, as the ``<file>.min.js`` the package lacks (``serve_stored``). A blob
    gone since the index named it is ``Vanished`` (fetched again once by ``serve_stored``); a
    sibling's is a 404."""
    blob = state.store.blob_path(found.blob)
    if blob is None:
        raise AppError.not_found() if sibling else Vanished
    if not sibling and state.store.touch(key):
        state.flush_touches_soon()
    try:
        info, version = await identify_path(resources(request).versions, blob)
    except NotFound as exc:  # evicted by another process since the index named it
        if not sibling:
            raise Vanished from exc
        raise
    file = FoundFile(blob, info, version, tags=_tags(request, key, found.path))
    spec = AssetSpec(minify=True) if sibling else _asset_spec(request, blob)
    variant: AnyVariant = (
        pinned_variant(found) if spec is None else _asset(request, file, found, spec, sibling)
    )
    return await answer(request, file, variant)


def _tags(request: Request, key: tuple[Namespace, str, str], path: str) -> Tags:
    """A package file's cache tags: its pinned URL as the path, and ``npm:<name>`` and
    ``npm:<name>@<version>`` for an npm package (a library of the catalog: ``lib:``)."""
    ns, name, version = key
    public = (
        f"/npm/{name}@{version}/{path}" if ns == "npm" else f"/npm/{ns}/{name}@{version}/{path}"
    )
    settings = resources(request).settings
    headers = tuple(settings.cache_tag_headers)
    package = (name, version) if ns == "npm" else None
    edge_s = edge_seconds(settings.edge_revalidate_s, PINNED_CACHE)
    return Tags(public, "packages", package=package, headers=headers, edge_s=edge_s)


def pinned_variant(found: FileRow) -> Variant[Never]:
    """A stored file as it is: pinned headers, its ETag the content's sha256 (the same on every
    node and in the registry's integrity), no Last-Modified (If-Modified-Since is ignored)."""
    return Variant(("pinned", found.path), functools.partial(_pinned_validators, found))


def _pinned_validators(found: FileRow, version: FileVersion) -> Prepared:
    ok = {"Content-Type": package_media_type(found.path), "Content-Length": str(found.size)}
    return Prepared.build(f'"{found.sha256}"', None, pinned_headers(found), ok)


def _asset_spec(request: Request, blob: Path) -> AssetSpec | None:
    """The CSS/JS flags, when the query asks for any and the file is CSS or JavaScript."""
    if not request.scope["query_string"] or blob.suffix not in ASSET_SUFFIXES:
        return None
    query = request.query_params
    return parse_asset_spec(query) if any(name in query for name in ASSET_QUERY) else None


def _asset(
    request: Request,
    file: FoundFile,
    found: FileRow,
    spec: AssetSpec,
    sibling: bool = False,
) -> Variant[Rendered]:
    """A pinned CSS/JS file through the CSS/JS floor (``?min=1``…, or a ``.min.js`` the package
    lacks), with the pinned headers but its own validators (the answer is not the file)."""
    res = resources(request)
    floor = AssetFloor(res.minify_pool, res.assets, res.settings.asset_max_bytes)
    pinned = {k: v for k, v in pinned_headers(found).items() if k not in ("ETag", "Content-Digest")}
    if sibling:
        pinned["X-Minified-From"] = quote(found.path, safe="/+@")
    headers = {**pinned, "Cache-Control": PINNED_CACHE}
    accept_encoding = joined_field(request.headers.getlist("accept-encoding"))
    return asset_variant(floor, file.path, file.stat.st_size, spec, accept_encoding, headers)


class Vanished(Exception):
    """A blob the index names is gone: another worker process evicted it a moment ago."""


async def serve_stored(
    request: Request, state: PackagesState, key: tuple[Namespace, str, str], path: str
) -> Response:
    """Serve ``path`` of an ingested version, or (jsDelivr's grammar) the ``<file>.min.js`` or
    ``.min.css`` that the package lacks: its ``<file>.js``/``.css`` through the minifier (the same
    one as ``?min=1``), pinned as well. If a blob vanished, forget the version, fetch it again
    (single flight) and serve once more."""
    ns, name, version = key
    for attempt in range(2):
        found = state.store.file(ns, name, version, path)
        sibling = found is None
        if found is None:
            match = MINIFIED_NAME.match(path)
            unminified = None if match is None else f"{match['stem']}.{match['ext']}"
            found = None if unminified is None else state.store.file(ns, name, version, unminified)
            if found is None:
                raise AppError.not_found()
        try:
            return await file_answer(request, state, key, found, sibling=sibling)
        except Vanished:
            if attempt:
                break
            await anyio.to_thread.run_sync(state.store.forget, key)
            if ns == "npm":
                await state.packages.ensure_version(name, version)
            else:
                await state.packages.ensure_library_file(name, version, path)
    raise Unavailable("file is not available, retry")
