"""Send one version of a file with its prepared headers, the cheapest way its size allows.

- kept in memory beside its fingerprint (small files, within ``ASSETGATE_FILE_MEMORY_BYTES``):
  no I/O at all;
- small but not kept: one read on the event loop (a file in the page cache costs less to read
  than a hop to a worker thread);
- large, or a ``Range`` request: Starlette's ``FileResponse``, which streams from a worker thread
  without blocking the loop and answers ranges, with the very same headers. A ``Range`` that is
  not a valid byte-range set is ignored (``web.ranges``): the whole file, 200.

The 304 is decided before any of this, from the prepared validators (``serving.answer``): no file
is opened for it.
"""

from __future__ import annotations

import os
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.types import Receive, Scope, Send

from assetgate.serving.prepared import BlockResponse, Prepared
from assetgate.serving.versions import SMALL_FILE_BYTES, FileVersion
from assetgate.web.ranges import usable_range


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
    if small and not usable_range(request.headers.get("range")):
        if request.method == "HEAD":
            return BlockResponse(200, prepared.ok)
        body = version.body if version.body is not None else _read(path, version.size)
        if body is not None:
            return BlockResponse(200, prepared.ok, body)
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in prepared.ok}
    return RangedFileResponse(path, headers=headers, stat_result=info)


class RangedFileResponse(FileResponse):
    """Starlette's, except that a ``Range`` it should ignore is ignored (RFC 9110 §14.2)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        fields = scope["headers"]
        ranges = [value for name, value in fields if name == b"range"]
        if ranges and not (len(ranges) == 1 and usable_range(ranges[0].decode("latin-1"))):
            scope = {**scope, "headers": [(n, v) for n, v in fields if n != b"range"]}
        await super().__call__(scope, receive, send)


def _read(path: str | Path, size: int) -> bytes | None:
    """The file's bytes, or None when it is not the size it was (changing under us)."""
    try:
        with open(path, "rb") as handle:
            body = handle.read(size + 1)
    except OSError:
        return None
    return body if len(body) == size else None
