"""What an optimizer parameter's value may be: the names, ranges and patterns (spec §4.1).

The table (``optimizer.params``) and the spec (``optimizer.spec``) read values against these; the
patterns state every range the parser enforces, so a value the OpenAPI schema allows is accepted.
Also what ``quality=auto`` means on this server (``AutoQuality``). Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from assetgate.imaging.formats import OutputFormat
from assetgate.settings import Settings

Gravity = Literal[
    "center", "north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest"
]
#: ``crop_gravity`` adds ``smart`` (libvips' attention crop) to the nine fixed positions.
CropGravity = Gravity | Literal["smart"]
Fit = Literal["inside", "cover", "fill", "pad"]
GRAVITIES: Final[tuple[Gravity, ...]] = (
    "center",
    "north",
    "south",
    "east",
    "west",
    "northeast",
    "northwest",
    "southeast",
    "southwest",
)
FORMAT_CHOICES: Final[Mapping[str, OutputFormat]] = {
    "jpeg": "jpeg",
    "jpg": "jpeg",
    "png": "png",
    "gif": "gif",
    "webp": "webp",
    "avif": "avif",
}
ROTATIONS: Final[Mapping[str, int]] = {
    str(angle): angle for angle in (-270, -180, -90, 0, 90, 180, 270)
}
MAX_SIDE: Final = 50_000
#: Longest value of a pattern parameter.
MAX_STR: Final = 64
#: Strength used for ``sharpen=true``.
DEFAULT_SHARPEN: Final = 50

# The patterns state every range the parser enforces, so a value the schema allows is accepted.
#: A box side, 1..MAX_SIDE, without leading zeros.
SIDE = r"(?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|50000)"
_COORD = r"[0-9]{1,9}"
#: A positive number (a ratio of two of them is always a usable crop).
_POSITIVE = r"(?:[1-9][0-9]{0,8}(?:\.[0-9]{1,9})?|0\.0{0,8}[1-9][0-9]{0,8})"
#: A relative focus coordinate, 0.0..1.0.
_UNIT = r"(?:0(?:\.[0-9]{1,9})?|1(?:\.0{1,9})?)"
CROP_PATTERN = re.compile(rf"({SIDE}),({SIDE})(?:,({_COORD}),({_COORD}))?")
RATIO_PATTERN = re.compile(rf"({_POSITIVE}):({_POSITIVE})")
FOCUS_PATTERN = re.compile(rf"({SIDE}),({SIDE}),(?:({_COORD}),({_COORD})|({_UNIT}),({_UNIT}))")
TINT_PATTERN = re.compile(r"[0-9a-fA-F]{6}")
BACKGROUND_PATTERN = re.compile(r"[0-9a-fA-F]{6}(?:[0-9a-fA-F]{2})?")
#: A configured name (watermarks, presets).
NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
FITS: Final[tuple[Fit, ...]] = ("inside", "cover", "fill", "pad")
#: ``trim=true``: libvips' own default threshold (8-bit units from the corner colour).
DEFAULT_TRIM: Final = 10
MAX_DPR: Final = 8
#: Largest ``max_bytes`` (1 GiB: far above any image the limits let through).
MAX_BYTES: Final = 1 << 30
#: ``quality=auto:<score>``: the SSIMULACRA2 targets a request may ask for.
AUTO_LOW: Final = 30
AUTO_HIGH: Final = 95
#: The SSIMULACRA2 target of a bare ``quality=auto`` unless ASSETGATE_AUTO_QUALITY_TARGET says.
AUTO_TARGET: Final = 75
_AUTO_SCORE = r"(?:3[0-9]|[4-8][0-9]|9[0-5])"
#: ``auto`` or ``auto:<30..95>`` (the integer form is the ``int`` reading).
AUTO_PATTERN = re.compile(rf"auto(?::({_AUTO_SCORE}))?")
#: ``quality``'s integer form, 0..100, as the OpenAPI pattern states it.
QUALITY_NUMBER = r"(?:[0-9]|[1-9][0-9]|100)"


@dataclass(frozen=True, slots=True)
class AutoQuality:
    """What ``quality=auto`` means on this server (``ASSETGATE_AUTO_QUALITY_TARGET``,
    ``ASSETGATE_DEFAULT_QUALITY``): the parser's only input besides the query."""

    target: int = AUTO_TARGET
    default: bool = False  # a request naming no quality gets ``auto`` (not the spec's 85)

    @classmethod
    def from_settings(cls, settings: Settings) -> AutoQuality:
        return cls(settings.auto_quality_target, settings.default_quality == "auto")


#: The spec's behaviour: ``auto`` only when asked for, its target 75.
NO_AUTO_DEFAULT: Final = AutoQuality()
