"""``max_bytes``: the highest quality up to the requested one whose encoding fits the budget.

Pure over an ``encode(quality) -> bytes`` callable, so the search is tested without pixels and
the render passes the real encoder over an image computed once (``copy_memory``). Sizes grow with
quality almost monotonically, so a binary search over ``MIN_QUALITY..quality`` finds it: the
requested quality first (most images fit at once: one encode), then at most
``ceil(log2(quality - MIN_QUALITY + 1))`` more - 8 encodes in all from the default 85.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

#: The lowest quality the search goes down to: below it JPEG, WebP and AVIF fall apart.
MIN_QUALITY: Final = 10


@dataclass(frozen=True, slots=True)
class Fitted:
    body: bytes
    quality: int
    met: bool  # False: even MIN_QUALITY is over the budget; body is the smallest encoding
    encodes: int


def fit_quality(encode: Callable[[int], bytes], quality: int, max_bytes: int) -> Fitted:
    first = encode(quality)
    if len(first) <= max_bytes or quality <= MIN_QUALITY:
        return Fitted(first, quality, len(first) <= max_bytes, 1)
    low, high, encodes = MIN_QUALITY, quality - 1, 1
    best: tuple[bytes, int] | None = None
    smallest = (first, quality)
    while low <= high:
        middle = (low + high) // 2
        body = encode(middle)
        encodes += 1
        if len(body) <= max_bytes:
            best, low = (body, middle), middle + 1
        else:
            if len(body) < len(smallest[0]):
                smallest = (body, middle)
            high = middle - 1
    if best is not None:
        return Fitted(best[0], best[1], True, encodes)
    return Fitted(smallest[0], smallest[1], False, encodes)
