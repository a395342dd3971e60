"""Send one version of a file with its prepared headers, the cheapest way its size allows.

- kept in memory beside its fingerprint (small files, within ``ASSETGATE_FILE_MEMORY_BYTES``):
  no I/O at all;
- small but not kept: one read on the event loop (a file in the page cache costs less to read
  than a hop to a worker thread);
- large, or a ``Range`` request: Starlette's ``FileResponse``, which streams from a worker thread
  without blocking the loop and answers ranges, with the very same headers.

The 304 is decided before any of this, from the prepared validators (``serving.answer``): no file
is opened for it.
"""

from __future__ import annotations

import os
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response

from assetgate.serving.prepared import BlockResponse, Prepared
from assetgate.serving.versions import SMALL_FILE_BYTES, FileVersion


def send_file(
    request: Request,
    path: str | Path,
    info: os.stat_result,
    version: FileVersion,
    prepared: Prepared,
) -> Response:
    """``prepared.ok`` must carry Content-Type, Content-Length and ``Accept-Ranges: bytes``."""
    assert prepared.ok is not None
    small = version.body is not None or version.size <= SMALL_FILE_BYTES
    if small and "range" not in request.headers:
        if request.method == "HEAD":
            return BlockResponse(200, prepared.ok)
        body = version.body if version.body is not None else _read(path, version.size)
        if body is not None:
            return BlockResponse(200, prepared.ok, body)
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in prepared.ok}
    return FileResponse(path, headers=headers, stat_result=info)


def _read(path: str | Path, size: int) -> bytes | None:
    """The file's bytes, or None when it is not the size it was (changing under us)."""
    try:
        with open(path, "rb") as handle:
            body = handle.read(size + 1)
    except OSError:
        return None
    return body if len(body) == size else None
