"""The header checks of a watermark image at start: the request's decode limits, a pixel cap.

Apart from ``optimizer.watermarks`` because it reads headers with libvips and Pillow, which the
planning code (``plan.py`` imports the ``Watermark`` type) may not import.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from assetgate.errors import AppError
from assetgate.imaging.formats import InputFormat
from assetgate.imaging.limits import DecodeLimits
from assetgate.imaging.load import probe
from assetgate.optimizer.watermarks import MAX_WATERMARK_PIXELS, ImageCheck


def checker(limits: DecodeLimits) -> ImageCheck:
    """What a render would refuse in a watermark, refused at start (ValueError with the reason):
    a disabled codec, too many JPEG scans, a GIF canvas, pixels over ``MAX_WATERMARK_PIXELS``
    (or the request limit when lower), more frames than an animation may have."""
    capped = replace(limits, max_pixels=min(limits.max_pixels, MAX_WATERMARK_PIXELS))

    def check(data: bytes, fmt: str) -> None:
        try:
            info = probe(data, cast(InputFormat, fmt), capped)
            if info.pages > capped.max_frames:
                raise AppError.too_large(
                    f"{info.pages} frames, over the limit of {capped.max_frames}"
                )
        except AppError as exc:
            raise ValueError(exc.message) from None

    return check
