"""The size headers of a transformed answer (spec §2.3), the same for images and CSS/JS.

``X-Original-Size``, ``X-Compressed-Size`` and ``X-Compression-Ratio`` are written by the optimizer
and by the CSS/JS floor; one function keeps their format identical on both.
"""

from __future__ import annotations


def compression_ratio(original: int, compressed: int) -> str:
    """Reduction relative to the source, as ``<number>%`` (negative when the answer grew)."""
    if original <= 0:
        return "0.0%"
    return f"{(original - compressed) * 100 / original:.1f}%"


def savings_headers(original: int, compressed: int) -> dict[str, str]:
    return {
        "X-Original-Size": str(original),
        "X-Compressed-Size": str(compressed),
        "X-Compression-Ratio": compression_ratio(original, compressed),
    }
