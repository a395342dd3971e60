"""A request whose URL is longer than ASSETGATE_MAX_URL_BYTES is a 414 JSON error, at once.

The HTTP parser has a limit of its own (httptools: a request target of 65,535 bytes; h11: the
whole head, raised above this limit by ``assetgate serve``) and answers past it with a plain-text
400 the client cannot parse. This limit sits below it, so every URL the parser lets through and
we refuse gets the JSON Error object of spec §2.2 (docs/configuration.md, "Server").
"""

from __future__ import annotations

from typing import Final

from starlette.types import Scope

from assetgate.errors import AppError

#: The request target httptools accepts at most (longer: its own text/plain 400).
PARSER_MAX_TARGET: Final = 65_535
#: Room for the headers in h11's head limit, beside the longest URL.
HEADERS_ROOM: Final = 64 * 1024


def h11_head_limit(max_url_bytes: int) -> int:
    return max_url_bytes + HEADERS_ROOM


def url_bytes(scope: Scope) -> int:
    """Bytes of the request target as sent: path, ``?`` and query string, still percent-encoded."""
    raw_path = scope.get("raw_path")
    path = len(raw_path) if raw_path is not None else len(scope["path"].encode())
    query = len(scope.get("query_string", b""))
    return path + (1 + query if query else 0)


def too_long(scope: Scope, max_bytes: int) -> AppError | None:
    """The 414 for a URL over ``max_bytes`` (answered before routing by
    ``web.request_checks``), else None."""
    if url_bytes(scope) <= max_bytes:
        return None
    return AppError(
        414,
        f"URL longer than {max_bytes} bytes (ASSETGATE_MAX_URL_BYTES)",
        headers={"Connection": "close"},
    )
