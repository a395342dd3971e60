"""The package library's own page: ``search.html``, its script and style, shipped as package data.

Loaded once in the part's lifespan, each with its ETag, so serving the page costs no disk read.
The page talks to the service only through ``/npm/search``, the ``?sri`` of ready results and
``/npm/importmap`` (on a click); its CSP allows nothing else.
"""

from __future__ import annotations

from typing import Final

from assetgate.web.static import StaticFile, load_static

PAGE_CACHE: Final = "public, max-age=300"
PAGE_CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
#: Served under ``/npm/_assets/<name>``.
STATIC_FILES: Final = ("search.js", "search.css")


def load_page_files() -> dict[str, StaticFile]:
    """The page and its files by name; a file missing from the package is simply absent (404)."""
    return load_static("assetgate.packages", ("search.html", *STATIC_FILES))
