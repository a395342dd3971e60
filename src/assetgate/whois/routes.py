"""HTTP edge of the whois part (placeholder until the part lands)."""

from __future__ import annotations

from assetgate.resources import Part

PART = Part(name="whois", routes=[])
