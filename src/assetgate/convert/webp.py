"""WebP encoding for the conversion interface: Pillow's libwebp for still images.

Why not ``imaging.encode`` for everything: with the same libwebp settings (quality, method,
alpha quality 100, no ``exact``) both produce byte-identical files, but measured on this project's
machine the libwebp inside Pillow's wheel encodes a photo in about 20 % less CPU time than the one
inside pyvips-binary (3 MP JPEG: 188 vs 233 ms; see ``bench/convert.py``). For an interface whose
whole job is WebP encoding that is the difference between matching the ``cwebp`` command line and
trailing it. Animations keep going through ``imaging.encode`` (libvips' animated encoder handles
the frame delays, loop count and keyframes from the decoder's metadata).

The pixels cross from libvips to Pillow as one 4-byte-per-pixel buffer that Pillow maps without
copying (RGBX or RGBA); the libvips image is released before the encoder allocates its own planes.
Nothing but pixels crosses, so no EXIF, XMP or ICC can reach the output. Pillow releases the GIL
inside ``WebPEncode``, so encodes on different WorkGate threads overlap.

TEMPORARY home: this belongs beside ``imaging.encode`` (the optimizer would gain the same 20 %);
it lives here until the imaging floor adopts it.
"""

from __future__ import annotations

import io

import pyvips
from PIL import Image

from assetgate.imaging.encode import encode


def is_animated(image: pyvips.Image) -> bool:
    if not image.get_typeof("page-height"):
        return False
    page_height = int(image.get("page-height"))
    return 0 < page_height < int(image.height)


def to_pillow(image: pyvips.Image) -> Image.Image:
    """A still 8-bit sRGB or grey image (as ``open_image`` returns it) -> Pillow RGBX/RGBA.

    Computes the libvips pipeline (the decode happens here). The caller should drop its own
    reference to ``image`` right after, so the decoded buffer is freed before encoding.
    """
    if image.bands in (1, 2):
        image = image.colourspace("srgb")
    mode = "RGBA" if image.bands == 4 else "RGBX"
    if image.bands == 3:
        image = image.bandjoin(255)
    pixels = image.write_to_memory()
    return Image.frombuffer(mode, (image.width, image.height), pixels, "raw", mode, 0, 1)


def encode_still(still: Image.Image, *, quality: int, effort: int, lossless: bool) -> bytes:
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


def encode_animation(image: pyvips.Image, *, quality: int, effort: int, lossless: bool) -> bytes:
    return encode(image, "webp", quality=quality, effort=effort, lossless=lossless)
