"""What a file's own markers say before any decoder runs: a GIF's screen grown to every frame's
extent, a JPEG's scan count and whether a progressive one was cut between scans, a HEIF/AVIF
primary item's coded size, and the 413 of an image over the pixel limit. Each reads a few bytes or
walks the markers (``gif_header``, ``jpeg_header``, ``heif_header``); ``imaging.load`` runs a
format's ``header_checks`` (its row in ``imaging.formats.FORMATS``) through ``check_header``
before libvips or Pillow sees the file.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from pathlib import Path

from assetgate.errors import AppError, TooLarge
from assetgate.imaging import gif_header, heif_header, jpeg_header
from assetgate.imaging.formats import HeaderCheck, ImageInput
from assetgate.imaging.limits import DecodeLimits

log = logging.getLogger("assetgate.imaging")


def check_header(src: ImageInput, checks: Collection[HeaderCheck], limits: DecodeLimits) -> bool:
    """Run a format's ``header_checks`` (413/415); True when the file is a multi-scan JPEG
    (libjpeg then buffers every coefficient: ``imaging.cost``)."""
    multi_scan = False
    if "jpeg_scans" in checks:
        # Before libjpeg, which runs every scan over the whole image before the first pixel.
        multi_scan = check_jpeg(src, limits.max_scans)
    if "coded_size" in checks:
        check_coded_size(src, limits.max_pixels)
    if "gif_screen" in checks:
        # Before libnsgif and Pillow: the canvas they allocate is the logical screen grown to
        # every frame's extent (a 1x1 frame at 60000,60000 is a 3.6 GP canvas), not the frame
        # size libvips reports.
        check_gif_canvas(src, limits.max_pixels)
    return multi_scan


def check_gif_canvas(src: ImageInput, max_pixels: int) -> None:
    if isinstance(src, Path | str):
        canvas = gif_header.file_canvas_size(src)
    else:
        canvas = gif_header.canvas_size(src)
    if canvas is not None and canvas[0] * canvas[1] > max_pixels:
        width, height = canvas
        raise AppError.too_large(
            f"GIF screen and frames span {width}x{height} ({width * height / 1e6:.1f} MP), over "
            f"the input limit of {max_pixels / 1e6:g} MP"
        )


def check_jpeg(src: ImageInput, max_scans: int) -> bool:
    """Before libjpeg: too many scans (413), a progressive file cut between scans (415).
    True for a multi-scan file (libjpeg then buffers every coefficient: ``imaging.cost``)."""
    if isinstance(src, Path | str):
        scans = jpeg_header.read_file_scans(src, stop_after=max_scans)
    else:
        scans = jpeg_header.read_scans(src, stop_after=max_scans)
    if scans.count > max_scans:
        raise AppError.too_large(
            f"JPEG has more than {max_scans} progressive scans (the limit); each scan is a pass "
            "over the whole image"
        )
    if scans.truncated:
        log.info("undecodable image: a progressive JPEG ends after %d scans", scans.count)
        raise AppError.unsupported_media("image data is truncated or corrupt")
    return scans.count > 1


def check_coded_size(src: ImageInput, max_pixels: int) -> None:
    """Before libheif, which refuses some hostile headers outright and reports the cropped size:
    the coded size a decoder allocates, whatever follows in the file."""
    claim = heif_header.primary_image_size(
        heif_header.read_meta(src) if isinstance(src, Path | str) else src
    )
    if claim is not None and claim[0] * claim[1] > max_pixels:
        raise too_large(*claim, max_pixels)


def too_large(width: int, height: int, max_pixels: int) -> TooLarge:
    megapixels = width * height / 1e6
    return AppError.too_large(
        f"image is {width}x{height} ({megapixels:.1f} MP), over the input limit of "
        f"{max_pixels / 1e6:g} MP"
    )
