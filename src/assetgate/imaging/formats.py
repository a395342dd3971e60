"""Image formats by magic bytes: the strict allow-list of what assetgate decodes and encodes.

Decoding is routed by content, never by file extension (an extension is only a hint for TGA, which
has no magic number). Anything ``sniff`` does not recognise is answered with 415 upstream.

API:
- ``InputFormat``: ``jpeg png apng gif webp avif bmp tiff tga pnm heif`` (``INPUT_FORMATS``).
- ``OutputFormat``: ``jpeg png gif webp avif`` (``OUTPUT_FORMATS``); ``MEDIA_TYPES[fmt]`` its type.
- ``sniff(head, name=None) -> InputFormat | None``: ``head`` should be the first ``HEAD_BYTES`` of
  the file (a shorter head still works; APNG is then recognised only if its ``acTL`` chunk fits).
  ``name`` (the file name) is consulted only for TGA: ``.tga`` plus a header that validates.
- ``as_output(fmt)``: the output format a source is served as unchanged (``apng`` -> ``png``), or
  None for formats browsers cannot show (BMP, TIFF, TGA, PNM, HEIF).
- ``SourceInfo``: the header facts ``imaging.load.probe`` returns (kept here, free of pyvips, so
  pure planning code can take it).
- ``codec_disabled(fmt, disabled)``: True when configuration switched the codec off (-> 501).
"""

from __future__ import annotations

import struct
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, get_args

InputFormat = Literal[
    "jpeg", "png", "apng", "gif", "webp", "avif", "bmp", "tiff", "tga", "pnm", "heif"
]
OutputFormat = Literal["jpeg", "png", "gif", "webp", "avif"]

#: What a loader reads from: the bytes themselves, or a file path (a ``str`` is a path too).
ImageInput = bytes | bytearray | memoryview | Path | str

INPUT_FORMATS: Final[tuple[InputFormat, ...]] = get_args(InputFormat)
OUTPUT_FORMATS: Final[tuple[OutputFormat, ...]] = get_args(OutputFormat)

MEDIA_TYPES: Final[Mapping[OutputFormat, str]] = {
    "jpeg": "image/jpeg",
    "png": "image/png",
    "gif": "image/gif",
    "webp": "image/webp",
    "avif": "image/avif",
}

#: Quality of JPEG, WebP and AVIF output when none is asked for (optimizer and conversion alike).
DEFAULT_QUALITY: Final = 85

#: Formats whose frames we keep when animation is asked for.
ANIMATED_FORMATS: Final = frozenset({"gif", "webp", "apng"})

#: How much of a file ``sniff`` wants to see (PNG chunks before IDAT, ISOBMFF ``ftyp``).
HEAD_BYTES: Final = 64 * 1024
#: The WebP bitstream stores each side in 14 bits.
WEBP_MAX_SIDE: Final = 16383

# Names accepted in ASSETGATE_DISABLED_CODECS for each format (the format name always works).
_CODEC_ALIASES: Final[Mapping[str, InputFormat]] = {
    "jpg": "jpeg",
    "heic": "heif",
    "pbm": "pnm",
    "pgm": "pnm",
    "ppm": "pnm",
    "tif": "tiff",
}

_HEIF_BRANDS: Final = frozenset(
    {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"hevm", b"hevs", b"mif1", b"msf1"}
)
_AVIF_BRANDS: Final = frozenset({b"avif", b"avis"})
_BMP_DIB_SIZES: Final = frozenset({12, 16, 40, 52, 56, 64, 108, 124})
_TGA_TYPES: Final = frozenset({1, 2, 3, 9, 10, 11})
_TGA_DEPTHS: Final = frozenset({8, 15, 16, 24, 32})


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Header facts of a source image (see ``imaging.load.probe``)."""

    width: int
    height: int
    pages: int
    has_alpha: bool
    fmt: InputFormat
    orientation: int = 1
    progressive: bool = False  # a multi-scan JPEG (``imaging.jpeg_header``): costs more memory

    @property
    def pixels(self) -> int:
        return self.width * self.height

    @property
    def animated(self) -> bool:
        return self.pages > 1 and self.fmt in ANIMATED_FORMATS

    def decoded_bytes(self, *, all_frames: bool) -> int:
        """The decoded pixels alone: pixels x bands (8-bit sRGB, alpha or not) x frames. The
        WorkGate admits jobs by their measured peak instead (``imaging.cost``)."""
        frames = self.pages if all_frames and self.animated else 1
        return self.pixels * (4 if self.has_alpha else 3) * frames


def as_output(fmt: InputFormat) -> OutputFormat | None:
    if fmt == "apng":
        return "png"
    if fmt in OUTPUT_FORMATS:
        return fmt
    return None


def codec_disabled(fmt: InputFormat | OutputFormat, disabled: Collection[str]) -> bool:
    """``disabled`` holds codec names from configuration (``avif``, ``heic``, ``jpg``, ...)."""
    if not disabled:
        return False
    names = {_CODEC_ALIASES.get(name.strip().lower(), name.strip().lower()) for name in disabled}
    return fmt in names or (fmt == "apng" and "png" in names)


def sniff(head: bytes | memoryview, name: str | None = None) -> InputFormat | None:
    head = bytes(head[:HEAD_BYTES])
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "apng" if _png_is_animated(head) else "png"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "webp"
    if head.startswith((b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")):
        return "tiff"
    if len(head) >= 3 and head[0:1] == b"P" and head[1:2] in b"123456" and head[2:3].isspace():
        return "pnm"
    if _is_bmp(head):
        return "bmp"
    brand = _isobmff_brand(head)
    if brand is not None:
        return brand
    if name is not None and name.lower().endswith(".tga") and _is_tga(head):
        return "tga"
    return None


def _png_is_animated(head: bytes) -> bool:
    """APNG = an ``acTL`` chunk before the first ``IDAT`` (APNG spec §3)."""
    offset = 8
    while offset + 8 <= len(head):
        length, kind = struct.unpack(">I4s", head[offset : offset + 8])
        if kind == b"acTL":
            return True
        if kind in (b"IDAT", b"IEND"):
            return False
        offset += 12 + length
    return False


def _is_bmp(head: bytes) -> bool:
    if len(head) < 26 or not head.startswith(b"BM"):
        return False
    reserved, pixel_offset, dib_size = struct.unpack("<IIi", head[6:18])
    return reserved == 0 and dib_size in _BMP_DIB_SIZES and pixel_offset >= 14 + dib_size


def _isobmff_brand(head: bytes) -> InputFormat | None:
    """HEIF/AVIF: an ``ftyp`` box first; the major brand, else the compatible ones, decides."""
    if len(head) < 16 or head[4:8] != b"ftyp":
        return None
    size = struct.unpack(">I", head[0:4])[0]
    if size < 16 or size > len(head) or size % 4:
        return None
    major = head[8:12]
    compatible = {head[i : i + 4] for i in range(16, size, 4)}
    if major in _AVIF_BRANDS:
        return "avif"
    if major in _HEIF_BRANDS - {b"mif1", b"msf1"}:
        return "heif"
    if compatible & _AVIF_BRANDS:
        return "avif"
    if major in _HEIF_BRANDS or compatible & _HEIF_BRANDS:
        return "heif"
    return None


def _is_tga(head: bytes) -> bool:
    """TGA has no magic number: accept only a header whose every field is plausible."""
    if len(head) < 18:
        return False
    id_len, cmap_type, img_type = head[0], head[1], head[2]
    cmap_len, cmap_depth = struct.unpack("<HB", head[5:8])
    width, height, depth, descriptor = struct.unpack("<HHBB", head[12:18])
    if cmap_type not in (0, 1) or img_type not in _TGA_TYPES or depth not in _TGA_DEPTHS:
        return False
    if width == 0 or height == 0 or descriptor & 0xC0:
        return False
    if img_type in (1, 9) and (cmap_type != 1 or cmap_len == 0 or depth != 8):
        return False
    if cmap_type == 1 and cmap_depth not in (15, 16, 24, 32):
        return False
    return 18 + id_len <= len(head) or len(head) == HEAD_BYTES


# Extensions of the input formats the imaging floor accepts (spec §4.1 ``file`` row: JPEG,
# PNG/APNG, GIF, WebP, AVIF, BMP, TIFF, TGA, PBM, HEIC/HEIF). The extension is only a gate the spec
# asks for; the decoder is always chosen from the file's magic bytes.
IMAGE_EXTENSIONS: Final = frozenset(
    {
        "jpg", "jpeg", "jpe", "jfif", "png", "apng", "gif", "webp", "avif", "bmp", "dib",
        "tif", "tiff", "tga", "icb", "vda", "vst", "pbm", "pgm", "ppm", "pnm", "heic", "heif",
        "heics", "heifs", "hif",
    }
)  # fmt: skip
