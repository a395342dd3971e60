"""What decoding one untrusted image may cost, as configured: built once, in the app's lifespan.

The optimizer and conversion decode through the same floor with the same limits, so one value
built from the settings serves both (``Resources.decode_limits``); no request rebuilds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from assetgate.errors import AppError
from assetgate.imaging.formats import SourceInfo
from assetgate.settings import Settings


@dataclass(frozen=True, slots=True)
class DecodeLimits:
    max_pixels: int  # of one frame, or of all frames of a kept animation together
    max_frames: int
    disabled: tuple[str, ...] = ()  # ASSETGATE_DISABLED_CODECS names (-> 501)
    max_scans: int = 100  # of one JPEG (``imaging.jpeg_header``)
    #: The counted memory peak (``imaging.cost``) one job may have; 0: none (it runs alone).
    max_job_bytes: int = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> DecodeLimits:
        return cls(
            max_pixels=settings.max_input_pixels,
            max_frames=settings.max_animation_frames,
            disabled=tuple(settings.disabled_codecs),
            max_scans=settings.max_jpeg_scans,
            max_job_bytes=settings.render_job_memory_bytes,
        )


def check_animation(info: SourceInfo, *, max_pixels: int, max_frames: int) -> None:
    """413 before decoding when a kept animation has too many frames or pixels in all frames.

    Called once per request, by the step that decides to keep the frames (the optimizer's plan,
    ``open_image`` when it read the header itself), from the header facts alone.
    """
    if info.pages > max_frames:
        raise AppError.too_large(
            f"animation has {info.pages} frames, more than the limit of {max_frames}"
        )
    total = info.pixels * info.pages
    if total > max_pixels:
        raise AppError.too_large(
            f"animation is {info.pages} frames of {info.width}x{info.height} "
            f"({total / 1e6:.1f} MP), over the input limit of {max_pixels / 1e6:g} MP"
        )
