"""The ``/ui/`` pages: one shared head and navigation (``static/page.html``), each page's body.

Assembled once at startup, so every page carries the same style sheet, common script and
navigation (its own link marked current) and a page file holds only what is its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

TEMPLATE: Final = "page.html"


@dataclass(frozen=True, slots=True)
class Page:
    body: str  # file under ``static/`` holding the page's ``<main>``
    title: str
    script: str  # the page's own script under ``/ui/static/``


PAGES: Final[Mapping[str, Page]] = {
    "": Page("index.html", "Home", "home.js"),
    "optimizer": Page("optimizer.html", "Optimizer playground", "optimizer.js"),
    "convert": Page("convert.html", "Convert to WebP", "convert.js"),
    "whois": Page("whois.html", "Whois lookup", "whois.js"),
    "api": Page("api.html", "API reference", "api.js"),
}


def assemble(template: str, path: str, page: Page, body: str) -> bytes:
    """The page at ``/ui/<path>``: ``template`` with its title, script and body filled in."""
    link = f'<a href="/ui/{path}">'
    marked = template.replace(link, link.removesuffix(">") + ' aria-current="page">', 1)
    return marked.format(title=page.title, script=page.script, body=body).encode()
