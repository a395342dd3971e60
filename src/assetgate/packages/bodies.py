"""Headers and bodies of the package answers, built from index rows (pure: no Request, no I/O).

Every header of a pinned file depends only on its index row, so it is computed once per file
and kept (the warm path's hot spot). Listings and the folder page are made here too; names in
them come from archives and are attacker-controlled, so the HTML is escaped and carries no script.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import quote

from assetgate.packages.integrity import make_content_digest, make_sri
from assetgate.packages.store import FileRow
from assetgate.web.mediatypes import media_type

PINNED_CACHE: Final = "public, max-age=31536000, immutable"
SANDBOX_CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
FOLDER_CSP: Final = "default-src 'none'; style-src 'unsafe-inline'"
CROSS_ORIGIN: Final[Mapping[str, str]] = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": "*",
    "Cross-Origin-Resource-Policy": "cross-origin",
    "Timing-Allow-Origin": "*",
    "X-Content-Type-Options": "nosniff",
}


@functools.lru_cache(maxsize=4096)
def pinned_header_items(found: FileRow) -> tuple[tuple[str, str], ...]:
    return (
        *CROSS_ORIGIN.items(),
        ("Cache-Control", PINNED_CACHE),
        ("ETag", f'"{found.sha256}"'),
        ("Content-Digest", make_content_digest(found.sha256)),
        ("Content-Security-Policy", SANDBOX_CSP),
        ("Accept-Ranges", "bytes"),
    )


def pinned_headers(found: FileRow) -> dict[str, str]:
    return dict(pinned_header_items(found))


def make_sri_body(pinned: str, found: FileRow) -> dict[str, object]:
    integrity = make_sri("sha512", bytes.fromhex(found.sha512))
    return {"url": pinned, "integrity": integrity, "size": found.size}


def make_listing(
    name: str, version: str, prefix: str, rows: Iterable[FileRow]
) -> dict[str, object]:
    """unpkg-v2-shaped ``?meta`` answer, plus sha512 SRI per file."""
    return {
        "package": name,
        "version": version,
        "prefix": "/" + prefix,
        "files": [
            {
                "path": "/" + row.path,
                "size": row.size,
                "type": package_media_type(row.path),
                "integrity": make_sri("sha512", bytes.fromhex(row.sha512)),
                "sha256": row.sha256,
            }
            for row in rows
        ],
    }


def make_folder_html(name: str, version: str, prefix: str, rows: Iterable[FileRow]) -> bytes:
    base = f"/npm/{name}@{version}/"
    items = "\n".join(
        f'<li><a href="{html.escape(base + quote(row.path, safe="/"))}">'
        f"{html.escape(row.path.removeprefix(prefix))}</a> {row.size:,} bytes</li>"
        for row in rows
    )
    title = html.escape(f"{name}@{version}/{prefix}")
    return (
        f'<!doctype html><html lang="en"><meta charset="utf-8"><title>{title}</title>'
        f"<h1>{title}</h1><ul>{items}</ul></html>"
    ).encode()


def package_media_type(path: str) -> str:
    """A package file's Content-Type: documents as text, since packages are untrusted content
    served on the service's own origin (the sandbox CSP and ``nosniff`` do the rest)."""
    return media_type(path, documents_as_text=True)
