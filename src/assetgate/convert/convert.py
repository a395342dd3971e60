"""One uploaded file -> one WebP file, over the optimizer's imaging floor (sync, CPU-bound).

The conversion interface accepts exactly what the optimizer decodes: the same magic-byte
allow-list (``imaging.formats.sniff``), the same header probe with the same pixel limit, the
same strict decoders (``imaging.load``) and the same encoder table (``imaging.encode``). So the
two interfaces cannot drift apart on what counts as a supported image or a bomb. Only pixels reach
the encoder: no EXIF, GPS, XMP or ICC in the output.

Split in two on purpose: ``inspect`` reads only the header (cheap, done for every file before any
work starts, so a bad third file is reported before the first two were converted for nothing);
``to_webp`` decodes and encodes and is what runs through the WorkGate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from assetgate.convert.options import ConvertOptions
from assetgate.cpu import stop
from assetgate.errors import AppError
from assetgate.imaging.encode import encode, encode_webp_still, streams_webp
from assetgate.imaging.formats import HEAD_BYTES, WEBP_MAX_SIDE, InputFormat, sniff
from assetgate.imaging.frames import frame_geometry
from assetgate.imaging.integrity import tolerating_harmless
from assetgate.imaging.limits import DecodeLimits, check_animation
from assetgate.imaging.load import SourceInfo, decoding, open_image, probe
from assetgate.imaging.pillow import to_pillow


@dataclass(frozen=True, slots=True)
class Inspected:
    fmt: InputFormat
    info: SourceInfo


@dataclass(frozen=True, slots=True)
class Converted:
    width: int
    height: int
    pages: int
    size: int


def inspect(source: Path, filename: str, limits: DecodeLimits) -> Inspected:
    """Format by magic bytes and a header-only probe; AppError 413/415/501 from the floor."""
    with source.open("rb") as stream:
        head = stream.read(HEAD_BYTES)
    # The client's file name is only consulted for TGA, which has no magic number.
    fmt = sniff(head, name=filename)
    if fmt is None:
        raise AppError.unsupported_media("its content is not an image format this server reads")
    info = probe(source, fmt, limits)
    if info.animated:  # conversion keeps every frame
        check_animation(info, max_pixels=limits.max_pixels, max_frames=limits.max_frames)
    if max(info.width, info.height) > WEBP_MAX_SIDE:
        raise AppError.too_large(
            f"it is {info.width}x{info.height} px and WebP holds at most {WEBP_MAX_SIDE} px a side"
        )
    return Inspected(fmt, info)


#: Below this a WebP may grow any number of times its upload (a 300-byte PNG of a photo-like
#: thumbnail can): the growth cap is for amplification, not for small files.
GROWTH_FLOOR_BYTES: Final = 1024 * 1024


def to_webp(
    source: Path,
    destination: Path,
    inspected: Inspected,
    options: ConvertOptions,
    limits: DecodeLimits,
    max_output_bytes: int,
    max_growth: float = 0.0,
) -> Converted:
    """Decode strictly (EXIF-rotated, sRGB, every frame of an animation), encode WebP, write it.

    A WebP over ``max_output_bytes`` is a 413 and never reaches the disk: a small, highly
    compressible PNG at ``quality=100`` can encode to 180 times its size (docs/convert.md). So is
    one over ``max_growth`` times its upload once it is over ``GROWTH_FLOOR_BYTES`` (issue 35: a
    55 KB PNG made a 40.5 MB WebP, 740x, within the caps); 0 turns that check off.
    """

    def decode_and_encode() -> tuple[bytes, int, int, int]:
        with decoding():
            image = open_image(
                source,
                inspected.fmt,
                limits,
                animated=True,
                info=inspected.info,
                one_pass=True,  # a still is read once, top to bottom, by to_pillow
            )
            width, height, pages = frame_geometry(image)
            encoder = {"quality": options.quality, "effort": options.effort}
            if pages > 1 or streams_webp(width * height):  # libvips' saver reads it once
                webp = encode(image, "webp", lossless=options.lossless, **encoder)
                return webp, width, height, pages
            still = to_pillow(image)
            del image  # frees the decoded buffer before the encoder allocates its planes
            stop.check()  # Pillow's encoder cannot be killed half-way: do not start it late
            return encode_webp_still(still, lossless=options.lossless, **encoder), width, height, 1

    data, width, height, pages = tolerating_harmless(decode_and_encode)
    if len(data) > max_output_bytes:
        raise AppError.too_large(
            f"converts to {len(data)} bytes of WebP, over the limit of {max_output_bytes} bytes"
            " per file (ASSETGATE_CONVERT_OUTPUT_MAX_BYTES)"
        )
    uploaded = source.stat().st_size
    if max_growth and len(data) > max(GROWTH_FLOOR_BYTES, max_growth * uploaded):
        raise AppError.too_large(
            f"converts to {len(data)} bytes of WebP, {len(data) / max(uploaded, 1):.0f} times "
            f"its {uploaded} bytes, over the limit of {max_growth:g} times "
            "(ASSETGATE_CONVERT_MAX_GROWTH)"
        )
    destination.write_bytes(data)
    return Converted(width=width, height=height, pages=pages, size=len(data))
