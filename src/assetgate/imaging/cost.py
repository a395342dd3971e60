"""What one image job really holds in memory at its peak, from the header and the plan alone.

The WorkGate admits render and conversion jobs by their cost against
``ASSETGATE_RENDER_MEMORY_BYTES``, and the optimizer and the conversion refuse a job whose cost is
over ``ASSETGATE_RENDER_JOB_MEMORY_BYTES`` with a 413. Counting only the decoded pixels (width x
height x bands) undercounted real peaks 3-7x: libjpeg keeps a whole-image coefficient buffer for a
progressive file, and libwebp's encoder holds several planes (its lossless coder, which also codes
a lossy file's alpha, holds up to ~36 bytes a pixel for a noisy alpha). The factors below are the
worst peaks ``bench/render_peaks.py`` measured per kind of job and content (photo, smooth
gradient, gaussian noise; docs/benchmarks.md), rounded up; the bench fails when a counted cost
falls below a measured peak.

Per source pixel (all kept frames): a decode kept at full size costs its bands when the pipeline
needs it whole (turns, filters, a trim, every frame of an animation) or its decoder makes it whole
(all but the formats whose row in ``imaging.formats.FORMATS`` says ``strip_decoded``), nothing when
it is read once top to bottom, straight into the saver (``one_pass``); one reduced while loading
costs 1.25 for a JPEG (DCT scaling, read in strips) and the bands for other formats; a progressive
JPEG adds 6 (2 bytes a coefficient, 4:4:4 and lighter). Per output pixel: the encoder and the
picture it is fed, ``ENCODER_BYTES``, for one frame (two for an animation, which is encoded frame by
frame against a canvas); a still WebP small enough for Pillow's encoder (``encode.streams_webp``)
adds Pillow's buffer and its ARGB copy; a ``max_bytes`` search adds the pipeline's output kept in
memory; a ``quality=auto`` search adds that, a decoded try and the metric's arrays (``AUTO_BYTES``).

API:
- ``peak_bytes(info, *, out_pixels, **terms: JobTerms) -> int``.
- ``fitting_pixels(info, ceiling, **terms: JobTerms) -> int``: the most output pixels (of one
  frame) whose job still counts at most ``ceiling``, 0 when none do (the hint of the 413).
- ``mib(n) -> str``: bytes as the 413s say them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Required, TypedDict, Unpack

from assetgate.imaging.encode import STREAMED_WEBP_PIXELS, streams_webp
from assetgate.imaging.formats import FORMATS, OutputFormat, SourceInfo

#: Bytes a pixel of output the encoder holds at its peak, its input picture included (measured
#: with every content the bench makes, rounded up).
ENCODER_BYTES: Final[Mapping[str, float]] = {
    "webp": 9,
    "webp-alpha": 40,
    "webp-lossless": 45,
    "jpeg": 10,
    "png": 2,
    "gif": 6,
    "avif": 36,
}
#: Pillow's still WebP encoder: the image decoded into its buffer, then copied into libwebp's
#: picture as ARGB.
PILLOW_WEBP_BYTES: Final = 8
#: A JPEG decoded straight at a reduced size (libjpeg's DCT scaling, strips of rows).
REDUCED_JPEG_BYTES: Final = 1.25
#: libjpeg's whole-image coefficient buffer for a progressive (multi-scan) JPEG.
PROGRESSIVE_BYTES: Final = 6
#: ``quality=auto``: the SSIMULACRA2 arrays at their peak (the reference side kept for the
#: search, one score's temporaries), per output pixel, measured with ``tracemalloc``: 220
#: opaque, 308 with alpha (scored over two backgrounds) at 800x533; plus a decoded try.
AUTO_BYTES: Final = 240
AUTO_ALPHA_BYTES: Final = 340


class JobTerms(TypedDict, total=False):
    """What kind of job it is, besides its output size."""

    output: Required[OutputFormat]
    #: Decoded at a smaller size while loading (the plan's ``load_size``).
    reduced: Required[bool]
    lossless: bool
    #: Every frame of an animation is kept (default True).
    all_frames: bool
    #: A still at full size read once, top to bottom, by the saver.
    one_pass: bool
    #: The output is kept in memory and encoded again for a byte budget.
    search: bool
    #: ``quality=auto``: the output is kept, encoded several times and scored.
    auto: bool


def peak_bytes(info: SourceInfo, *, out_pixels: int, **terms: Unpack[JobTerms]) -> int:
    """``out_pixels``: of one output frame."""
    per_source, per_output = _factors(info, out_pixels, terms)
    return int(info.pixels * per_source + out_pixels * per_output)


def fitting_pixels(info: SourceInfo, ceiling: int, **terms: Unpack[JobTerms]) -> int:
    """The most output pixels of one frame whose job counts at most ``ceiling`` (0: none)."""
    fit = 0
    # A large still WebP streams into libwebp; below that size Pillow's copies cost more a pixel.
    for size in (STREAMED_WEBP_PIXELS, 0):
        per_source, per_output = _factors(info, size, terms)
        fit = int((ceiling - info.pixels * per_source) / per_output)
        if fit >= size:
            break
    return max(0, fit)


def mib(count: int) -> str:
    return f"{count / 2**20:.0f} MiB"


def _factors(info: SourceInfo, out_pixels: int, terms: JobTerms) -> tuple[float, float]:
    """(bytes a source pixel of all kept frames, bytes an output pixel)."""
    output, lossless = terms["output"], terms.get("lossless", False)
    frames = info.pages if terms.get("all_frames", True) and info.animated else 1
    bands = 4 if info.has_alpha else 3
    source = FORMATS[info.fmt]
    if terms["reduced"]:
        per_source = REDUCED_JPEG_BYTES if source.dct_shrink else float(bands)
    elif (
        terms.get("one_pass", False)
        and frames == 1
        and info.orientation <= 1
        and source.strip_decoded
    ):
        per_source = 0.0  # autorot reads a turned image whole; the others decode it whole
    else:
        per_source = float(bands)
    if info.progressive:
        per_source += PROGRESSIVE_BYTES
    encoder: str = output
    if output == "webp":
        encoder = "webp-lossless" if lossless else ("webp-alpha" if info.has_alpha else "webp")
    per_output = ENCODER_BYTES[encoder]
    if FORMATS[output].saved.pillow_still and frames == 1 and not streams_webp(out_pixels):
        per_output += PILLOW_WEBP_BYTES
    if terms.get("search", False) or terms.get("auto", False):
        per_output += bands
    if terms.get("auto", False):
        per_output += bands + (AUTO_ALPHA_BYTES if info.has_alpha else AUTO_BYTES)
    # Frames are decoded together but encoded one by one (two held: the frame and the canvas).
    return per_source * frames, per_output * min(frames, 2)
