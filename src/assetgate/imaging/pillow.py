"""The Pillow side of the imaging floor: the decoders libvips lacks, and the way pixels cross.

pyvips-binary has no BMP, TGA or PNM loader and libvips' PNG loader sees only the first APNG frame,
so those decode through Pillow, pinned to the one sniffed format (``formats=``) so a file cannot
pick its own decoder. TIFFs libvips refuses (CIE L*a*b*, which it reads only as its own LabQ
coding; old-style JPEG compression, which the wheel's libtiff is built without) fall back to
Pillow's TIFF decoder the same way (``imaging.load`` decides); libtiff's old-style JPEG reader
only warns about cut data, so a TIFF whose strips or tiles reach past the end of the file is
refused first. HEIC (HEVC) decodes through pillow-heif because the wheel's libheif has no HEVC
decoder. Pixels cross both ways as one 8-bit buffer (``from_pillow`` / ``to_pillow``) and
nothing else crosses, so no EXIF, XMP or ICC travels with them.
"""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path
from typing import Any, Final, cast

import pyvips
from PIL import Image as PILImage
from PIL import ImageCms, ImageSequence, UnidentifiedImageError

from assetgate.errors import AppError
from assetgate.imaging.formats import FORMATS, ImageInput, InputFormat, SourceInfo
from assetgate.imaging.frames import mark_roll
from assetgate.imaging.vips import killable

#: TIFF tags read from the header (``tiff_tag``).
COMPRESSION: Final = 259
OLD_STYLE_JPEG: Final = 6
_ALPHA_MODES: Final = frozenset({"RGBA", "LA", "PA", "RGBa", "La"})


def probe_pillow(src: ImageInput, fmt: InputFormat) -> SourceInfo:
    with _pillow_open(src, fmt) as im:
        width, height = im.size
        pages = int(getattr(im, "n_frames", 1)) if FORMATS[fmt].animated else 1
        alpha = im.mode in _ALPHA_MODES or "transparency" in im.info
        # A TIFF's orientation tag: Pillow reports the turned size and turns it when loading.
        return SourceInfo(width, height, max(1, pages), alpha, fmt, 1)


def decode_pillow(src: ImageInput, fmt: InputFormat) -> pyvips.Image:
    """A BMP, TGA, PNM, (first-frame) PNG or (first-page, upright) TIFF decoded whole by Pillow,
    as an 8-bit vips image."""
    with _pillow_open(src, fmt) as im:
        if FORMATS[fmt].checks_strips and not _tiff_data_fits(im, _size_of(src)):
            raise AppError.unsupported_media("image data is truncated or corrupt")
        im.load()
        return from_pillow(im)


def tiff_tag(src: ImageInput, tag: int) -> int | None:
    """One numeric tag of a TIFF's first directory, read by Pillow without decoding pixels."""
    with _pillow_open(src, "tiff") as im:
        value = getattr(im, "tag_v2", {}).get(tag)
        return value if isinstance(value, int) else None


def _tiff_data_fits(im: PILImage.Image, size: int) -> bool:
    """Every strip or tile (offsets 273/324, byte counts 279/325) and an old-style JPEG's stream
    (513/514) lies inside the file."""
    tags = getattr(im, "tag_v2", {})
    pairs = [(273, 279), (324, 325), (513, 514)]
    for offsets_tag, counts_tag in pairs:
        offsets, counts = tags.get(offsets_tag), tags.get(counts_tag)
        if offsets is None or counts is None:
            continue
        offsets = offsets if isinstance(offsets, tuple) else (offsets,)
        counts = counts if isinstance(counts, tuple) else (counts,)
        if any(int(o) + int(c) > size for o, c in zip(offsets, counts, strict=False)):
            return False
    return True


def _size_of(src: ImageInput) -> int:
    return Path(src).stat().st_size if isinstance(src, Path | str) else len(src)


def _pillow_open(src: ImageInput, fmt: InputFormat) -> PILImage.Image:
    stream: Any = src if isinstance(src, Path | str) else io.BytesIO(src)
    try:
        return PILImage.open(stream, formats=[_pinned(fmt)])
    except (PILImage.DecompressionBombError, PILImage.DecompressionBombWarning):
        raise AppError.too_large("image dimensions exceed the decoder's safety limit") from None
    except UnidentifiedImageError:
        raise AppError.unsupported_media("image header cannot be read") from None


def _pinned(fmt: InputFormat) -> str:
    """The one Pillow decoder a format may use: a file cannot pick its own."""
    name = FORMATS[fmt].pillow_name
    assert name is not None, fmt
    return name


def from_pillow(im: PILImage.Image) -> pyvips.Image:
    """A decoded Pillow image -> 8-bit vips image (grey, grey+alpha, RGB or RGBA)."""
    alpha = im.mode in _ALPHA_MODES or "transparency" in im.info
    if im.mode == "LAB":
        converted = ImageCms.applyTransform(im, _lab_to_srgb())
        assert converted is not None  # None only for in-place transforms
        im = converted
    elif im.mode == "F":  # 32-bit float samples: 0..1 when they all fit, else 0..255 (clipped)
        low, high = cast(tuple[float, float], im.getextrema())  # one band: (min, max)
        scale = 255.0 if low >= 0.0 and high <= 1.0 else 1.0
        im = im.point(lambda v: v * scale).convert("L")
    elif im.mode.startswith("I"):
        im = im.convert("I").point(lambda v: v * (1 / 257))  # 16-bit samples -> 0..255
    grey = im.mode in ("1", "L", "LA", "La", "I")
    target = ("LA" if alpha else "L") if grey else ("RGBA" if alpha else "RGB")
    converted = im.convert(target)
    bands = len(target)
    image = pyvips.Image.new_from_memory(
        converted.tobytes(), converted.width, converted.height, bands, "uchar"
    )
    return image.copy(interpretation="b-w" if bands <= 2 else "srgb")


@cache
def _lab_to_srgb() -> ImageCms.ImageCmsTransform:
    """CIE L*a*b* -> sRGB by littleCMS (Pillow's ImageCms): the white-point adaptation a plain
    formula misses (libvips' own Lab -> sRGB assumes D65 and shifts greens by ~40 levels)."""
    lab, srgb = ImageCms.createProfile("LAB"), ImageCms.createProfile("sRGB")
    return ImageCms.buildTransform(lab, srgb, "LAB", "RGB")


def to_pillow(image: pyvips.Image) -> PILImage.Image:
    """A still 8-bit sRGB or grey vips image -> Pillow RGBX/RGBA, mapped without a copy.

    Computes the libvips pipeline (the decode happens here). A caller that can should drop its
    own reference to ``image`` right after, so the decoded buffer is freed before encoding.
    """
    if image.bands in (1, 2):
        image = image.colourspace("srgb")
    mode = "RGBA" if image.bands == 4 else "RGBX"
    if image.bands == 3:
        image = image.bandjoin(255)
    with killable(image) as target:
        pixels = target.write_to_memory()
    return PILImage.frombuffer(mode, (image.width, image.height), pixels, "raw", mode, 0, 1)


def decode_apng_frames(src: ImageInput) -> pyvips.Image:
    """Every APNG frame, composed to RGBA by Pillow, as a roll with the frame delays and loop."""
    with _pillow_open(src, "apng") as im:
        width, height = im.size
        delays: list[int] = []
        chunks: list[bytes] = []
        for frame in ImageSequence.Iterator(im):
            chunks.append(frame.convert("RGBA").tobytes())
            delays.append(int(frame.info.get("duration", 100) or 100))
        loop = int(im.info.get("loop", 0))
    image = pyvips.Image.new_from_memory(b"".join(chunks), width, height * len(chunks), 4, "uchar")
    return mark_roll(image.copy(interpretation="srgb"), height, delay=delays, loop=loop)


def decode_heif(src: ImageInput) -> pyvips.Image:
    """An HEVC-coded HEIF through pillow-heif, tone-mapped to 8 bits."""
    try:
        import pillow_heif
    except ImportError:  # pragma: no cover - a dependency, but keep the 501 honest
        raise AppError.not_implemented("no HEIC/HEIF decoder is installed") from None
    data: Any = str(src) if isinstance(src, Path | str) else bytes(src)
    try:
        heif = pillow_heif.open_heif(data, convert_hdr_to_8bit=True)
        im = heif.to_pillow()
    except (ValueError, RuntimeError) as exc:
        raise AppError.unsupported_media("image data is truncated or corrupt") from exc
    return from_pillow(im)
