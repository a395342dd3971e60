"""HTTP edge of the pages (``/ui/``): five pages, their scripts, and the file listing.

The pages are plain files shipped as package data (one shared head, see ``pages.py``); everything
they show comes from the browser calling the service's public HTTP interfaces (``/openapi.json``,
the optimizer, ``/api/convert``, ``/api/whois``), so a page can never show something an API client
could not get. Everything under ``/ui/`` belongs to this part: a miss is this part's 404, never the
optimizer's catch-all.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from assetgate.errors import AppError
from assetgate.part import PageLink, Part, part_state
from assetgate.resources import Resources, resources
from assetgate.ui.listing import QUERY_MAX, list_files
from assetgate.ui.openapi import OPENAPI
from assetgate.ui.pages import PAGES, TEMPLATE, assemble
from assetgate.web.caching import make_etag
from assetgate.web.params import read_int, read_str
from assetgate.web.static import StaticFile, load_static, static_response

NAME: Final = "ui"
METHODS: Final = ("GET", "HEAD")
ASSETS: Final = (
    "ui.css", "common.js", "home.js", "optimizer.js", "convert.js", "whois.js", "api.js",
)  # fmt: skip
PAGE_CACHE: Final = "public, max-age=300"
# blob: images are the playground's result and the converted previews, fetched by the page itself.
CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
LISTING_DEFAULT: Final = 50
LISTING_MAX: Final = 200


@dataclass(frozen=True, slots=True)
class UiState:
    pages: Mapping[str, StaticFile]
    assets: Mapping[str, StaticFile]


def _load() -> UiState:
    parts = load_static("assetgate.ui", (TEMPLATE, *(page.body for page in PAGES.values())))
    template = parts[TEMPLATE].body.decode()
    pages: dict[str, StaticFile] = {}
    for path, page in PAGES.items():
        html = assemble(template, path, page, parts[page.body].body.decode())
        pages[path] = StaticFile(html, parts[page.body].media_type, make_etag(page.body, html))
    return UiState(pages=pages, assets=load_static("assetgate.ui", ASSETS))


@asynccontextmanager
async def lifespan(res: Resources) -> AsyncIterator[UiState]:
    yield await anyio.to_thread.run_sync(_load)


async def root(request: Request) -> Response:
    return RedirectResponse("/ui/", status_code=308)


async def dispatch(request: Request) -> Response:
    """``/ui/<page>``, ``/ui/static/<file>`` and ``/ui/files``."""
    rest: str = request.path_params["rest"]
    if rest == "files":
        return await files(request)
    state = part_state(request, NAME, UiState)
    if rest in PAGES:
        item = state.pages.get(rest)
        headers = {
            "Cache-Control": PAGE_CACHE,
            "Content-Security-Policy": CSP,
            "Referrer-Policy": "no-referrer",
        }
    else:
        name = rest.removeprefix("static/")
        item = state.assets.get(name) if rest.startswith("static/") and name in ASSETS else None
        headers = {"Cache-Control": PAGE_CACHE}
    if item is None:
        raise AppError.not_found()
    return static_response(request, item, headers)


async def files(request: Request) -> Response:
    """Servable files of the document root whose path contains ``q`` (path completion)."""
    settings = resources(request).settings
    if not settings.ui_file_listing:
        raise AppError.not_found("file listing is turned off (ASSETGATE_UI_FILE_LISTING)")
    query = request.query_params
    text = read_str(query, "q", max_len=QUERY_MAX) or ""
    limit = read_int(query, "limit", low=1, high=LISTING_MAX, default=LISTING_DEFAULT)
    assert limit is not None
    if not isinstance(settings.root, Path):  # a bucket or an origin is not listed
        raise AppError.not_found("file listing covers a directory root only")
    listing = await anyio.to_thread.run_sync(list_files, settings.root, text, limit)
    body = {"files": listing.files, "truncated": listing.truncated}
    return JSONResponse(body, headers={"Cache-Control": "no-store"})


PART = Part(
    name=NAME,
    prefixes=("/ui",),
    endpoints={"/ui": root, "/ui/{rest:path}": dispatch},
    methods=METHODS,
    pages=(
        PageLink("/ui/", "pages: what the service offers, links to all of them"),
        PageLink("/ui/optimizer", "optimizer playground"),
        PageLink("/ui/convert", "convert images to WebP"),
        PageLink("/ui/whois", "whois lookup"),
        PageLink("/ui/api", "the API, readable"),
    ),
    openapi=OPENAPI,
    lifespan=lifespan,
)
