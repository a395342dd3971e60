"""The one cache-status header of every file answer: ``Cache-Status`` (RFC 9211).

Every part's file answers (optimizer images, CSS/JS, package files) say in this one header whether
the variant was answered without work (``hit``: held, from a lower cache tier, or a 304 from the
version's validators), made now and kept (``fwd=miss; stored``), or answered with no cache in the
way (``fwd=bypass``: the file as it is, the result cache turned off, or a file being rewritten).
The access log reads it back (``operations.observe``) as ``HIT``, ``MISS`` or ``BYPASS``, the
values of the optimizer's own ``X-Optimizer-Cache`` (docs/caching.md "Cache-Status").
"""

from __future__ import annotations

from typing import Final, Literal

CacheState = Literal["HIT", "MISS", "BYPASS"]

HEADER: Final = "Cache-Status"
#: The cache's name in the header: a proxy in front adds its own member after ours.
CACHE_NAME: Final = "assetgate"
VALUES: Final[dict[CacheState, str]] = {
    "HIT": f"{CACHE_NAME}; hit",
    "MISS": f"{CACHE_NAME}; fwd=miss; stored",
    "BYPASS": f"{CACHE_NAME}; fwd=bypass",
}
_STATES: Final[dict[bytes, CacheState]] = {
    value.encode("latin-1"): state for state, value in VALUES.items()
}


def cache_state(value: bytes) -> CacheState | None:
    """Our member of a ``Cache-Status`` value as the access log's state; None if not ours."""
    return _STATES.get(value)
