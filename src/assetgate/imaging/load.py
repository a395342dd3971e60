"""Header probes and checked decoding of untrusted images (libvips first, Pillow where needed).

Every decode is strict: libvips loaders run with ``fail_on=error`` so a truncated or corrupt file is
an error (-> 415), not a grey half-image cached for a year; the formats libvips lacks go through
``imaging.pillow`` (pinned to the sniffed format, truncated images refused). Limits are decided from
headers before any pixel is decoded. User strings never reach ``new_from_file`` (which parses
``[options]`` out of file names): files are opened as ``pyvips.Source`` objects.

API:
- ``ImageInput = bytes | bytearray | memoryview | Path | str`` (a str is a file path).
- ``SourceInfo(width, height, pages, has_alpha, fmt, orientation)``: ``width``/``height`` are one
  frame's size as displayed, i.e. after EXIF ``orientation`` (1..8) is applied; ``pages`` is the
  frame count of an animation (1 otherwise); ``.pixels`` = width*height, ``.animated``.
- ``probe(src, fmt, limits) -> SourceInfo``: header only; ``limits`` is the configured
  ``imaging.limits.DecodeLimits``, the one object every caller holds (``Resources.decode_limits``).
  Raises AppError 413 when one frame exceeds ``limits.max_pixels`` (for HEIF/AVIF also when the
  primary item's coded size claims more: ``imaging.heif_header``, checked before libheif reads the
  file; for GIF when the screen grown to every frame's extent does: ``imaging.gif_header``),
  when a JPEG has more than ``limits.max_scans`` scans (``imaging.jpeg_header``, counted from the
  markers before libjpeg runs them); 415 when the header cannot be read or a progressive JPEG
  stops between scans, 501 when the codec is disabled (``limits.disabled`` =
  ASSETGATE_DISABLED_CODECS names) or missing.
- ``open_image(src, fmt, limits, *, animated=False, size=None, info=None, fast_shrink=False,
  one_pass=False, ended=False) -> pyvips.Image``: decoded lazily but strictly, EXIF-rotated, 8-bit
  sRGB (or 8-bit grey), 1..4 bands with alpha last. ``animated=True`` keeps every frame of a
  GIF/WebP/APNG as a "toilet roll" (``page-height``, ``delay``, ``loop`` set); without ``info``
  it also applies ``limits.check_animation`` (a caller that passes ``info`` checked it when it
  decided to keep the frames). ``size=(w, h)`` resizes to exactly w x h while loading (libvips
  shrink-on-load: JPEG DCT scaling, WebP/HEIF scale) - pass the display-space size you want, the
  caller keeps the aspect ratio. ``fast_shrink=True`` lets a JPEG decode at the
  largest DCT scale (1/2, 1/4, 1/8) that still covers ``size`` before the Lanczos reduce, as
  sharp (``fastShrinkOnLoad``), imgproxy and thumbor (``draft``) do by default; libvips'
  ``thumbnail`` keeps a 2x margin instead (slightly softer aliasing, ~15 % more CPU on a 12 MP
  photo). ``info`` = the result of an earlier ``probe`` of the same input, to skip a second
  header read. ``one_pass=True`` promises that the caller reads the pixels once, top to bottom
  (``write_to_memory``), so a still that needs no EXIF turn is decoded sequentially.
  ``ended=True``: the caller knows the JPEG ends with its EOI (``integrity.ends_with_eoi``, read
  once per file version with its header), so its tail is not read again before the decode.
- ``decoding()``: context manager turning the lazy ``pyvips.Error`` of a decode (raised when the
  pixels are finally computed, typically inside ``encode``) into AppError 415. Wrap the whole
  load -> process -> encode sequence in it.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

import pyvips

from assetgate.cpu import stop
from assetgate.errors import AppError
from assetgate.imaging import integrity
from assetgate.imaging.formats import (
    FORMATS,
    ImageFormat,
    ImageInput,
    InputFormat,
    SourceInfo,
    codec_disabled,
)
from assetgate.imaging.limits import DecodeLimits, check_animation
from assetgate.imaging.pillow import (
    COMPRESSION,
    OLD_STYLE_JPEG,
    decode_apng_frames,
    decode_heif,
    decode_pillow,
    probe_pillow,
    tiff_tag,
)
from assetgate.imaging.prechecks import check_header, too_large

__all__ = [
    "ImageInput",
    "SourceInfo",
    "decoding",
    "open_image",
    "probe",
    "to_srgb8",
]

log = logging.getLogger("assetgate.imaging")

# An error detail with any of these words comes from reading the input (even when the saver
# pulling pixels through the pipeline is the one that reports it).
_READ_WORDS: Final = (
    "load", "read", "premature", "corrupt", "truncat", "not enough data", "decod", "invalid",
    "bad ", "tile", "eof", "end of",
)  # fmt: skip


@contextmanager
def decoding() -> Iterator[None]:
    try:
        yield
    except pyvips.Error as exc:
        stop.check()  # killed on purpose: the client went away or the time ran out
        if integrity.is_harmless(str(exc.detail)):
            raise integrity.HarmlessWarning from None
        detail = str(exc.detail).lower()
        if "save" in detail and not any(word in detail for word in _READ_WORDS):
            raise  # an encoder failure is ours (500), not the client's
        log.info("undecodable image: %s", exc.detail.strip())
        raise AppError.unsupported_media("image data is truncated or corrupt") from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:  # Pillow's decode failures
        log.info("undecodable image: %s", exc)
        raise AppError.unsupported_media("image data is truncated or corrupt") from None


# --- probe ----------------------------------------------------------------------------------


def probe(src: ImageInput, fmt: InputFormat, limits: DecodeLimits) -> SourceInfo:
    row = FORMATS[fmt]
    _check_codec(row, limits.disabled)
    progressive = check_header(src, row.header_checks, limits)
    with decoding():
        if row.pillow_use in ("always", "frames"):  # Pillow counts an APNG's frames
            info = probe_pillow(src, fmt)
        elif row.pillow_use == "refused":
            info = _probe_vips_else_pillow(src, row)
        else:
            info = _probe_vips(src, row)
    if info.pixels > limits.max_pixels:
        raise too_large(info.width, info.height, limits.max_pixels)
    if row.frames_checked:
        integrity.check_gif_trailer(src)
    return replace(info, progressive=True) if progressive else info


def _probe_vips(src: ImageInput, row: ImageFormat) -> SourceInfo:
    image = _vips_load(src, row, access="sequential")
    orientation = _orientation(image) if row.exif_orientation else 1
    width, height = image.width, image.height
    pages = 1
    if row.animated and image.get_typeof("n-pages"):
        pages = max(1, int(image.get("n-pages")))
    if orientation >= 5:
        width, height = height, width
    return SourceInfo(width, height, pages, bool(image.hasalpha()), row.name, orientation)


def _probe_vips_else_pillow(src: ImageInput, row: ImageFormat) -> SourceInfo:
    try:
        return _probe_vips(src, row)
    except pyvips.Error:  # a header libvips refuses (TIFF's CIE L*a*b*, ...): Pillow may read it
        return probe_pillow(src, row.name)


# --- open -----------------------------------------------------------------------------------


def open_image(
    src: ImageInput,
    fmt: InputFormat,
    limits: DecodeLimits,
    *,
    animated: bool = False,
    size: tuple[int, int] | None = None,
    info: SourceInfo | None = None,
    fast_shrink: bool = False,
    one_pass: bool = False,
    ended: bool = False,
) -> pyvips.Image:
    row = FORMATS[fmt]
    if info is None:
        info = probe(src, fmt, limits)
        if animated and info.animated:
            check_animation(info, max_pixels=limits.max_pixels, max_frames=limits.max_frames)
    else:
        # The caller probed, and checked the animation when it decided to keep the frames.
        _check_codec(row, limits.disabled)
    keep_frames = animated and info.animated
    shrink = _jpeg_shrink(info, size) if size and fast_shrink and row.dct_shrink else 1
    with decoding():
        if row.frames_checked:
            integrity.check_gif_frames(src)
        if _by_pillow(src, row, keep_frames):
            image = _decode_pillow(src, row)
        elif size is not None and shrink > 1:
            return _fast_jpeg(src, size, shrink, info.orientation, ended)
        elif size is not None and not (row.may_be_float and _float_samples(src, row)):
            return _thumbnail(src, row, size, keep_frames, ended)
        else:
            # One top-to-bottom read of an unturned still: decode straight into the reader's
            # buffer, without a whole-image intermediate (measured -17 ms on a 12 MP JPEG).
            sequential = one_pass and not keep_frames and info.orientation <= 1
            access = "sequential" if sequential else "random"
            image = _vips_load(src, row, access=access, pages=-1 if keep_frames else 1, ended=ended)
            if not keep_frames:
                image = image.autorot()
            image = to_srgb8(image)
        if size is not None:
            image = image.thumbnail_image(size[0], height=size[1], size="force")
            image = to_srgb8(image)
    return image


def _by_pillow(src: ImageInput, row: ImageFormat, keep_frames: bool) -> bool:
    """Whether Pillow decodes this file (``ImageFormat.pillow_use``) rather than libvips."""
    match row.pillow_use:
        case "always":
            return True
        case "frames":
            return keep_frames
        case "refused":
            return _needs_pillow_tiff(src, row)
        case "hevc":
            return _needs_pillow_heif(src, row)
        case None:
            return False


def _decode_pillow(src: ImageInput, row: ImageFormat) -> pyvips.Image:
    if row.pillow_use == "frames":
        return decode_apng_frames(src)
    if row.pillow_use == "hevc":
        return decode_heif(src)
    return decode_pillow(src, row.name)


def _thumbnail(
    src: ImageInput, row: ImageFormat, size: tuple[int, int], keep_frames: bool, ended: bool
) -> pyvips.Image:
    options = f"fail_on={_fail_on(row)}" + (",n=-1" if keep_frames else "")
    # NB: thumbnail's own fail_on argument is not passed on to the loader; option_string is.
    source = _vips_source(_completed(src, row, ended))
    image = pyvips.Image.thumbnail_source(
        source, size[0], height=size[1], size="force", option_string=options
    )
    return to_srgb8(_keep_alive(image, source))


def _jpeg_shrink(info: SourceInfo, size: tuple[int, int]) -> int:
    """The largest libjpeg DCT scale whose output still covers ``size`` (1 = none)."""
    factor = min(info.width / size[0], info.height / size[1])
    return next((shrink for shrink in (8, 4, 2) if factor >= shrink), 1)


def _fast_jpeg(
    src: ImageInput, size: tuple[int, int], shrink: int, orientation: int, ended: bool
) -> pyvips.Image:
    # A turned image is read bottom-up or column-wise by autorot: a sequential decode would fail
    # with "out of order read" once the image outgrows libvips' line cache, so those decode the
    # (already DCT-shrunk) image whole.
    access = "sequential" if orientation <= 1 else "random"
    jpeg = FORMATS["jpeg"]
    source = _vips_source(_completed(src, jpeg, ended))
    image = pyvips.Operation.call(
        jpeg.vips_loader, source, shrink=shrink, access=access, fail_on=_fail_on(jpeg)
    )
    image = _keep_alive(image, source)
    if orientation > 1:  # an upright image skips a no-op autorot (~0.15 ms of pyvips per render)
        image = image.autorot()
    return to_srgb8(image).thumbnail_image(size[0], height=size[1], size="force")


def _fail_on(row: ImageFormat) -> str:
    return integrity.jpeg_fail_on() if row.warns_when_cut else "error"


def _vips_source(src: ImageInput) -> pyvips.Source:
    if isinstance(src, Path | str):
        return pyvips.Source.new_from_file(str(src))
    return pyvips.Source.new_from_memory(src)


def _completed(src: ImageInput, row: ImageFormat, ended: bool) -> ImageInput:
    """What libvips reads: a JPEG with its EOI (``integrity.complete_jpeg``), unless the caller
    knows it ends with one (``ended``: checked when the version's header was read)."""
    return integrity.complete_jpeg(src) if row.warns_when_cut and not ended else src


def _vips_load(
    src: ImageInput, row: ImageFormat, *, access: str, pages: int = 1, ended: bool = False
) -> pyvips.Image:
    options: dict[str, Any] = {"access": access, "fail_on": _fail_on(row)}
    if pages != 1:
        options["n"] = pages
    source = _vips_source(_completed(src, row, ended))
    return _keep_alive(pyvips.Operation.call(row.vips_loader, source, **options), source)


def _keep_alive(image: pyvips.Image, source: pyvips.Source) -> pyvips.Image:
    """A memory source must outlive every image computed from it (pyvips only tracks this for
    ``new_from_source``, and its references travel from input to output images)."""
    image._references.append(source)
    return image


def to_srgb8(image: pyvips.Image) -> pyvips.Image:
    """Any decoded image -> 8-bit sRGB (3/4 bands) or 8-bit grey (1/2 bands), alpha kept."""
    if image.get_typeof("icc-profile-data"):
        try:
            image = image.icc_transform("srgb", embedded=True, intent="perceptual", depth=8)
        except pyvips.Error:
            log.info("ignoring an unusable embedded ICC profile")
        image = image.copy()
        image.remove("icc-profile-data")
    interpretation = image.interpretation
    if interpretation in ("b-w", "grey16"):
        if image.format in ("float", "double"):
            image = _float_to_uchar(image)  # before colourspace, which would clip 0..1 to black
        elif interpretation == "grey16" or image.format != "uchar":
            image = image.colourspace("b-w")
    elif interpretation in ("cmyk", "lab", "labs", "lch", "xyz", "scrgb", "hsv", "rgb16", "yxy"):
        image = image.colourspace("srgb")
    elif interpretation != "srgb" or image.bands not in (3, 4):
        if image.bands in (1, 2):
            image = image.copy(interpretation="b-w")
        elif image.bands >= 3:
            if image.bands > 4:
                image = image.extract_band(0, n=4)
            image = image.copy(interpretation="srgb")
    if image.format != "uchar":
        if image.format == "ushort":
            image = (image >> 8).cast("uchar")
        elif image.format in ("float", "double"):
            image = _float_to_uchar(image)
        elif image.format in ("complex", "dpcomplex"):
            image = image.cast("uchar")
        else:
            image = image.cast("uchar", shift=False)
    return image


def _float_to_uchar(image: pyvips.Image) -> pyvips.Image:
    """Float grey (a 32-bit float TIFF) holds 0..1 by the common convention (Photoshop, GIMP,
    ImageMagick) and 0..255 by libvips': scaled when every sample fits 0..1, else clipped.
    Deciding needs the samples, so the image is computed once, into memory (4 bytes a sample,
    about what the 8-bit RGB decode the memory door counts for it costs)."""
    image = image.copy_memory()
    stats = image.stats()
    low, high = stats(0, 0)[0], stats(1, 0)[0]
    if low >= 0.0 and high <= 1.0:
        image = image * 255
    return image.cast("uchar")


def _orientation(image: pyvips.Image) -> int:
    if not image.get_typeof("orientation"):
        return 1
    value = int(image.get("orientation"))
    return value if 1 <= value <= 8 else 1


# --- HEIF: which decoder ----------------------------------------------------------------


def _needs_pillow_heif(src: ImageInput, row: ImageFormat) -> bool:
    """The wheel's libheif decodes AV1 but not HEVC; read the header to know which we have."""
    try:
        header = _vips_load(src, row, access="sequential")
    except pyvips.Error:
        return True
    compression = header.get("heif-compression") if header.get_typeof("heif-compression") else ""
    return str(compression).lower() != "av1"


def _needs_pillow_tiff(src: ImageInput, row: ImageFormat) -> bool:
    """A header libvips refuses, or old-style JPEG compression: the wheel's libtiff is built
    without it, and libvips reads the header and fails only when the pixels are read."""
    try:
        _vips_load(src, row, access="sequential")
    except pyvips.Error:
        return True
    return tiff_tag(src, COMPRESSION) == OLD_STYLE_JPEG


def _float_samples(src: ImageInput, row: ImageFormat) -> bool:
    """libvips' thumbnail clips float samples to 8 bits itself (0..1 -> black): such a TIFF is
    decoded, scaled by ``to_srgb8`` and then reduced."""
    return str(_vips_load(src, row, access="sequential").format) in ("float", "double")


# --- checks ---------------------------------------------------------------------------------


def _check_codec(row: ImageFormat, disabled: Collection[str]) -> None:
    if codec_disabled(row.name, disabled) or not _has_decoder(row):
        raise AppError.not_implemented(f"the {row.name} decoder is not available on this server")


def _has_decoder(row: ImageFormat) -> bool:
    """A format libvips probes needs its loader in this libvips build (HEIF/AVIF, TIFF may be
    built without); Pillow's are in its wheel."""
    if row.pillow_use in ("always", "frames") or row.vips_loader is None:
        return True
    return bool(pyvips.type_find("VipsOperation", row.vips_loader))
