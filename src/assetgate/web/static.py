"""Pages and their scripts shipped as package data: read once, served with a strong ETag.

Used by every part that has pages (the package search page, the ``/ui/`` pages), so a page is
answered the same way everywhere: ETag, 304 on a match, ``Content-Length`` (a HEAD answer loses
its body on the way out, ``web.http``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources as package_data

from starlette.requests import Request
from starlette.responses import Response

from assetgate.web.caching import is_not_modified, make_etag
from assetgate.web.mediatypes import media_type


@dataclass(frozen=True, slots=True)
class StaticFile:
    body: bytes
    media_type: str
    etag: str


def load_static(package: str, names: Iterable[str]) -> dict[str, StaticFile]:
    """``<package>/static/<name>`` for each name; a missing file is simply absent (a 404)."""
    found: dict[str, StaticFile] = {}
    folder = package_data.files(package) / "static"
    for name in names:
        try:
            body = (folder / name).read_bytes()
        except OSError:
            continue
        found[name] = StaticFile(body, media_type(name), make_etag(name, body))
    return found


def static_response(request: Request, item: StaticFile, headers: Mapping[str, str]) -> Response:
    """``item`` with ``headers`` (which should carry Cache-Control); 304 when the ETag matches."""
    merged = {"ETag": item.etag, "X-Content-Type-Options": "nosniff", **headers}
    if is_not_modified(request.headers.get("if-none-match"), None, etag=item.etag, last_modified=0):
        return Response(status_code=304, headers=merged)
    merged["Content-Length"] = str(len(item.body))
    return Response(item.body, media_type=item.media_type, headers=merged)
