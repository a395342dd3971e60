"""Encoders for the five output formats, one table of saver options, metadata always stripped.

A still WebP is encoded by the libwebp inside Pillow's wheel, animations by libvips' (which carries
the frame delays, loop count and keyframes over from the decoder's metadata). With the same settings
(quality, method, alpha quality 100, no ``exact``) both write byte-identical files, but Pillow's
encodes a photo in about 20 % less CPU time than pyvips-binary's (3 MP JPEG: 188 vs 233 ms; see
``bench/convert.py``). Pillow releases the GIL inside ``WebPEncode``, so encodes overlap. From
``STREAMED_WEBP_PIXELS`` on, a still goes through libvips' saver too: it pulls the pipeline's
pixels straight into libwebp's picture, where Pillow needs the whole image decoded into a buffer
of its own first and then copies it into the picture as ARGB (12 MP: 6.3 instead of 14.4 bytes a
pixel for RGB, 37 instead of 44 with a noisy alpha; ~8 % more CPU; docs/benchmarks.md "Memory
peak of one image job"). Either encoder is killed only while it pulls pixels, not inside
libwebp's encode.

Efforts are chosen by measurement (docs/optimizer.md "Encoders"): WebP effort 4 (libwebp's default)
spends 6-7 % fewer bytes than effort 2 at equal SSIMULACRA2 for twice its encode CPU (an 800 px
photo: 26 against 13 ms); before issue 41 it was effort 2, half of libwebp's default for
about 2 % more bytes; AVIF effort 0 (aom speed 9) encodes an 800 px photo in a fifth of effort 2's
time for the same bytes and PSNR (docs/benchmarks.md, "AVIF against WebP"). Every
saver runs with ``keep="none"``: EXIF (GPS!), XMP, IPTC and ICC are dropped; pixels are already
sRGB (``load.to_srgb8``), which is what a browser assumes for an untagged image.

API:
- ``encode(image, fmt, *, quality=DEFAULT_QUALITY, effort=None, lossless=False) -> bytes``.
  ``quality`` 0..100 (JPEG, WebP, AVIF; ignored by PNG/GIF; JPEG and AVIF start at 1);
  ``effort`` overrides the format's default speed knob (WebP 0..6, AVIF 0..9, PNG zlib level
  0..9, GIF 1..10); ``lossless`` for WebP (PNG and GIF are lossless anyway). A toilet-roll
  image (``page-height`` set) stays animated for ``gif`` and ``webp``; the other formats get its
  first frame. JPEG flattens alpha onto white.
- ``encode_webp_still(still, ...)``: the still WebP encoder on a Pillow image (``to_pillow``),
  for a caller that drops its decoded image before the encoder allocates its planes.
- ``DEFAULT_EFFORT[fmt]``; ``streams_webp(pixels)``: a still WebP of this size goes through
  libvips' saver.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any, Final

import pyvips
from PIL import Image as PILImage

from assetgate.imaging.formats import DEFAULT_QUALITY, OutputFormat
from assetgate.imaging.frames import first_frame, is_animated
from assetgate.imaging.pillow import to_pillow
from assetgate.imaging.vips import killable

DEFAULT_EFFORT: Final[Mapping[OutputFormat, int]] = {
    "jpeg": 0,
    "png": 6,
    "gif": 4,
    "webp": 4,
    "avif": 0,
}
_WHITE: Final = [255, 255, 255]
#: libvips' JPEG saver options (mozjpeg's, chosen by measurement: docs/optimizer.md "Encoders").
#: Table 2 only: progressive scans would save another 1-3 % for +50 % encode CPU, which the
#: cold render's parity with sharp does not afford (docs/optimizer.md "Encoders").
JPEG_OPTIONS: Final[Mapping[str, Any]] = {"optimize_coding": True, "quant_table": 2}
#: Output pixels from which a still WebP is encoded by libvips' saver (memory over CPU).
STREAMED_WEBP_PIXELS: Final = 4_000_000


def streams_webp(pixels: int) -> bool:
    return pixels >= STREAMED_WEBP_PIXELS


def encode(
    image: pyvips.Image,
    fmt: OutputFormat,
    *,
    quality: int = DEFAULT_QUALITY,
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
        return _save(image, "jpegsave_buffer", Q=q, **JPEG_OPTIONS)
    if fmt == "png":
        return _save(image, "pngsave_buffer", compression=min(9, max(0, level)))
    if fmt == "gif":
        return _save(image, "gifsave_buffer", effort=min(10, max(1, level)))
    animated = is_animated(image)
    if fmt == "webp" and not animated and not streams_webp(image.width * image.height):
        return encode_webp_still(to_pillow(image), quality=quality, effort=level, lossless=lossless)
    if fmt == "webp":
        # Pillow's quality 0 is libwebp's 0 too; alpha_q=100 as Pillow's alpha_quality.
        options: dict[str, Any] = {"effort": min(6, max(0, level)), "lossless": lossless}
        options["Q"] = q if animated else min(100, max(0, quality))
        return _save(image, "webpsave_buffer", alpha_q=100, **options)
    return _save(
        image,
        "heifsave_buffer",
        Q=q,
        effort=min(9, max(0, level)),
        compression="av1",
        bitdepth=8,
    )


def encode_near_lossless(image: pyvips.Image, level: int, effort: int | None = None) -> bytes:
    """WebP near-lossless (``quality=auto`` for graphics): libvips' saver, as Pillow's has no
    such mode; ``level`` 0..100 is the preprocessing strength (100 = lossless)."""
    effort = DEFAULT_EFFORT["webp"] if effort is None else effort
    return _save(image, "webpsave_buffer", alpha_q=100, near_lossless=True,
                 Q=min(100, max(0, level)), effort=min(6, max(0, effort)))  # fmt: skip


def encode_webp_still(
    still: PILImage.Image,
    *,
    quality: int = DEFAULT_QUALITY,
    effort: int = DEFAULT_EFFORT["webp"],
    lossless: bool = False,
) -> bytes:
    out = io.BytesIO()
    still.save(
        out,
        format="WEBP",
        quality=min(100, max(0, quality)),
        method=min(6, max(0, effort)),
        lossless=lossless,
        alpha_quality=100,
        exact=False,
    )
    return out.getvalue()


def _save(image: pyvips.Image, saver: str, **options: Any) -> bytes:
    with killable(image) as target:
        data = pyvips.Operation.call(saver, target, keep="none", **options)
    assert isinstance(data, bytes)
    return data
