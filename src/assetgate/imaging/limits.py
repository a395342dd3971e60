"""What decoding one untrusted image may cost, as configured: built once, in the app's lifespan.

The optimizer and conversion decode through the same floor with the same limits, so one value
built from the settings serves both (``Resources.decode_limits``); no request rebuilds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from assetgate.settings import Settings


@dataclass(frozen=True, slots=True)
class DecodeLimits:
    max_pixels: int  # of one frame, or of all frames of a kept animation together
    max_frames: int
    disabled: tuple[str, ...] = ()  # ASSETGATE_DISABLED_CODECS names (-> 501)

    @classmethod
    def from_settings(cls, settings: Settings) -> DecodeLimits:
        return cls(
            max_pixels=settings.max_input_pixels,
            max_frames=settings.max_animation_frames,
            disabled=tuple(settings.disabled_codecs),
        )
