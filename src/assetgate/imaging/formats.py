"""Image formats: one table row per format, and sniffing by magic bytes (the strict allow-list).

Everything the imaging floor and the optimizer's planning know about one format stands in its row
of ``FORMATS`` (an ``ImageFormat``): how it is recognised, the names and extensions it goes by,
the header checks run before any decoder sees it, which decoder reads it and how, and, for the
five output formats, its ``Saver`` (libvips' saver, its options and efforts, the media type, the
limits of the format). Code asks the row (``FORMATS[fmt]``, looked up once per decode or encode)
instead of testing the format's name, so another format is one more row.

Decoding is routed by content, never by file extension (an extension is only a hint for TGA, which
has no magic number). Anything ``sniff`` does not recognise is answered with 415 upstream. This
module stays pure (no pyvips, no Pillow): loaders and savers are named here by libvips' operation
and Pillow's format names, and the checks by ``HeaderCheck`` names that ``imaging.prechecks``
runs.

API:
- ``InputFormat``: ``jpeg png apng gif webp avif bmp tiff tga pnm heif`` (``INPUT_FORMATS``).
- ``OutputFormat``: ``jpeg png gif webp avif`` (``OUTPUT_FORMATS``); ``MEDIA_TYPES[fmt]`` its type.
- ``FORMATS[fmt]``: the format's ``ImageFormat``; ``saver_of(fmt)`` an output format's ``Saver``.
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
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
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

#: Quality of JPEG, WebP and AVIF output when none is asked for (optimizer and conversion alike).
DEFAULT_QUALITY: Final = 85

#: How much of a file ``sniff`` wants to see (PNG chunks before IDAT, ISOBMFF ``ftyp``).
HEAD_BYTES: Final = 64 * 1024
#: The WebP bitstream stores each side in 14 bits.
WEBP_MAX_SIDE: Final = 16383

#: A check of the file's own markers before any decoder runs (``imaging.prechecks.check_header``):
#: ``jpeg_scans`` counts a JPEG's scans (413 over ``ASSETGATE_MAX_JPEG_SCANS``, 415 for a
#: progressive file cut between scans); ``coded_size`` reads a HEIF/AVIF primary item's coded
#: size (413 over the pixel limit before libheif allocates it); ``gif_screen`` grows a GIF's
#: screen to every frame's extent (413 likewise).
HeaderCheck = Literal["jpeg_scans", "coded_size", "gif_screen"]

#: When Pillow decodes a format instead of libvips: ``always`` (libvips has no loader),
#: ``frames`` (APNG: every frame; libvips' PNG loader sees the first), ``refused`` (TIFF: a header
#: libvips refuses, or old-style JPEG compression), ``hevc`` (HEIF coded with HEVC, through
#: pillow-heif: the wheel's libheif decodes AV1 only).
PillowUse = Literal["always", "frames", "refused", "hevc"]


@dataclass(frozen=True, slots=True)
class Saver:
    """How an output format is written (``imaging.encode``) and what it holds."""

    operation: str  # libvips' saver
    media_type: str
    default_effort: int  # the saver's speed knob when none is asked for (docs/optimizer.md)
    effort_option: str = ""  # that knob's option name ("": the saver takes none)
    efforts: tuple[int, int] = (0, 0)  # its range
    options: Mapping[str, object] = field(default_factory=dict)  # fixed options
    lossy: bool = False  # takes ``quality`` (``Q``), so ``max_bytes`` and ``quality=auto`` too
    animates: bool = False  # keeps an animation's frames (others get the first frame)
    flattens_alpha: bool = False  # no alpha channel: transparency goes onto white
    max_side: int | None = None  # the largest side the bitstream stores (413 above it)
    #: Shown by every browser: the source's own bytes may stand in for a re-encode.
    everywhere: bool = False
    #: A still small enough (``encode.streams_webp``) goes through Pillow's encoder (less CPU).
    pillow_still: bool = False


@dataclass(frozen=True, slots=True)
class ImageFormat:
    """Everything about one input format, in one place (see the module's docstring)."""

    name: InputFormat
    label: str  # as messages name it
    magic: Callable[[bytes, str | None], bool]  # ``sniff``: head (and file name) -> is it?
    extensions: frozenset[str]  # the spec's ``file`` extensions (a gate only, never the decoder)
    #: Names in ASSETGATE_DISABLED_CODECS that switch it off (its own name and aliases).
    codec_names: frozenset[str]
    served_as: OutputFormat | None = None  # served unchanged as (None: browsers cannot show it)
    saver: Saver | None = None  # an output format's saver
    animated: bool = False  # its frames are kept when animation is asked for
    header_checks: tuple[HeaderCheck, ...] = ()  # before the header probe
    #: Before the decode: every frame's data decoded once by Pillow (libnsgif drops a cut one)
    #: and, after the probe, the trailer looked for.
    frames_checked: bool = False
    vips_loader: str | None = None  # libvips' ``*load_source`` (None: Pillow alone decodes it)
    pillow_name: str | None = None  # Pillow's decoder, pinned (``formats=[…]``)
    pillow_use: PillowUse | None = None
    exif_orientation: bool = True  # an EXIF orientation turns it (HEIF/AVIF carry their own)
    #: JPEG: libjpeg reports cut scan data only as a warning, so the decode fails on warnings
    #: (``integrity.jpeg_fail_on``) and a missing EOI is put back first (``complete_jpeg``).
    warns_when_cut: bool = False
    dct_shrink: bool = False  # libjpeg's DCT scaling shrinks it while loading (1/2, 1/4, 1/8)
    strip_decoded: bool = False  # libvips decodes it in strips of rows (measured: ``imaging.cost``)
    may_be_float: bool = False  # float samples (TIFF): scaled by ``to_srgb8`` before a reduce
    checks_strips: bool = False  # TIFF via Pillow: every strip or tile must lie inside the file

    @property
    def saved(self) -> Saver:
        """The saver of an output format (``served_as`` is this format itself)."""
        assert self.saver is not None, self.name
        return self.saver


_PNG: Final = b"\x89PNG\r\n\x1a\n"
_HEIF_BRANDS: Final = frozenset(
    {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"hevm", b"hevs", b"mif1", b"msf1"}
)
_AVIF_BRANDS: Final = frozenset({b"avif", b"avis"})
_BMP_DIB_SIZES: Final = frozenset({12, 16, 40, 52, 56, 64, 108, 124})
_TGA_TYPES: Final = frozenset({1, 2, 3, 9, 10, 11})
_TGA_DEPTHS: Final = frozenset({8, 15, 16, 24, 32})


def _starts(*prefixes: bytes) -> Callable[[bytes, str | None], bool]:
    return lambda head, name: head.startswith(prefixes)


def _names(*names: str) -> frozenset[str]:
    return frozenset(names)


#: Every format, in the order ``sniff`` tries them (APNG before PNG: both start alike).
FORMATS: Final[Mapping[InputFormat, ImageFormat]] = {
    row.name: row
    for row in (
        ImageFormat(
            "jpeg",
            "JPEG",
            _starts(b"\xff\xd8\xff"),
            _names("jpg", "jpeg", "jpe", "jfif"),
            _names("jpeg", "jpg"),
            served_as="jpeg",
            # mozjpeg's options, chosen by measurement (docs/optimizer.md "Encoders"): table 2
            # only; progressive scans would save another 1-3 % for +50 % encode CPU, which the
            # cold render's parity with sharp does not afford.
            saver=Saver(
                "jpegsave_buffer",
                "image/jpeg",
                default_effort=0,
                options={"optimize_coding": True, "quant_table": 2},
                lossy=True,
                flattens_alpha=True,
                everywhere=True,
            ),
            header_checks=("jpeg_scans",),
            vips_loader="jpegload_source",
            warns_when_cut=True,
            dct_shrink=True,
            strip_decoded=True,
        ),
        ImageFormat(
            "apng",
            "APNG",
            lambda head, name: head.startswith(_PNG) and _png_is_animated(head),
            _names("apng"),
            _names("apng", "png"),  # switching PNG off switches its animated kind off too
            served_as="png",
            animated=True,
            vips_loader="pngload_source",  # the first frame
            pillow_name="PNG",
            pillow_use="frames",
        ),
        ImageFormat(
            "png",
            "PNG",
            _starts(_PNG),
            _names("png"),
            _names("png"),
            served_as="png",
            saver=Saver(
                "pngsave_buffer",
                "image/png",
                default_effort=6,
                effort_option="compression",  # zlib's level
                efforts=(0, 9),
                everywhere=True,
            ),
            vips_loader="pngload_source",
            strip_decoded=True,
        ),
        ImageFormat(
            "gif",
            "GIF",
            _starts(b"GIF87a", b"GIF89a"),
            _names("gif"),
            _names("gif"),
            served_as="gif",
            saver=Saver(
                "gifsave_buffer",
                "image/gif",
                default_effort=4,
                effort_option="effort",
                efforts=(1, 10),
                animates=True,
                everywhere=True,
            ),
            animated=True,
            header_checks=("gif_screen",),
            frames_checked=True,
            vips_loader="gifload_source",
        ),
        ImageFormat(
            "webp",
            "WebP",
            lambda head, name: head.startswith(b"RIFF") and head[8:12] == b"WEBP",
            _names("webp"),
            _names("webp"),
            served_as="webp",
            # Effort 4 (libwebp's default) by measurement: docs/optimizer.md "Encoders".
            saver=Saver(
                "webpsave_buffer",
                "image/webp",
                default_effort=4,
                effort_option="effort",
                efforts=(0, 6),
                options={"alpha_q": 100},  # as Pillow's alpha_quality
                lossy=True,
                animates=True,
                max_side=WEBP_MAX_SIDE,
                pillow_still=True,
            ),
            animated=True,
            vips_loader="webpload_source",
        ),
        ImageFormat(
            "tiff",
            "TIFF",
            _starts(b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"),
            _names("tif", "tiff"),
            _names("tiff", "tif"),
            vips_loader="tiffload_source",
            pillow_name="TIFF",
            pillow_use="refused",
            may_be_float=True,
            checks_strips=True,
        ),
        ImageFormat(
            "pnm",
            "PNM",
            lambda head, name: (
                len(head) >= 3
                and head[0:1] == b"P"
                and head[1:2] in b"123456"
                and head[2:3].isspace()
            ),
            _names("pbm", "pgm", "ppm", "pnm"),
            _names("pnm", "pbm", "pgm", "ppm"),
            pillow_name="PPM",
            pillow_use="always",
        ),
        ImageFormat(
            "bmp",
            "BMP",
            lambda head, name: _is_bmp(head),
            _names("bmp", "dib"),
            _names("bmp"),
            pillow_name="BMP",
            pillow_use="always",
        ),
        ImageFormat(
            "avif",
            "AVIF",
            lambda head, name: _isobmff_brand(head) == "avif",
            _names("avif"),
            _names("avif"),
            served_as="avif",
            # Effort 0 (aom speed 9): a fifth of effort 2's time for the same bytes and PSNR
            # (docs/benchmarks.md, "AVIF against WebP").
            saver=Saver(
                "heifsave_buffer",
                "image/avif",
                default_effort=0,
                effort_option="effort",
                efforts=(0, 9),
                options={"compression": "av1", "bitdepth": 8},
                lossy=True,
            ),
            header_checks=("coded_size",),
            vips_loader="heifload_source",
            exif_orientation=False,
        ),
        ImageFormat(
            "heif",
            "HEIF",
            lambda head, name: _isobmff_brand(head) == "heif",
            _names("heic", "heif", "heics", "heifs", "hif"),
            _names("heif", "heic"),
            header_checks=("coded_size",),
            vips_loader="heifload_source",
            pillow_use="hevc",
            exif_orientation=False,
        ),
        ImageFormat(
            "tga",
            "TGA",
            lambda head, name: name is not None and name.lower().endswith(".tga") and _is_tga(head),
            _names("tga", "icb", "vda", "vst"),
            _names("tga"),
            pillow_name="TGA",
            pillow_use="always",
        ),
    )
}

MEDIA_TYPES: Final[Mapping[OutputFormat, str]] = {
    fmt: FORMATS[fmt].saved.media_type for fmt in OUTPUT_FORMATS
}

#: Formats whose frames we keep when animation is asked for.
ANIMATED_FORMATS: Final = frozenset(row.name for row in FORMATS.values() if row.animated)

# Extensions of the input formats the imaging floor accepts (spec §4.1 ``file`` row: JPEG,
# PNG/APNG, GIF, WebP, AVIF, BMP, TIFF, TGA, PBM, HEIC/HEIF). The extension is only a gate the spec
# asks for; the decoder is always chosen from the file's magic bytes.
IMAGE_EXTENSIONS: Final = frozenset(ext for row in FORMATS.values() for ext in row.extensions)


def saver_of(fmt: OutputFormat) -> Saver:
    return FORMATS[fmt].saved


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
        return self.pages > 1 and FORMATS[self.fmt].animated

    def decoded_bytes(self, *, all_frames: bool) -> int:
        """The decoded pixels alone: pixels x bands (8-bit sRGB, alpha or not) x frames. The
        WorkGate admits jobs by their measured peak instead (``imaging.cost``)."""
        frames = self.pages if all_frames and self.animated else 1
        return self.pixels * (4 if self.has_alpha else 3) * frames


def as_output(fmt: InputFormat) -> OutputFormat | None:
    return FORMATS[fmt].served_as


def codec_disabled(fmt: InputFormat | OutputFormat, disabled: Collection[str]) -> bool:
    """``disabled`` holds codec names from configuration (``avif``, ``heic``, ``jpg``, ...)."""
    if not disabled:
        return False
    names = FORMATS[fmt].codec_names
    return any(name.strip().lower() in names for name in disabled)


def sniff(head: bytes | memoryview, name: str | None = None) -> InputFormat | None:
    head = bytes(head[:HEAD_BYTES])
    return next((row.name for row in FORMATS.values() if row.magic(head, name)), None)


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
