"""HTTP edge of the optimizer part (placeholder until the part lands)."""

from __future__ import annotations

from assetgate.resources import Part

PART = Part(name="optimizer", routes=[])
