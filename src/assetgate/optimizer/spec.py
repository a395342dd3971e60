"""Query string -> ImageSpec, driven by the parameter table of ``optimizer.params``.

Pure on purpose: no I/O, no pyvips, no Starlette, so every row of the spec's parameter table (§4.1)
is a one-line test. Aliases (``w``, ``h``, ``q``, ``f``) lose to their long names. Unknown
parameters are ignored (cache busters such as ``v=123``); ``face_crop`` is refused because we do no
face detection.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Final

from assetgate.errors import AppError
from assetgate.imaging.formats import DEFAULT_QUALITY, OutputFormat
from assetgate.optimizer.params import PARAMS, RECOGNISED
from assetgate.optimizer.vocabulary import (
    AUTO_PATTERN,
    CROP_PATTERN,
    FOCUS_PATTERN,
    FORMAT_CHOICES,
    MAX_SIDE,
    NO_AUTO_DEFAULT,
    RATIO_PATTERN,
    ROTATIONS,
    AutoQuality,
    CropGravity,
    Fit,
)


@dataclass(frozen=True, slots=True)
class Crop:
    width: int
    height: int
    x: int | None = None  # None: placed by gravity
    y: int | None = None


@dataclass(frozen=True, slots=True)
class FocusCrop:
    width: int
    height: int
    x: float
    y: float
    relative: bool  # x, y in 0.0..1.0 of the image size


@dataclass(frozen=True, slots=True)
class Filters:
    """The pixel filters of spec §4.1, in pipeline order: one value the spec and the plan share."""

    blur: int = 0
    sharpen: int = 0
    brightness: int = 0
    gamma: int = 0
    contrast: int = 0
    saturation: int = 0
    hue: int = 0
    tint: tuple[int, int, int] | None = None
    sepia: int = 0

    def __bool__(self) -> bool:
        """True when any filter is on (all at their defaults is the identity)."""
        return self != NO_FILTERS


#: Every filter off: the identity.
NO_FILTERS: Final = Filters()


@dataclass(frozen=True, slots=True)
class ImageSpec:
    width: int | None = None
    height: int | None = None
    upscale: bool = False
    crop: Crop | None = None
    aspect_ratio: float | None = None  # width / height
    gravity: CropGravity = "center"
    focus: FocusCrop | None = None
    flip: bool = False
    flop: bool = False
    rotate: int = 0  # clockwise, normalised to 0, 90, 180, 270
    filters: Filters = NO_FILTERS
    quality: int = DEFAULT_QUALITY
    format: OutputFormat | None = None
    #: ``quality=auto`` (extension): the SSIMULACRA2 score to reach; None: ``quality`` is fixed.
    auto: int | None = None
    # --- extensions (docs/optimizer.md) ---
    fit: Fit = "inside"  # anything else only with both width and height
    background: tuple[int, int, int, int] | None = None  # RGBA
    trim: int = 0  # threshold; 0 = off
    max_bytes: int | None = None
    info: bool = False  # JSON facts about the source instead of pixels
    watermark: str | None = None

    @property
    def box(self) -> bool:
        """Both sides given: the box ``fit`` works in."""
        return self.width is not None and self.height is not None

    def canonical(self) -> ImageSpec:
        """The spec with every value that cannot change the answer set to its default.

        Only the winning crop method counts (focus_crop > crop > aspect_ratio); ``fit`` only
        with both sides; the gravity only where something is placed by it (a two-value crop,
        ``fit=cover``/``pad``, a smart aspect-ratio crop); ``info=1`` describes the source, so
        nothing else counts with it.
        """
        if self.info:
            return ImageSpec(info=True)
        focus, crop, ratio = self.focus, self.crop, self.aspect_ratio
        if focus is not None:
            crop = ratio = None
        elif crop is not None:
            ratio = None
        fit = self.fit if self.box else "inside"
        placed = (
            (crop is not None and crop.x is None)
            or (ratio is not None and self.gravity == "smart")
            or fit in ("cover", "pad")
        )
        gravity = self.gravity if placed else "center"
        quality = DEFAULT_QUALITY if self.auto is not None else self.quality  # auto decides it
        return replace(
            self, crop=crop, aspect_ratio=ratio, fit=fit, gravity=gravity, quality=quality
        )

    def cache_key(self) -> tuple[object, ...]:
        """Canonical: equal for equivalent queries (aliases, order, spelled-out defaults).

        Derived from every field of the canonical spec, so a new field is part of the key (and
        of the ETag) without anyone remembering to add it.
        """
        canonical = self.canonical()
        return tuple(getattr(canonical, field.name) for field in fields(canonical))


def is_recognised(query: Mapping[str, str]) -> bool:
    """True when the query names any optimizer parameter (else a public URL is a static file)."""
    return any(name in RECOGNISED for name in query)


def parse_spec(query: Mapping[str, str], auto: AutoQuality = NO_AUTO_DEFAULT) -> ImageSpec:
    """Every parameter validated (400 names it), even the CSS/JS ones an image ignores.

    ``auto``: the server's ``quality=auto`` settings: the target of a bare ``auto``, and whether
    a request naming no quality gets it."""
    if "face_crop" in query:
        raise AppError(400, "face_crop: face detection is not supported", param="face_crop")
    raw = {param.name: param.read(query) for param in PARAMS}
    rotate = ROTATIONS[raw["rotate"]] % 360
    dpr = raw["dpr"] or 1.0
    return ImageSpec(
        width=_scaled(raw["width"], dpr),
        height=_scaled(raw["height"], dpr),
        upscale=raw["upscaling"] == "resampling",
        crop=_parse_crop(raw["crop"]),
        aspect_ratio=_parse_ratio(raw["aspect_ratio"]),
        gravity=raw["crop_gravity"],
        focus=_parse_focus(raw["focus_crop"]),
        flip=raw["flip"],
        flop=raw["flop"],
        rotate=rotate,
        filters=Filters(
            blur=raw["blur"],
            sharpen=raw["sharpen"],
            brightness=raw["brightness"],
            gamma=raw["gamma"],
            contrast=raw["contrast"],
            saturation=raw["saturation"],
            hue=raw["hue"] % 100,
            tint=_parse_tint(raw["tint"]),
            sepia=raw["sepia"],
        ),
        quality=raw["quality"] if isinstance(raw["quality"], int) else DEFAULT_QUALITY,
        auto=_auto_target(raw["quality"], query, auto),
        format=FORMAT_CHOICES[raw["format"]] if raw["format"] else None,
        fit=raw["fit"],
        background=_parse_background(raw["background"]),
        trim=raw["trim"],
        max_bytes=raw["max_bytes"],
        info=raw["info"],
        watermark=raw["watermark"],
    )


def _auto_target(raw: int | str, query: Mapping[str, str], auto: AutoQuality) -> int | None:
    """The score ``quality=auto[:<score>]`` asks for; the server's default for no quality."""
    if isinstance(raw, str):
        match = AUTO_PATTERN.fullmatch(raw)
        assert match is not None  # read_quality checked it
        return int(match[1]) if match[1] else auto.target
    named = "quality" in query or "q" in query
    return auto.target if auto.default and not named else None


def _scaled(side: int | None, dpr: float) -> int | None:
    """``dpr`` folded into a side: ``dpr=2&width=100`` is ``width=200`` (and shares its key)."""
    if side is None or dpr == 1.0:
        return side
    return max(1, min(MAX_SIDE, round(side * dpr)))


def _parse_background(raw: str | None) -> tuple[int, int, int, int] | None:
    if raw is None:
        return None
    alpha = int(raw[6:8], 16) if len(raw) == 8 else 255
    return int(raw[0:2], 16), int(raw[2:4], 16), int(raw[4:6], 16), alpha


def _parse_crop(raw: str | None) -> Crop | None:
    if raw is None:
        return None
    match = CROP_PATTERN.fullmatch(raw)
    assert match is not None  # the pattern bounds every number
    if match[3] is None:
        return Crop(int(match[1]), int(match[2]))
    return Crop(int(match[1]), int(match[2]), int(match[3]), int(match[4]))


def _parse_ratio(raw: str | None) -> float | None:
    if raw is None or raw == "auto":
        return None
    match = RATIO_PATTERN.fullmatch(raw)
    assert match is not None  # two positive numbers: any ratio of them is a usable crop
    ratio = float(match[1]) / float(match[2])
    return round(ratio, 9) or ratio  # rounded for stable cache keys, never down to 0


def _parse_focus(raw: str | None) -> FocusCrop | None:
    if raw is None:
        return None
    match = FOCUS_PATTERN.fullmatch(raw)
    assert match is not None  # sides 1..MAX_SIDE, x,y in pixels or both within 0.0..1.0
    width, height = int(match[1]), int(match[2])
    if match[3] is not None:
        return FocusCrop(width, height, float(match[3]), float(match[4]), False)
    x, y = match[5], match[6]
    return FocusCrop(width, height, float(x), float(y), "." in x or "." in y)


def _parse_tint(raw: str | None) -> tuple[int, int, int] | None:
    if raw is None:
        return None
    return int(raw[0:2], 16), int(raw[2:4], 16), int(raw[4:6], 16)
