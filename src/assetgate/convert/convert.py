"""One uploaded file -> one WebP file (sync, CPU-bound: called through the WorkGate).

TEMPORARY: a minimal pyvips path until the imaging floor (imaging/formats, load, encode) lands.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyvips

from assetgate.convert.options import ConvertOptions
from assetgate.errors import AppError


@dataclass(frozen=True, slots=True)
class Converted:
    width: int
    height: int
    pages: int
    size: int


def check_image(source: Path, max_pixels: int) -> None:
    try:
        image = pyvips.Image.new_from_file(str(source), access="sequential")
    except pyvips.Error:
        raise AppError.unsupported_media() from None
    if image.width * image.height > max_pixels:
        raise AppError.too_large("image exceeds the pixel limit")


def to_webp(source: Path, destination: Path, options: ConvertOptions) -> Converted:
    image = pyvips.Image.new_from_file(str(source), access="sequential", fail_on="error")
    if image.get("vips-loader") in ("gifload", "webpload"):
        image = pyvips.Image.new_from_file(str(source), n=-1, access="sequential", fail_on="error")
    pages = image.get_n_pages() if image.get_typeof("n-pages") else 1
    if pages == 1:
        image = image.autorot()
    image.webpsave(
        str(destination),
        Q=options.quality,
        lossless=options.lossless,
        effort=options.effort,
        keep=pyvips.enums.ForeignKeep.NONE,
    )
    height = image.get("page-height") if pages > 1 else image.height
    return Converted(image.width, height, pages, destination.stat().st_size)
