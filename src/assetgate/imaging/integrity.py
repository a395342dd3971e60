"""Damaged means error: the checks libvips' ``fail_on=error`` leaves out.

- JPEG: libjpeg reports short or truncated scan data only as a *warning* ("premature end of data
  segment") and fills the rest grey, so JPEG pixels decode with ``fail_on=warning``. Two warnings
  that camera files carry are harmless and must keep working: a missing EOI after complete scans
  (``complete_jpeg`` puts the marker back, so only a scan cut short still warns) and extraneous
  bytes before a marker (``tolerating_harmless`` runs the work once more with ``fail_on=error``
  when that is the one complaint). Except one case: a file cut short and padded with zero bytes (a
  download into a preallocated file) has no EOI, and libjpeg decodes the zeros as scan data (grey,
  or no detail) and calls only the rest "extraneous bytes before" the EOI that ``complete_jpeg``
  appended. When that EOI follows ``PAD_BYTES`` zeros, bytes before it are the padding of a cut
  file, not a camera's stray bytes: damaged. (A complete file that lacks only its EOI, its last
  scan data ending in zeros as flat areas with optimized tables do, decodes exactly to our EOI and
  draws no such warning.) A file that ends on ``0xFF`` was cut inside a marker, most often its EOI
  (Pillow's ``truncated_jpeg.jpg``, a progressive file whose every scan is whole but whose ``FF
  D9`` lost the ``D9``): libjpeg has all the pixels and says nothing, but the file is cut and is
  refused like any other cut file. A progressive file cut between scans draws no warning at all:
  ``jpeg_header`` tells it from its markers.
- GIF: libnsgif silently drops a frame whose LZW data is cut; Pillow's decoder calls it
  truncated. ``check_gif_frames`` decodes the frames with Pillow once before libvips does.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Final, TypeVar

from PIL import Image as PILImage
from PIL import ImageSequence

from assetgate.errors import AppError
from assetgate.imaging.formats import ImageInput

T = TypeVar("T")

EOI: Final = b"\xff\xd9"
_HARMLESS: Final = ("extraneous bytes before marker",)
#: A file without EOI that ends in this many zero bytes may be a cut file's padding.
PAD_BYTES: Final = 32
_TOLERANT: ContextVar[bool] = ContextVar("assetgate_jpeg_tolerant", default=False)
#: ``complete_jpeg`` appended the EOI right after PAD_BYTES zeros (set within one work()).
_PADDED: ContextVar[bool] = ContextVar("assetgate_jpeg_padded", default=False)


class HarmlessWarning(Exception):
    """A strict JPEG decode failed on a warning camera files carry: run it again tolerantly."""


def jpeg_fail_on() -> str:
    return "error" if _TOLERANT.get() else "warning"


def is_harmless(detail: str) -> bool:
    """The strict decode's only complaint is one a camera JPEG may carry."""
    lowered = detail.lower()
    if _TOLERANT.get() or "premature end" in lowered:
        return False
    if _PADDED.get() and "before marker 0xd9" in lowered:
        return False  # before the EOI we appended to a zero-padded file: a cut, padded
    return any(word in lowered for word in _HARMLESS)


def tolerating_harmless(work: Callable[[], T]) -> T:
    """``work()`` (load -> process -> encode); once more tolerating JPEG warnings when the strict
    run met only a harmless one."""
    padded = _PADDED.set(False)
    try:
        return work()
    except HarmlessWarning:
        token = _TOLERANT.set(True)
        try:
            return work()
        finally:
            _TOLERANT.reset(token)
    finally:
        _PADDED.reset(padded)


def complete_jpeg(src: ImageInput) -> ImageInput:
    """``src`` with an EOI marker appended when it does not end with one (an extra EOI after a
    complete image is never read; a scan cut short still runs into it and warns)."""
    tail = _tail(src, 2)
    if tail == EOI:
        return src
    _refuse_cut_marker(tail)
    if isinstance(src, Path | str):
        with open(src, "rb") as handle:
            return _ended(handle.read())
    return _ended(bytes(src))


def ends_with_eoi(src: ImageInput) -> bool:
    """The JPEG ``src`` ends with its EOI, so ``complete_jpeg`` would hand it back as it is: a
    fact about one version of the file, read with its header, so a render need not read the
    tail again (``imaging.load.open_image``'s ``ended``)."""
    try:
        return _tail(src, 2) == EOI
    except OSError:
        return False


def _tail(src: ImageInput, count: int) -> bytes:
    if isinstance(src, Path | str):
        with open(src, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - count))
            return handle.read(count)
    return bytes(src[-count:])


def _refuse_cut_marker(tail: bytes) -> None:
    """415 for a file whose last byte is ``0xFF``: cut inside a marker (Pillow's
    ``truncated_jpeg.jpg`` lost the ``D9`` of its EOI). Scan data never ends on ``0xFF`` (a data
    ``0xFF`` is stuffed as ``FF 00``), and a camera file without EOI ends on its scan data."""
    if tail[-1:] == b"\xff":
        raise AppError.unsupported_media("image data is truncated or corrupt")


def _ended(data: bytes) -> bytes:
    if len(data) >= PAD_BYTES and not any(data[-PAD_BYTES:]):
        _PADDED.set(True)
    return data + EOI


def check_gif_trailer(src: ImageInput) -> None:
    """415 without the trailer (a GIF cut short: libnsgif quietly drops the cut frame)."""
    if not _tail(src, 16).rstrip(b"\x00").endswith(b";"):
        raise AppError.unsupported_media("image data is truncated or corrupt")


def check_gif_frames(src: ImageInput) -> None:
    """415 when any frame's image data is truncated (Pillow decodes every frame once)."""
    stream: Any = src if isinstance(src, Path | str) else io.BytesIO(src)
    try:
        with PILImage.open(stream, formats=["GIF"]) as image:
            for frame in ImageSequence.Iterator(image):
                frame.load()
    except PILImage.DecompressionBombError:  # a frame's extent (checked first by the probe)
        raise AppError.too_large("GIF frames exceed the decoder's safety limit") from None
    except (OSError, SyntaxError, ValueError, EOFError):
        raise AppError.unsupported_media("image data is truncated or corrupt") from None
