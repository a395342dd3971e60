"""Query string -> ImageSpec, driven by one declarative table that also writes the OpenAPI document.

Pure on purpose: no I/O, no pyvips, no Starlette, so every row of the spec's parameter table (§4.1)
is a one-line test. ``PARAMS`` is the single source of truth: ``parse_spec`` reads each row with the
``web.params`` reader its ``kind`` names, and ``openapi.py`` turns the same rows into OpenAPI
parameters. Aliases (``w``, ``h``, ``q``, ``f``) lose to their long names. Unknown parameters are
ignored (cache busters such as ``v=123``); ``face_crop`` is refused because we do no face detection.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from assetgate.errors import AppError
from assetgate.imaging.formats import DEFAULT_QUALITY, OutputFormat
from assetgate.web.params import read_bool, read_choice, read_flag, read_int, read_str

Gravity = Literal[
    "center", "north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest"
]
Kind = Literal["int", "choice", "bool", "flag", "str", "strength"]

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
#: Strength used for ``sharpen=true``.
DEFAULT_SHARPEN: Final = 50

_CROP = re.compile(r"([0-9]{1,5}),([0-9]{1,5})(?:,([0-9]{1,9}),([0-9]{1,9}))?")
_NUM = r"[0-9]{1,9}(?:\.[0-9]{1,9})?"
_RATIO = re.compile(rf"({_NUM}):({_NUM})")
_FOCUS = re.compile(rf"([0-9]{{1,5}}),([0-9]{{1,5}}),({_NUM}),({_NUM})")
_TINT = re.compile(r"[0-9a-fA-F]{6}")


@dataclass(frozen=True, slots=True)
class Param:
    """One query parameter: how to read it and how to describe it."""

    name: str
    kind: Kind
    doc: str
    alias: str | None = None
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    default: Any = None
    pattern: str | None = None
    expected: str = ""
    image: bool = True  # False: only meaningful for CSS/JS

    def read(self, query: Mapping[str, str]) -> Any:
        if self.kind == "int":
            return read_int(
                query, self.name, low=self.low, high=self.high, alias=self.alias,
                default=self.default,
            )  # fmt: skip
        if self.kind == "choice":
            table = {c: c for c in self.choices}
            return read_choice(query, self.name, table, alias=self.alias, default=self.default)
        if self.kind == "bool":
            return read_bool(query, self.name, alias=self.alias, default=bool(self.default))
        if self.kind == "flag":
            return read_flag(query, self.name)
        if self.kind == "strength":
            return _read_strength(query, self.name, self.high)
        assert self.pattern is not None
        return read_str(
            query, self.name, min_len=1, max_len=64, pattern=re.compile(self.pattern),
            expected=self.expected,
        )  # fmt: skip

    def schema(self) -> dict[str, Any]:
        """JSON Schema of the raw query value (OpenAPI 3.1)."""
        if self.kind == "int":
            return {"type": "integer", "minimum": self.low, "maximum": self.high}
        if self.kind == "choice":
            return {"type": "string", "enum": list(self.choices)}
        if self.kind == "bool":
            return {"type": "boolean"}
        if self.kind == "flag":
            return {"type": "integer", "enum": [0, 1]}
        if self.kind == "strength":
            return {
                "oneOf": [
                    {"type": "boolean"},
                    {"type": "integer", "minimum": self.low, "maximum": self.high},
                ]
            }
        return {"type": "string", "pattern": f"^(?:{self.pattern})$"}


def _int(name: str, low: int, high: int, doc: str, **kw: Any) -> Param:
    return Param(name, "int", doc, low=low, high=high, **kw)


def _alias_of(param: Param) -> Param:
    assert param.alias is not None
    return Param(
        param.alias,
        param.kind,
        f"Short name of `{param.name}`; `{param.name}` wins if both are given.",
        low=param.low,
        high=param.high,
        choices=param.choices,
        pattern=param.pattern,
    )


FILE_PARAM: Final = Param(
    "file",
    "str",
    "Path of the file relative to the document root (API form only).",
    pattern=r"[\s\S]+",
    expected="a relative path",
)

#: The optimizer's parameters, in the order of spec §4.1 (``file`` is read by the route).
PARAMS: Final[tuple[Param, ...]] = (
    _int("width", 1, MAX_SIDE, "Maximum output width; aspect ratio kept.", alias="w"),
    _int("height", 1, MAX_SIDE, "Maximum output height; aspect ratio kept.", alias="h"),
    Param(
        "upscaling",
        "choice",
        "`resampling` allows enlargement (output capped at 24 MP).",
        choices=("off", "resampling"),
        default="off",
    ),
    Param(
        "crop",
        "str",
        "`w,h` (placed by crop_gravity) or `w,h,x,y` (at coordinates).",
        pattern=_CROP.pattern,
        expected="w,h or w,h,x,y (non-negative integers)",
    ),
    Param(
        "aspect_ratio",
        "str",
        "Centre crop to `<number>:<number>`; `auto` = no crop.",
        pattern=rf"auto|{_RATIO.pattern}",
        expected="auto or <number>:<number>",
    ),
    Param(
        "crop_gravity",
        "choice",
        "Reference position of a two-value crop.",
        choices=GRAVITIES,
        default="center",
    ),
    Param(
        "focus_crop",
        "str",
        "`w,h,x,y`: a w x h box centred on the focus point x,y (pixels or 0.0..1.0).",
        pattern=_FOCUS.pattern,
        expected="w,h,x,y (x,y in pixels or 0.0..1.0)",
    ),
    Param("flip", "bool", "Vertical flip."),
    Param("flop", "bool", "Horizontal flip."),
    Param(
        "rotate",
        "choice",
        "Clockwise rotation in degrees.",
        choices=tuple(ROTATIONS),
        default="0",
    ),
    _int("blur", 0, 100, "Gaussian blur strength.", default=0),
    Param("sharpen", "strength", "`true` or a strength 0..100.", low=0, high=100),
    _int("brightness", -100, 100, "Negative darkens, positive brightens.", default=0),
    _int("gamma", -100, 100, "Gamma correction.", default=0),
    _int("contrast", -100, 100, "Contrast.", default=0),
    _int("saturation", -100, 100, "Saturation.", default=0),
    _int("hue", 0, 100, "Hue rotation amount (100 = a full turn).", default=0),
    Param(
        "tint",
        "str",
        "Colour as 6 hexadecimal digits, no `#`, multiplied into the image.",
        pattern=_TINT.pattern,
        expected="6 hexadecimal digits",
    ),
    _int("sepia", 0, 100, "Sepia strength.", default=0),
    _int(
        "quality",
        0,
        100,
        "Quality of JPEG, WebP and AVIF output.",
        alias="q",
        default=DEFAULT_QUALITY,
    ),
    Param(
        "format",
        "choice",
        "Output format; default WebP when Accept allows it, else the input format.",
        alias="f",
        choices=tuple(FORMAT_CHOICES),
    ),
    Param("min", "flag", "1 minifies CSS or JavaScript.", image=False),
    Param("compress", "flag", "1 gzip-compresses CSS or JavaScript.", image=False),
    Param("safe", "flag", "1 selects the safe JavaScript minifier.", image=False),
)

#: Every row of the OpenAPI document, aliases as rows of their own.
OPENAPI_PARAMS: Final[tuple[Param, ...]] = tuple(
    row for param in PARAMS for row in ((param, _alias_of(param)) if param.alias else (param,))
)

#: Names that turn a public URL from "static file" into "optimize this".
RECOGNISED: Final[frozenset[str]] = frozenset({p.name for p in OPENAPI_PARAMS} | {"face_crop"})


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

    def key(self) -> tuple[object, ...]:
        return (
            self.blur, self.sharpen, self.brightness, self.gamma, self.contrast,
            self.saturation, self.hue, self.tint, self.sepia,
        )  # fmt: skip


#: Every filter off: the identity.
NO_FILTERS: Final = Filters()


@dataclass(frozen=True, slots=True)
class ImageSpec:
    width: int | None = None
    height: int | None = None
    upscale: bool = False
    crop: Crop | None = None
    aspect_ratio: float | None = None  # width / height
    gravity: Gravity = "center"
    focus: FocusCrop | None = None
    flip: bool = False
    flop: bool = False
    rotate: int = 0  # clockwise, normalised to 0, 90, 180, 270
    filters: Filters = NO_FILTERS
    quality: int = DEFAULT_QUALITY
    format: OutputFormat | None = None

    def cache_key(self) -> tuple[object, ...]:
        """Canonical: equal for equivalent queries (aliases, order, spelled-out defaults).

        Only the winning crop method counts (focus_crop > crop > aspect_ratio), and the gravity
        only matters for a two-value crop.
        """
        crop: object = None
        if self.focus is not None:
            crop = ("focus", self.focus)
        elif self.crop is not None:
            gravity = self.gravity if self.crop.x is None else None
            crop = ("crop", self.crop, gravity)
        elif self.aspect_ratio is not None:
            crop = ("ratio", self.aspect_ratio)
        return (
            self.width, self.height, self.upscale, crop, self.flip, self.flop, self.rotate,
            *self.filters.key(), self.quality, self.format,
        )  # fmt: skip


def is_recognised(query: Mapping[str, str]) -> bool:
    """True when the query names any optimizer parameter (else a public URL is a static file)."""
    return any(name in RECOGNISED for name in query)


def parse_spec(query: Mapping[str, str]) -> ImageSpec:
    """Every parameter validated (400 names it), even the CSS/JS ones an image ignores."""
    if "face_crop" in query:
        raise AppError(400, "face_crop: face detection is not supported", param="face_crop")
    raw = {param.name: param.read(query) for param in PARAMS}
    rotate = ROTATIONS[raw["rotate"]] % 360
    return ImageSpec(
        width=raw["width"],
        height=raw["height"],
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
        quality=raw["quality"],
        format=FORMAT_CHOICES[raw["format"]] if raw["format"] else None,
    )


def _read_strength(query: Mapping[str, str], name: str, high: int) -> int:
    raw = query.get(name)
    if raw is None:
        return 0
    lowered = raw.strip().lower()
    if lowered in ("true", "yes", "on"):
        return DEFAULT_SHARPEN
    if lowered in ("false", "no", "off", ""):
        return 0
    value = read_int(query, name, low=0, high=high)
    assert value is not None
    return value


def _parse_crop(raw: str | None) -> Crop | None:
    if raw is None:
        return None
    match = _CROP.fullmatch(raw)
    assert match is not None
    width, height = int(match[1]), int(match[2])
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        raise AppError.bad_param("crop", f"width and height 1..{MAX_SIDE}", raw)
    if match[3] is None:
        return Crop(width, height)
    return Crop(width, height, int(match[3]), int(match[4]))


def _parse_ratio(raw: str | None) -> float | None:
    if raw is None or raw == "auto":
        return None
    match = _RATIO.fullmatch(raw)
    assert match is not None
    across, down = float(match[1]), float(match[2])
    if across <= 0 or down <= 0 or not 1e-3 <= across / down <= 1e3:
        raise AppError.bad_param("aspect_ratio", "two positive numbers within 1:1000", raw)
    return round(across / down, 9)


def _parse_focus(raw: str | None) -> FocusCrop | None:
    if raw is None:
        return None
    match = _FOCUS.fullmatch(raw)
    assert match is not None
    width, height = int(match[1]), int(match[2])
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        raise AppError.bad_param("focus_crop", f"width and height 1..{MAX_SIDE}", raw)
    x, y = float(match[3]), float(match[4])
    relative = "." in match[3] or "." in match[4]
    if relative and not (0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
        raise AppError.bad_param("focus_crop", "relative x,y within 0.0..1.0", raw)
    return FocusCrop(width, height, x, y, relative)


def _parse_tint(raw: str | None) -> tuple[int, int, int] | None:
    if raw is None:
        return None
    return int(raw[0:2], 16), int(raw[2:4], 16), int(raw[4:6], 16)
