"""The edge's cache key and the app's answer come from one reading of ``Accept``.

The nginx template keys its shared cache on a format bucket it reads from ``Accept`` with a map
of patterns, and sends that bucket along (``X-Assetgate-Format-Bucket``). A pattern cannot parse
RFC 9110 lists (quoted strings, parameters, repeated ranges), so for some spellings the edge and
the app would disagree, and the app's answer would be kept under another bucket's key: once
``Accept: image/webp;q=0,image/webp`` got WebP from the app, stored in nginx's ``auto`` bucket and
served to browsers without WebP. Here the app compares the edge's bucket with its own reading
(``web.negotiation.edge_bucket``) and, when they differ, marks the answer ``X-Accel-Expires: 0``:
nginx does not store it (and never passes that field on to the client). Only that client gets
the answer for its own header; nothing is kept for anyone else.

Nothing is trusted from the request: the header can only make an answer uncacheable at the edge.
"""

from __future__ import annotations

from typing import Final

from starlette.types import Message, Scope

from assetgate.web.negotiation import edge_bucket, joined_field

EDGE_BUCKET: Final = b"x-assetgate-format-bucket"
NOT_KEPT: Final = (b"x-accel-expires", b"0")


def disagrees(scope: Scope) -> bool:
    """Whether the edge named a format bucket other than the app's reading of ``Accept``."""
    edge: bytes | None = None
    accept: list[str] = []
    for name, value in scope["headers"]:
        if name == EDGE_BUCKET:
            edge = bytes(value)
        elif name == b"accept":
            accept.append(value.decode("latin-1"))
    if edge is None:
        return False
    return edge.decode("latin-1").strip() != edge_bucket(joined_field(accept))


def not_kept(message: Message) -> Message:
    """The answer's start, marked for nginx not to keep (replacing an edge lifetime it had)."""
    kept = [(k, v) for k, v in message.get("headers", []) if k.lower() != NOT_KEPT[0]]
    return {**message, "headers": [*kept, NOT_KEPT]}
