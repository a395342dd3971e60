"""HTTP answer for a CSS or JavaScript file (placeholder: pass-through until the assets issue lands).

Shared by the optimizer (document-root files) and the package library (pinned package files), so
``?min=1&compress=1&safe=1`` behave the same on both.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response

from assetgate.web.workgate import WorkGate

ASSET_SUFFIXES = {
    ".css": "text/css; charset=utf-8",
    ".js": "application/javascript; charset=utf-8",
    ".mjs": "application/javascript; charset=utf-8",
}


def is_asset(path: Path | str) -> bool:
    return Path(path).suffix.lower() in ASSET_SUFFIXES


async def asset_response(
    request: Request,
    source: Path,
    *,
    gate: WorkGate,
    cache: object,
    cache_control: str,
    max_bytes: int,
    extra_headers: Mapping[str, str] | None = None,
) -> Response:
    return FileResponse(
        source,
        media_type=ASSET_SUFFIXES[source.suffix.lower()],
        headers={"Cache-Control": cache_control, **(extra_headers or {})},
    )
