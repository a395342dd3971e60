"""Content-Type by file name: one table for every part, so a file has one type wherever served.

By name only, never guessed from content, and not from the host's ``/etc/mime.types`` (which
differs between machines). Text types carry ``charset=utf-8``. JavaScript is
``application/javascript`` everywhere (spec §2.3 lists it for the optimizer; the package library
and the CSS/JS floor answer the same file the same way). Source formats a browser must not run or
render as something else (TypeScript, Markdown, SCSS, YAML, …) are ``text/plain``.

A document type (HTML, XHTML, XML) is what it is for the operator's own document root; a caller
serving untrusted content on the service's origin (the package library) asks for
``documents_as_text`` and gets ``text/plain``, so a package cannot ship a page that runs as ours.
Unknown names are ``application/octet-stream``.
"""

from __future__ import annotations

from typing import Final

TEXT: Final = "text/plain; charset=utf-8"
OCTETS: Final = "application/octet-stream"
JAVASCRIPT: Final = "application/javascript; charset=utf-8"
CSS: Final = "text/css; charset=utf-8"
JSON: Final = "application/json; charset=utf-8"

BY_SUFFIX: Final[dict[str, str]] = {
    ".js": JAVASCRIPT,
    ".mjs": JAVASCRIPT,
    ".cjs": JAVASCRIPT,
    ".css": CSS,
    ".map": JSON,
    ".json": JSON,
    ".wasm": "application/wasm",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".eot": "application/vnd.ms-fontobject",
    ".png": "image/png",
    ".apng": "image/apng",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".bmp": "image/bmp",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".heic": "image/heic",
    ".heif": "image/heif",
    ".ico": "image/x-icon",
    ".svg": "image/svg+xml",
    ".pdf": "application/pdf",
    ".zip": "application/zip",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".wav": "audio/wav",
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".xhtml": "application/xhtml+xml",
    ".xml": "application/xml",
    ".txt": TEXT,
    ".csv": "text/csv; charset=utf-8",
    ".ts": TEXT,
    ".mts": TEXT,
    ".cts": TEXT,
    ".tsx": TEXT,
    ".jsx": TEXT,
    ".md": TEXT,
    ".markdown": TEXT,
    ".scss": TEXT,
    ".less": TEXT,
    ".yml": TEXT,
    ".yaml": TEXT,
    ".flow": TEXT,
}
DOCUMENTS: Final = frozenset({".html", ".htm", ".xhtml", ".xml"})
TEXT_NAMES: Final = frozenset({"license", "licence", "readme", "changelog", "authors", "notice"})


def media_type(path: str, *, documents_as_text: bool = False) -> str:
    """The Content-Type of the file named by the last segment of ``path``."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    suffix = name[dot:].lower() if dot > 0 else ""
    if suffix in BY_SUFFIX:
        return TEXT if documents_as_text and suffix in DOCUMENTS else BY_SUFFIX[suffix]
    stem = name[:dot] if dot > 0 else name
    if name.startswith(".") or stem.lower() in TEXT_NAMES:
        return TEXT
    return OCTETS
