"""Content-Type of a package file, by its name (pure; research note §4.2).

Package content is attacker-controlled and served on the service's own origin, so anything a
browser would render as a document (HTML, XHTML, XML) is served as ``text/plain``; the sandbox CSP
and ``nosniff`` on every package response do the rest. Unknown types are
``application/octet-stream``, never guessed from content.
"""

from __future__ import annotations

from typing import Final

TEXT: Final = "text/plain; charset=utf-8"
BY_SUFFIX: Final[dict[str, str]] = {
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".cjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".map": "application/json; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".wasm": "application/wasm",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".eot": "application/vnd.ms-fontobject",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".ico": "image/x-icon",
    ".svg": "image/svg+xml",
    ".ts": TEXT,
    ".mts": TEXT,
    ".cts": TEXT,
    ".tsx": TEXT,
    ".jsx": TEXT,
    ".md": TEXT,
    ".markdown": TEXT,
    ".txt": TEXT,
    ".html": TEXT,
    ".htm": TEXT,
    ".xhtml": TEXT,
    ".xml": TEXT,
    ".scss": TEXT,
    ".less": TEXT,
    ".yml": TEXT,
    ".yaml": TEXT,
    ".flow": TEXT,
}
TEXT_NAMES: Final = frozenset({"license", "licence", "readme", "changelog", "authors", "notice"})


def media_type(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    suffix = name[dot:].lower() if dot > 0 else ""
    if suffix in BY_SUFFIX:
        return BY_SUFFIX[suffix]
    stem = name[:dot] if dot > 0 else name
    if name.startswith(".") or stem.lower() in TEXT_NAMES:
        return TEXT
    return "application/octet-stream"
