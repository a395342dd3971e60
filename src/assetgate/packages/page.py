"""The package library's own page: ``search.html``, its script and style, shipped as package data.

Loaded once in the part's lifespan, each with its ETag, so serving the page costs no disk read.
The page talks to the service only through ``/npm/search``; its CSP allows nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources as package_data
from typing import Final

from assetgate.web.caching import make_etag
from assetgate.web.mediatypes import media_type

PAGE_CACHE: Final = "public, max-age=300"
PAGE_CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
#: Served under ``/npm/_assets/<name>``.
STATIC_FILES: Final = ("search.js", "search.css")


@dataclass(frozen=True, slots=True)
class StaticFile:
    body: bytes
    media_type: str
    etag: str


def load_page_files() -> dict[str, StaticFile]:
    """The page and its files by name; a file missing from the package is simply absent (404)."""
    found: dict[str, StaticFile] = {}
    folder = package_data.files("assetgate.packages") / "static"
    for name in ("search.html", *STATIC_FILES):
        try:
            body = (folder / name).read_bytes()
        except OSError:
            continue
        found[name] = StaticFile(body, media_type(name), make_etag(name, body))
    return found
