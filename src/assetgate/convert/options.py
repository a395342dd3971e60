"""Form fields beyond the uploads -> ConvertOptions (pure; a rejection names the field).

The spec (§4.3) only defines ``images``; ``quality`` and ``lossless`` are ours, with the
optimizer's quality range and default so the two interfaces agree on what "85" means.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from assetgate.imaging.formats import DEFAULT_QUALITY
from assetgate.web.params import read_flag, require_int


@dataclass(frozen=True, slots=True)
class ConvertOptions:
    quality: int = DEFAULT_QUALITY
    lossless: bool = False
    effort: int = 2


def parse_options(fields: Mapping[str, str], *, effort: int) -> ConvertOptions:
    """``quality`` 0..100 (default 85) and ``lossless`` 0/1; anything else is a named 400."""
    return ConvertOptions(
        quality=require_int(fields, "quality", low=0, high=100, default=DEFAULT_QUALITY),
        lossless=read_flag(fields, "lossless"),
        effort=effort,
    )
