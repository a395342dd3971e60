"""Refuse a path holding a control character (``%0A``, ``%00``, ``%7F``…) before routing.

Starlette compiles a route like ``/metrics`` to ``^/metrics$``, and ``$`` also matches before a
final newline: ``GET /metrics%0A`` answered the metrics, past an edge that blocks
``location = /metrics``. No file, package or route of the service has a control character in its
name, so such a path is a 404 for every route at once, the same JSON as any missing path.
"""

from __future__ import annotations

import re
from typing import Final

from starlette.types import ASGIApp, Receive, Scope, Send

from assetgate.errors import NotFound
from assetgate.web.responses import error_response

# C0, DEL and C1: Unicode's "Cc" category.
CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class RefuseControlCharacters:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and CONTROL.search(scope["path"]):
            head = scope["method"] == "HEAD"
            await error_response(NotFound(), head=head)(scope, receive, send)
            return
        await self.app(scope, receive, send)
