"""Encoders for the five output formats, one table of saver options, metadata always stripped.

Efforts are chosen for a server, not an archive: WebP effort 2 costs half of libwebp's default for
about 2 % more bytes, and AVIF effort 2 keeps an 800 px encode well under half a second. Every
saver runs with ``keep="none"``: EXIF (GPS!), XMP, IPTC and ICC are dropped; pixels are already
sRGB (``load.to_srgb8``), which is what a browser assumes for an untagged image.

API:
- ``encode(image, fmt, *, quality=85, effort=None, lossless=False) -> bytes``.
  ``quality`` 0..100 (JPEG, WebP, AVIF; ignored by PNG/GIF); ``effort`` overrides the format's
  default speed knob (WebP 0..6, AVIF 0..9, PNG zlib level 0..9, GIF 1..10); ``lossless`` for WebP
  (PNG and GIF are lossless anyway). A toilet-roll image (``page-height`` set) stays animated for
  ``gif`` and ``webp``; the other formats get its first frame. JPEG flattens alpha onto white.
- ``DEFAULT_EFFORT[fmt]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import pyvips

from assetgate.imaging.formats import OutputFormat

DEFAULT_EFFORT: Final[Mapping[OutputFormat, int]] = {
    "jpeg": 0,
    "png": 6,
    "gif": 4,
    "webp": 2,
    "avif": 2,
}
_WHITE: Final = [255, 255, 255]


def encode(
    image: pyvips.Image,
    fmt: OutputFormat,
    *,
    quality: int = 85,
    effort: int | None = None,
    lossless: bool = False,
) -> bytes:
    level = DEFAULT_EFFORT[fmt] if effort is None else effort
    q = min(100, max(1, quality))
    if fmt not in ("gif", "webp"):
        image = first_frame(image)
    if fmt == "jpeg":
        if image.hasalpha():
            image = image.flatten(background=_WHITE[: image.bands - 1])
        return _save(image, "jpegsave_buffer", Q=q, optimize_coding=True)
    if fmt == "png":
        return _save(image, "pngsave_buffer", compression=min(9, max(0, level)))
    if fmt == "gif":
        return _save(image, "gifsave_buffer", effort=min(10, max(1, level)))
    if fmt == "webp":
        options: dict[str, Any] = {"Q": q, "effort": min(6, max(0, level)), "lossless": lossless}
        return _save(image, "webpsave_buffer", **options)
    return _save(
        image,
        "heifsave_buffer",
        Q=q,
        effort=min(9, max(0, level)),
        compression="av1",
        bitdepth=8,
    )


def first_frame(image: pyvips.Image) -> pyvips.Image:
    if not image.get_typeof("page-height"):
        return image
    page_height = int(image.get("page-height"))
    if 0 < page_height < image.height:
        image = image.crop(0, 0, image.width, page_height)
    return image


def _save(image: pyvips.Image, saver: str, **options: Any) -> bytes:
    data = pyvips.Operation.call(saver, image, keep="none", **options)
    assert isinstance(data, bytes)
    return data
