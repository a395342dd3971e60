"""Refuse a path holding a control character (``%0A``, ``%00``, ``%7F``…) before routing.

Starlette compiles a route like ``/metrics`` to ``^/metrics$``, and ``$`` also matches before a
final newline: ``GET /metrics%0A`` answered the metrics, past an edge that blocks
``location = /metrics``. No file, package or route of the service has a control character in its
name, so such a path is a 404 for every route at once, the same JSON as any missing path.
"""

from __future__ import annotations

import re
from typing import Final

from starlette.types import Scope

from assetgate.errors import NotFound

# C0, DEL and C1: Unicode's "Cc" category.
CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def control_refusal(scope: Scope) -> NotFound | None:
    """The 404 for a path with a control character (answered before routing by
    ``web.request_checks``)."""
    return NotFound() if CONTROL.search(scope["path"]) else None
