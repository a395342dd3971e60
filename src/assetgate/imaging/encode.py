"""Encoders for the five output formats, driven by their ``Saver`` rows, metadata always stripped.

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

Each output format's saver, fixed options, effort knob and range stand in its row of
``imaging.formats.FORMATS`` (``saver_of``). Efforts are chosen by measurement (docs/optimizer.md
"Encoders"): WebP effort 4 (libwebp's default)
spends 6-7 % fewer bytes than effort 2 at equal SSIMULACRA2 for twice its encode CPU (an 800 px
photo: 26 against 13 ms); it was once effort 2, half of libwebp's default for
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

from assetgate.imaging.formats import DEFAULT_QUALITY, OUTPUT_FORMATS, OutputFormat, saver_of
from assetgate.imaging.frames import first_frame, is_animated
from assetgate.imaging.pillow import to_pillow
from assetgate.imaging.vips import killable

DEFAULT_EFFORT: Final[Mapping[OutputFormat, int]] = {
    fmt: saver_of(fmt).default_effort for fmt in OUTPUT_FORMATS
}
_WHITE: Final = [255, 255, 255]
_WEBP: Final = saver_of("webp")
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
    saver = saver_of(fmt)
    level = saver.default_effort if effort is None else effort
    if not saver.animates:
        image = first_frame(image)
    if saver.flattens_alpha and image.hasalpha():
        image = image.flatten(background=_WHITE[: image.bands - 1])
    animated = saver.pillow_still and is_animated(image)
    if saver.pillow_still and not animated and not streams_webp(image.width * image.height):
        return encode_webp_still(to_pillow(image), quality=quality, effort=level, lossless=lossless)
    options: dict[str, Any] = dict(saver.options)
    if saver.effort_option:
        low, high = saver.efforts
        options[saver.effort_option] = min(high, max(low, level))
    if saver.lossy:
        # A still WebP keeps quality 0 (Pillow's 0 is libwebp's 0 too); the others start at 1.
        low = 0 if saver.pillow_still and not animated else 1
        options["Q"] = min(100, max(low, quality))
    if saver.pillow_still:
        options["lossless"] = lossless
    return _save(image, saver.operation, **options)


def encode_near_lossless(image: pyvips.Image, level: int, effort: int | None = None) -> bytes:
    """WebP near-lossless (``quality=auto`` for graphics): libvips' saver, as Pillow's has no
    such mode; ``level`` 0..100 is the preprocessing strength (100 = lossless)."""
    effort = _WEBP.default_effort if effort is None else effort
    low, high = _WEBP.efforts
    return _save(image, _WEBP.operation, **_WEBP.options, near_lossless=True,
                 Q=min(100, max(0, level)), effort=min(high, max(low, effort)))  # fmt: skip


def encode_webp_still(
    still: PILImage.Image,
    *,
    quality: int = DEFAULT_QUALITY,
    effort: int = _WEBP.default_effort,
    lossless: bool = False,
) -> bytes:
    out = io.BytesIO()
    still.save(
        out,
        format="WEBP",
        quality=min(100, max(0, quality)),
        method=min(_WEBP.efforts[1], max(_WEBP.efforts[0], effort)),
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
