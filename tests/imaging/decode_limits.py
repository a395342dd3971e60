"""The decode limits the imaging tests run under; a test needing another limit ``replace``s one."""

from __future__ import annotations

from typing import Final

from assetgate.imaging.limits import DecodeLimits

#: Roomy for every generated test image (50 MP a frame, 1000 frames, 100 JPEG scans, no codec off).
LIMITS: Final = DecodeLimits(max_pixels=50_000_000, max_frames=1000)
