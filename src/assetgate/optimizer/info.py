"""``info=1``: facts about the source image as JSON, from its header and one small decode.

What a page needs before the pixels: the displayed size (after EXIF orientation), format, frames,
alpha, colour space, file size, a dominant colour, and three placeholders - a BlurHash, a
ThumbHash (base64) and a tiny WebP as a ``data:`` URL (Next.js ``blurDataURL``). The decode is
shrink-on-load to at most ``SMALL`` px a side (a JPEG is DCT-scaled by 8 while it is read), so the
answer costs little more than reading the file's entropy-coded data (docs/benchmarks.md).
Encoders weighed (docs/optimizer.md): BlurHash with ``blurhash-python``, Wolt's C reference
encoder, over the pure-Python ``blurhash``; ThumbHash with numpy (``imaging/thumbhash.py``: the
reference encoder transcribed, as fast as the Rust crate's bindings, which have no arm64 or musl
wheels; the pure-Python ``thumbhash`` port takes 12 ms on 32x24 and fails on any image with
alpha). Both hash the one ``SMALL`` px image, as their authors recommend scaling first.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from typing import Any, Final

import blurhash
import pyvips

from assetgate.imaging.encode import encode_webp_still
from assetgate.imaging.formats import ImageInput, InputFormat, SourceInfo
from assetgate.imaging.limits import DecodeLimits
from assetgate.imaging.load import open_image
from assetgate.imaging.pillow import to_pillow
from assetgate.imaging.thumbhash import rgba_to_thumb_hash

#: Longest side of the small decode (the hashes' input) and of the ``data:`` placeholder.
SMALL: Final = 32
PLACEHOLDER: Final = 16
_SPACES: Final = {
    "srgb": "srgb", "rgb": "srgb", "b-w": "b-w", "cmyk": "cmyk", "rgb16": "rgb16",
    "grey16": "grey16", "scrgb": "scrgb", "lab": "lab", "multiband": "multiband",
}  # fmt: skip


def describe(
    src: ImageInput, fmt: InputFormat, info: SourceInfo, limits: DecodeLimits, *, size: int
) -> bytes:
    """The JSON body of ``info=1`` (``size``: the file's bytes)."""
    small = open_image(
        src, fmt, limits, size=_fit(info, SMALL), info=info, fast_shrink=True
    ).copy_memory()
    facts: dict[str, Any] = {
        "width": info.width,
        "height": info.height,
        "format": fmt,
        "frames": info.pages,
        "has_alpha": info.has_alpha,
        "orientation": info.orientation,
        "color_space": color_space(src, fmt),
        "bytes": size,
        **placeholders(small),
    }
    return json.dumps(facts, separators=(",", ":")).encode()


def placeholders(small: pyvips.Image) -> dict[str, str]:
    """Dominant colour, BlurHash, ThumbHash and the ``data:`` URL of one small sRGB image."""
    rgba = small if small.hasalpha() else small.bandjoin_const([255])
    if rgba.bands < 4:  # grey + alpha
        rgba = rgba.colourspace("srgb")
    hashed = to_pillow(rgba)
    width, height = hashed.size
    across, down = (4, 3) if width >= height else (3, 4)
    tiny = rgba.thumbnail_image(PLACEHOLDER, height=PLACEHOLDER)
    webp = encode_webp_still(to_pillow(tiny), quality=40)
    return {
        "dominant_color": dominant_color(hashed.tobytes()),
        "blurhash": blurhash.encode(hashed.convert("RGB"), across, down),
        "thumbhash": base64.b64encode(rgba_to_thumb_hash(width, height, hashed.tobytes())).decode(),
        "placeholder": "data:image/webp;base64," + base64.b64encode(webp).decode(),
    }


def dominant_color(rgba: bytes) -> str:
    """The mean of the most common colour bucket (4 bits a channel) of the opaque pixels, as
    ``#rrggbb``: a photo's sky, not the grey average of sky and grass."""
    pixels = [rgba[i : i + 3] for i in range(0, len(rgba), 4) if rgba[i + 3] >= 128]
    if not pixels:
        return "#000000"
    buckets = Counter(bytes(channel >> 4 for channel in pixel) for pixel in pixels)
    top = buckets.most_common(1)[0][0]
    members = [pixel for pixel in pixels if bytes(channel >> 4 for channel in pixel) == top]
    mean = [round(sum(pixel[i] for pixel in members) / len(members)) for i in range(3)]
    return "#{:02x}{:02x}{:02x}".format(*mean)


def color_space(src: ImageInput, fmt: InputFormat) -> str:
    """The source's colour space as libvips names it (``srgb``, ``b-w``, ``cmyk``, ``rgb16``,
    ``grey16``...), read from the header."""
    try:
        if isinstance(src, bytes | bytearray | memoryview):
            image = pyvips.Image.new_from_buffer(bytes(src), "", access="sequential")
        else:
            image = pyvips.Image.new_from_file(str(src), access="sequential")
        return _SPACES.get(str(image.interpretation), str(image.interpretation))
    except pyvips.Error:  # formats libvips leaves to Pillow (BMP, TGA): decoded as sRGB
        return "srgb"


def _fit(info: SourceInfo, side: int) -> tuple[int, int]:
    scale = min(1.0, side / max(info.width, info.height))
    return max(1, round(info.width * scale)), max(1, round(info.height * scale))
