"""HTTP edge of the package library (interface B): ``/npm``, ``/npm/search``, ``/npm/...`` files.

The part's routes and lifespan; a stored file becomes an answer in ``packages.answers``, the
shared state is ``packages.state``. Every route takes every method and answers
405 itself (``part.Part.route``), so a POST to ``/npm/search`` never falls through to the
optimizer's catch-all.
Everything under ``/npm/`` belongs to this part: a miss is this part's 404, with a short cache.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import AsyncIterator, Awaitable, Mapping
from contextlib import asynccontextmanager
from typing import Final, TypeVar
from urllib.parse import quote

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from assetgate.cpu.workgate import while_connected
from assetgate.errors import AppError, NotFound, TimedOut, Unavailable
from assetgate.operations.upstreams import Upstream
from assetgate.packages.address import LibraryAddress, PackageAddress, parse_address
from assetgate.packages.answers import (
    Vanished,
    file_answer,
    folder_answer,
    json_answer,
    serve_stored,
    sri_answer,
)
from assetgate.packages.bodies import (
    CROSS_ORIGIN,
)
from assetgate.packages.esm.bundler import locate
from assetgate.packages.esm.importmap import make_import_map, parse_wanted, resolve_graph
from assetgate.packages.esm.modules import Modules, module_url
from assetgate.packages.esm.pool import build_pool
from assetgate.packages.ingest import IngestCaches, Packages, Upstreams
from assetgate.packages.moduleformat import READ_BYTES, ModuleFormat, module_format
from assetgate.packages.openapi import OPENAPI
from assetgate.packages.page import PAGE_CACHE, PAGE_CSP, STATIC_FILES, load_page_files
from assetgate.packages.policy import ServePolicy
from assetgate.packages.query import parse_search_query
from assetgate.packages.registry import load_registries
from assetgate.packages.search import Search, is_ready
from assetgate.packages.state import PackagesState
from assetgate.packages.store import FileRow, Store
from assetgate.packages.versions import is_exact
from assetgate.part import PageLink, Part, part_state
from assetgate.resources import Resources, resources
from assetgate.settings import Settings
from assetgate.web.http import READ_METHODS
from assetgate.web.static import static_response

ALIAS_CACHE: Final = "public, max-age=300"
DEFAULT_FILE_CACHE: Final = "public, max-age=86400"
MISS_CACHE: Final = "public, max-age=60"
SEARCH_CACHE: Final = "public, max-age=60"
#: ``upstream`` labels of ``assetgate_upstream_errors_total``.
NPM_REGISTRY: Final = "npm registry"
LIBRARY_CATALOG: Final = "library catalog"

log = logging.getLogger("assetgate.packages")
T = TypeVar("T")


@asynccontextmanager
async def lifespan(res: Resources) -> AsyncIterator[PackagesState]:
    settings = res.settings
    registries = await anyio.to_thread.run_sync(
        load_registries, settings.npm_registry, settings.npmrc, os.environ
    )
    if registries.default is None:
        log.warning("no npm registry is configured: /npm/ answers 502 (set ASSETGATE_NPM_REGISTRY)")
    else:
        shown = re.sub(r"//[^/@]*@", "//", registries.default)  # never a user:password@
        log.info("npm registry %s (from %s)", shown, registries.origin)
    store = await anyio.to_thread.run_sync(Store, settings.store, settings.store_max_bytes)
    upstreams = Upstreams(
        registries=registries,
        library_api=settings.library_api,
        library_files=settings.library_files,
        timeout_s=settings.upstream_timeout_s,
        packument_max_bytes=settings.packument_max_bytes,
    )
    packages = Packages(store, res.http, res.gate, upstreams, IngestCaches.build(res))
    bundler = await anyio.to_thread.run_sync(
        locate,
        settings.esm_bundler_dir,
        settings.esm_node,
        settings.esm_build_timeout_s,
        settings.esm_build_memory_bytes,
    )
    if isinstance(bundler, str):
        log.warning("ES module builds (+esm, /npm/importmap) are unavailable: %s", bundler)
    policy = ServePolicy.build(
        settings.packages_allow,
        settings.packages_deny,
        settings.packages_token.get_secret_value() if settings.packages_token else None,
        settings.packages_token_scopes,
        registries.scopes,
    )
    builds = build_pool(settings)
    state = PackagesState(
        store=store,
        packages=packages,
        policy=policy,
        modules=Modules(packages, bundler, builds),
        search=Search.build(packages, res, policy),
        static=await anyio.to_thread.run_sync(load_page_files),
    )
    try:
        yield state
    finally:
        builds.close()
        await state.settle()
        await packages.caches.aclose()
        await anyio.to_thread.run_sync(store.close)


def _preflight_cors(settings: Settings) -> Mapping[str, str]:
    return CROSS_ORIGIN


def _state(request: Request) -> PackagesState:
    return part_state(request, "packages", PackagesState)


# --- page and search ------------------------------------------------------------------------------
async def page(request: Request) -> Response:
    item = _state(request).static.get("search.html")
    if item is None:
        raise AppError.not_found("package library page is missing")
    headers = {
        "Cache-Control": PAGE_CACHE,
        "Content-Security-Policy": PAGE_CSP,
        "Referrer-Policy": "no-referrer",
    }
    return static_response(request, item, headers)


async def static_asset(request: Request) -> Response:
    name = request.path_params["name"]
    item = _state(request).static.get(name) if name in STATIC_FILES else None
    if item is None:
        raise AppError.not_found()
    return static_response(request, item, {"Cache-Control": PAGE_CACHE})


async def search(request: Request) -> Response:
    query = parse_search_query(request.query_params)
    state = _state(request)
    answer = await state.search.answer(query)
    # Guarded names only for a request with the client token (after the shared answer cache).
    shown = [hit for hit in answer.hits if state.policy.guards(hit.name)]
    hidden = 0 if not shown or state.policy.authorized(request.headers) else len(shown)
    hits = [h for h in answer.hits if not hidden or not state.policy.guards(h.name)]
    body = {
        "service": "assetgate",
        "query": query.q,
        "total": answer.total - hidden,
        "results": [
            {
                "name": hit.name,
                "version": hit.version,
                "description": hit.description,
                "kind": hit.kind,
                "url": hit.url,
                "ready": is_ready(state.store, hit),
            }
            for hit in hits
        ],
        "warnings": list(answer.warnings),
    }
    headers = {
        "Cache-Control": "no-store" if answer.partial else SEARCH_CACHE,
        "Access-Control-Allow-Origin": "*",
    }
    response = JSONResponse(body, headers=headers)
    if state.policy.token is not None:  # the answer depends on who asks
        response.headers.add_vary_header("Authorization")
    return make_private(response) if shown and not hidden else response


# --- pinned files ---------------------------------------------------------------------------
def _raw_rest(request: Request) -> str:
    raw = request.scope.get("raw_path")
    text = raw.decode("latin-1") if isinstance(raw, bytes) else quote(request.url.path)
    if not text.startswith("/npm/"):
        text = quote(request.url.path)  # a client percent-encoded "npm" itself
    return text.removeprefix("/npm/")


async def files(request: Request) -> Response:
    """Everything under ``/npm/``: ``/npm/`` itself is the page, the rest package/library paths."""
    rest = _raw_rest(request)
    if not rest:
        return await page(request)
    address = parse_address(rest)
    guarded = False
    try:
        if address is None:
            raise AppError.not_found()
        policy = _state(request).policy
        policy.check(address.name)
        guarded = policy.check_client(address.name, request.headers)
        response = await _address(request, address)
    except AppError as exc:
        exc.headers = {**CROSS_ORIGIN, **exc.headers}
        if isinstance(exc, NotFound) and not guarded:
            exc.headers.setdefault("Cache-Control", MISS_CACHE)
        else:
            exc.headers.setdefault("Cache-Control", "no-store")
        raise
    return make_private(response) if guarded else response


async def _address(request: Request, address: PackageAddress | LibraryAddress) -> Response:
    if isinstance(address, LibraryAddress):
        return await _library_file(request, address)
    if not is_exact(address.spec):
        return await _alias(request, address)
    if address.module is not None:
        return await _esm(request, address.name, address.spec, address.module)
    return await _package(request, address)


def make_private(response: Response) -> Response:
    """A guarded package's answer: ``Cache-Control: private`` (a shared cache in front keeps
    none of it), varying by ``Authorization``."""
    given = response.headers.get("Cache-Control", "")
    kept = [part.strip() for part in given.split(",") if part.strip() not in ("", "public")]
    response.headers["Cache-Control"] = ", ".join(["private", *kept])
    response.headers.add_vary_header("Authorization")
    return response


def _query_suffix(request: Request) -> str:
    query = request.url.query
    return f"?{query}" if query else ""


async def _alias(request: Request, address: PackageAddress) -> Response:
    """A range or a dist-tag: 302 to the exact version it names now (a short cache)."""
    version = await _state(request).packages.resolve(address.name, address.spec)
    location = address.with_version(version) + _query_suffix(request)
    headers = {**CROSS_ORIGIN, "Cache-Control": ALIAS_CACHE, "X-Resolved-Version": version}
    return RedirectResponse(location, status_code=302, headers=headers)


async def _package(request: Request, address: PackageAddress) -> Response:
    """A file, a folder or the default file of an exact package version."""
    state = _state(request)
    name, version = address.name, address.spec
    row = await state.packages.ensure_version(name, version)
    query = request.query_params
    if address.directory or (address.file is None and "meta" in query):
        rows = state.store.files("npm", name, version)
        listing = "meta" in query
        return folder_answer(rows, name, version, address.file or "", listing=listing)
    path = address.file if address.file is not None else row.default_path
    if path is None:
        raise AppError.not_found("no default file")
    pinned = f"/npm/{name}@{version}/{quote(path, safe='/')}"
    if "sri" in query:
        found = state.store.file("npm", name, version, path)
        if found is None:
            raise AppError.not_found()
        module = await anyio.to_thread.run_sync(_module_format, state.store, found)
        return sri_answer(pinned, found, module)
    if address.file is None:  # the default file: where it is, and why
        reason = row.default_reason or ""
        headers = {
            **CROSS_ORIGIN,
            "Cache-Control": DEFAULT_FILE_CACHE,
            "X-Default-File-Reason": reason,
        }
        return RedirectResponse(pinned + _query_suffix(request), status_code=302, headers=headers)
    return await serve_stored(request, state, ("npm", name, version), path)


def _module_format(store: Store, found: FileRow) -> ModuleFormat | None:
    """A ``.js``/``.cjs``/``.mjs`` file's module format, from its first ``READ_BYTES``."""
    if not found.path.lower().endswith((".js", ".cjs", ".mjs")):
        return None
    blob = store.blob_path(found.blob)
    if blob is None:
        return None
    try:
        with blob.open("rb") as file:
            head = file.read(READ_BYTES)
    except OSError:
        return None
    return module_format(head.decode("utf-8", errors="replace"))


async def _esm(request: Request, name: str, version: str, subpath: str) -> Response:
    """The package (or its subpath) as a built ES module (``packages.esm.modules``)."""
    state = _state(request)
    url = module_url(name, version, subpath)
    for attempt in range(2):
        row = await _while_connected(request, state.modules.row(name, version, subpath))
        if "sri" in request.query_params:
            return sri_answer(url, row)
        try:
            return await file_answer(request, state, ("esm", name, version), row)
        except Vanished:
            if attempt:
                break
            await anyio.to_thread.run_sync(state.store.forget, ("esm", name, version))
    raise Unavailable("the built module is not available, retry")


async def _while_connected(request: Request, work: Awaitable[T]) -> T:
    """``await work``, given up (499) when the client leaves: a build nobody else waits for is
    then stopped, its processes killed (``esm.pool``)."""
    return await while_connected(request.receive, work)


async def importmap(request: Request) -> Response:
    """``/npm/importmap?pkg=…``: an import map with every transitive module pinned."""
    state = _state(request)
    guarded = False
    try:
        wanted = parse_wanted(request.query_params.getlist("pkg"))
        for item in wanted:
            state.policy.check(item.name)
            guarded = state.policy.check_client(item.name, request.headers) or guarded
        limit = resources(request).settings.importmap_timeout_s
        try:
            with anyio.fail_after(limit):
                graph_of = resolve_graph(state.modules, wanted, state.policy)
                top, graph, users = await _while_connected(request, graph_of)
        except TimeoutError:
            raise TimedOut(
                f"the import map took longer than ASSETGATE_IMPORTMAP_TIMEOUT_S ({limit:g} s);"
                " the modules built so far are kept: ask again"
            ) from None
        for ref in graph:
            guarded = state.policy.check_client(ref.name, request.headers) or guarded
    except AppError as exc:
        exc.headers = {**CROSS_ORIGIN, "Cache-Control": "no-store", **exc.headers}
        raise
    # The configured public address, else the request's own (its Host header): a cache in front
    # must not be able to keep an import map whose URLs a client's Host header chose.
    base = resources(request).settings.public_url or str(request.base_url).rstrip("/")
    body = make_import_map(base, top, graph, users)
    pinned = all(is_exact(w.spec) for w in wanted)
    headers = {**CROSS_ORIGIN, "Cache-Control": DEFAULT_FILE_CACHE if pinned else ALIAS_CACHE}
    response = json_answer(body, headers)
    response.headers["Content-Type"] = "application/importmap+json"
    return make_private(response) if guarded else response


async def _library_file(request: Request, address: LibraryAddress) -> Response:
    if not address.file:
        raise AppError.not_found("library file path required")
    state = _state(request)
    found = await state.packages.ensure_library_file(address.name, address.version, address.file)
    if "sri" in request.query_params:
        if not await state.packages.library_sri_known(address.name, address.version, address.file):
            # Stored unverified (the catalog gave no hash): no integrity is published for it.
            raise AppError.not_found("no integrity: the library catalog publishes none for it")
        pinned = f"/npm/lib/{address.name}@{address.version}/{quote(address.file, safe='/')}"
        return sri_answer(pinned, found)
    return await serve_stored(request, state, ("lib", address.name, address.version), address.file)


PART = Part(
    name="packages",
    prefixes=("/npm",),
    endpoints={
        "/npm": page,
        "/npm/importmap": importmap,
        "/npm/search": search,
        "/npm/_assets/{name}": static_asset,
        "/npm/{rest:path}": files,
    },
    methods=READ_METHODS,
    budget=True,
    cors=_preflight_cors,
    pages=(PageLink("/npm", "package search"),),
    upstreams=(
        Upstream(LIBRARY_CATALOG, urls=lambda s: (s.library_api, s.library_files)),
        # Its host may come from the npm configuration at start (``packages.registry``).
        Upstream(NPM_REGISTRY, rest=True),
    ),
    openapi=OPENAPI,
    lifespan=lifespan,
)
