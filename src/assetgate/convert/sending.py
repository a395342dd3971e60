"""The conversion answer on the wire: one file of the request's private directory, streamed.

The directory (uploads, WebPs, the ZIP) goes away however the answer ends: all sent, the client
gone, or the client holding the connection open without reading for ``STALL_S`` (an answer of
hundreds of megabytes once held its files for as long as the client liked). Removal happens in a
``finally`` of the ASGI call itself rather than in a background task, which Starlette skips when
the send fails.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

log = logging.getLogger("assetgate.convert")

CHUNK_BYTES: Final = 256 * 1024
# A client that takes no chunk for this long is dropped (the server closes the connection).
STALL_S: Final = 30.0


def remove_workdir(workdir: Path) -> None:
    shutil.rmtree(workdir, ignore_errors=True)


class WorkdirFileResponse(Response):
    def __init__(
        self,
        path: Path,
        workdir: Path,
        *,
        media_type: str,
        headers: Mapping[str, str],
        stall_s: float | None = None,
    ) -> None:
        super().__init__(None, headers=headers, media_type=media_type)
        self.path, self.workdir = path, workdir
        self.stall_s = STALL_S if stall_s is None else stall_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            async with await anyio.open_file(self.path, "rb") as source:
                while chunk := await source.read(CHUNK_BYTES):
                    with anyio.fail_after(self.stall_s):
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except TimeoutError:
            # Returning with the answer unfinished makes the server close the connection.
            log.info("conversion answer dropped: the client took nothing for %g s", self.stall_s)
        except OSError:
            pass  # the client left (ASGI 2.4 servers raise from send): nothing to finish
        finally:
            remove_workdir(self.workdir)  # a few files: quick, and must run even when cancelled
