"""What one image job really holds in memory at its peak, from the header and the plan alone.

The WorkGate admits render and conversion jobs by their cost against
``ASSETGATE_RENDER_MEMORY_BYTES``. Counting only the decoded pixels (width x height x bands)
undercounted real peaks 3-7x: the saver copies the decoded image before encoding, libjpeg keeps a
whole-image coefficient buffer for a progressive file, and libwebp's encoder holds several planes
(its lossless coder, which also codes a lossy file's alpha, about 22 bytes a pixel). The factors
below are the peaks ``bench/render_peaks.py`` measured per kind of job (docs/benchmarks.md),
rounded up; the bench fails when a counted cost falls below a measured peak.

Per source pixel (all kept frames): a decode kept at full size costs 2 x bands (the decoded image
and the saver's copy); one reduced while loading costs 1.25 for a JPEG (DCT scaling, read in
strips) and the bands for other formats; a progressive JPEG adds 4 (2 bytes a coefficient, 4:2:2
and lighter). Per output pixel: the encoder's own buffers, ``ENCODER_BYTES``, for one frame (two
for an animation, which is encoded frame by frame against a canvas).

API:
- ``peak_bytes(info, *, output, out_pixels, reduced, lossless=False, all_frames=True) -> int``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from assetgate.imaging.formats import OutputFormat, SourceInfo

#: Bytes a pixel of output the encoder itself holds at its peak (measured, rounded up).
ENCODER_BYTES: Final[Mapping[str, float]] = {
    "webp": 9,
    "webp-alpha": 22,
    "webp-lossless": 27,
    "jpeg": 5,
    "png": 2,
    "gif": 6,
    "avif": 24,
}
#: A JPEG decoded straight at a reduced size (libjpeg's DCT scaling, strips of rows).
REDUCED_JPEG_BYTES: Final = 1.25
#: libjpeg's whole-image coefficient buffer for a progressive (multi-scan) JPEG.
PROGRESSIVE_BYTES: Final = 4


def peak_bytes(
    info: SourceInfo,
    *,
    output: OutputFormat,
    out_pixels: int,
    reduced: bool,
    lossless: bool = False,
    all_frames: bool = True,
) -> int:
    """``out_pixels``: of one output frame; ``reduced``: decoded at a smaller size while loading
    (the plan's ``load_size``); ``all_frames``: every frame of an animation is kept."""
    frames = info.pages if all_frames and info.animated else 1
    bands = 4 if info.has_alpha else 3
    if not reduced:
        per_source = 2.0 * bands
    elif info.fmt == "jpeg":
        per_source = REDUCED_JPEG_BYTES
    else:
        per_source = float(bands)
    if info.progressive:
        per_source += PROGRESSIVE_BYTES
    encoder: str = output
    if output == "webp":
        encoder = "webp-lossless" if lossless else ("webp-alpha" if info.has_alpha else "webp")
    per_output = ENCODER_BYTES[encoder]
    # Frames are decoded together but encoded one by one (two held: the frame and the canvas).
    return int(info.pixels * per_source * frames + out_pixels * per_output * min(frames, 2))
