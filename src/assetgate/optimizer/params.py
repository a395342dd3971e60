"""The optimizer's query parameters as one declarative table (spec §4.1).

``PARAMS`` is the single source of truth: ``spec.parse_spec`` reads each row with the
``web.params`` reader its ``kind`` names, and ``openapi.py`` turns the same rows into OpenAPI
parameters, so the parser and the document cannot disagree. Pure: no I/O, no Starlette.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import unquote_plus

from assetgate.errors import AppError
from assetgate.imaging.formats import DEFAULT_QUALITY, OutputFormat
from assetgate.settings import Settings
from assetgate.web.params import (
    read_bool,
    read_choice,
    read_flag,
    read_int,
    read_number,
    read_str,
    read_strength,
    refuse_empty,
)

Gravity = Literal[
    "center", "north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest"
]
#: ``crop_gravity`` adds ``smart`` (libvips' attention crop) to the nine fixed positions.
CropGravity = Gravity | Literal["smart"]
Fit = Literal["inside", "cover", "fill", "pad"]
Kind = Literal["int", "choice", "bool", "flag", "str", "strength", "number", "quality"]

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
_QUALITY_NUMBER = r"(?:[0-9]|[1-9][0-9]|100)"


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
    max_len: int = MAX_STR
    image: bool = True  # False: only meaningful for CSS/JS
    #: A valid value other than the default: the OpenAPI example, and the value the table-walking
    #: test (tests/optimizer/test_table.py) checks changes the ETag and the cache key.
    example: str = ""
    #: Not in spec §4.1: an assetgate extension (docs/optimizer.md, ``x-extension`` in OpenAPI).
    extension: bool = False
    #: ``strength`` kind: the value ``true`` stands for.
    on: int = DEFAULT_SHARPEN

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
            refuse_empty(query, self.name, BOOL_EXPECTED)
            return read_bool(query, self.name, alias=self.alias, default=bool(self.default))
        if self.kind == "flag":
            return read_flag(query, self.name)
        if self.kind == "strength":
            return read_strength(query, self.name, self.low, self.high, self.on)
        if self.kind == "number":
            return read_number(query, self.name, self.low, self.high)
        if self.kind == "quality":
            return read_quality(query, self)
        assert self.pattern is not None
        return read_str(
            query, self.name, min_len=1, max_len=self.max_len, pattern=re.compile(self.pattern),
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
        if self.kind == "number":
            return {"type": "number", "minimum": self.low, "maximum": self.high}
        if self.kind == "quality":
            return {
                "oneOf": [
                    {"type": "integer", "minimum": self.low, "maximum": self.high},
                    {
                        "type": "string",
                        "pattern": f"^(?:{_QUALITY_NUMBER}|{AUTO_PATTERN.pattern})$",
                    },
                ]
            }
        if self.kind == "strength":
            return {
                "oneOf": [
                    {"type": "boolean"},
                    {"type": "integer", "minimum": self.low, "maximum": self.high},
                ]
            }
        return {
            "type": "string",
            "minLength": 1,
            "maxLength": self.max_len,
            "pattern": f"^(?:{self.pattern})$",
        }


def read_quality(query: Mapping[str, str], param: Param) -> int | str | None:
    """An integer ``low..high``, or ``auto`` / ``auto:<score>`` returned as that string (the spec
    resolves a bare ``auto`` with the server's target); 400 naming the key given."""
    key = param.name if param.name in query else param.alias
    raw = query.get(key) if key is not None else None
    if raw is None or key is None or not raw.strip().startswith("auto"):
        value: int | None = read_int(
            query, param.name, low=param.low, high=param.high, alias=param.alias,
            default=param.default,
        )  # fmt: skip
        return value
    text = raw.strip()
    if AUTO_PATTERN.fullmatch(text) is None:
        raise AppError.bad_param(
            key,
            f"an integer {param.low}..{param.high}, auto, or auto:<score {AUTO_LOW}..{AUTO_HIGH}>",
            raw,
        )
    return text


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
        example=param.example,
        extension=param.extension,
    )


FILE_PARAM: Final = Param(
    "file",
    "str",
    "Path of the file relative to the document root (API form only).",
    pattern=r"[\s\S]+",
    expected="a relative path",
    # 1024 (macOS' PATH_MAX): even as 4-byte characters, percent-encoded, it fits with every
    # other parameter in the 16 KiB of ASSETGATE_MAX_URL_BYTES, so the schema promises no 414.
    max_len=1024,
)

#: The optimizer's parameters, in the order of spec §4.1 (``file`` is read by the route).
PARAMS: Final[tuple[Param, ...]] = (
    _int(
        "width", 1, MAX_SIDE, "Maximum output width; aspect ratio kept.", alias="w", example="100"
    ),
    _int(
        "height", 1, MAX_SIDE, "Maximum output height; aspect ratio kept.", alias="h", example="50"
    ),
    Param(
        "upscaling",
        "choice",
        "`resampling` allows enlargement (output capped at 24 MP).",
        choices=("off", "resampling"),
        default="off",
        example="resampling",
    ),
    Param(
        "crop",
        "str",
        "`w,h` (placed by crop_gravity) or `w,h,x,y` (at coordinates).",
        pattern=CROP_PATTERN.pattern,
        expected=f"w,h or w,h,x,y (w,h 1..{MAX_SIDE}, x,y non-negative integers)",
        example="20,10",
    ),
    Param(
        "aspect_ratio",
        "str",
        "Centre crop to `<number>:<number>`; `auto` = no crop.",
        pattern=rf"auto|{RATIO_PATTERN.pattern}",
        expected="auto or <positive number>:<positive number>",
        example="16:9",
    ),
    Param(
        "crop_gravity",
        "choice",
        "Reference position of a two-value crop.",
        choices=(*GRAVITIES, "smart"),
        default="center",
        example="north",
    ),
    Param(
        "focus_crop",
        "str",
        "`w,h,x,y`: a w x h box centred on the focus point x,y (pixels or 0.0..1.0).",
        pattern=FOCUS_PATTERN.pattern,
        expected=f"w,h,x,y (w,h 1..{MAX_SIDE}; x,y in pixels or both 0.0..1.0)",
        example="20,10,0.5,0.25",
    ),
    Param("flip", "bool", "Vertical flip.", example="true"),
    Param("flop", "bool", "Horizontal flip.", example="true"),
    Param(
        "rotate",
        "choice",
        "Clockwise rotation in degrees.",
        choices=tuple(ROTATIONS),
        default="0",
        example="90",
    ),
    _int("blur", 0, 100, "Gaussian blur strength.", default=0, example="10"),
    Param("sharpen", "strength", "`true` or a strength 0..100.", low=0, high=100, example="true"),
    _int("brightness", -100, 100, "Negative darkens, positive brightens.", default=0, example="20"),
    _int("gamma", -100, 100, "Gamma correction.", default=0, example="20"),
    _int("contrast", -100, 100, "Contrast.", default=0, example="20"),
    _int("saturation", -100, 100, "Saturation.", default=0, example="-50"),
    _int("hue", 0, 100, "Hue rotation amount (100 = a full turn).", default=0, example="25"),
    Param(
        "tint",
        "str",
        "Colour as 6 hexadecimal digits, no `#`, multiplied into the image.",
        pattern=TINT_PATTERN.pattern,
        expected="6 hexadecimal digits",
        example="ff8000",
    ),
    _int("sepia", 0, 100, "Sepia strength.", default=0, example="50"),
    Param(
        "quality",
        "quality",
        "Quality of JPEG, WebP and AVIF output, 0..100; extension: `auto` (the lowest quality "
        f"whose output scores the server's SSIMULACRA2 target, {AUTO_TARGET} unless configured) "
        f"or `auto:<score>` ({AUTO_LOW}..{AUTO_HIGH}).",
        alias="q",
        low=0,
        high=100,
        default=DEFAULT_QUALITY,
        example="60",
    ),
    Param(
        "format",
        "choice",
        "Output format; default WebP when Accept allows it, else the input format.",
        alias="f",
        choices=tuple(FORMAT_CHOICES),
        example="png",
    ),
    Param("min", "flag", "1 minifies CSS or JavaScript.", image=False, example="1"),
    Param("compress", "flag", "1 gzip-compresses CSS or JavaScript.", image=False, example="1"),
    Param("safe", "flag", "1 selects the safe JavaScript minifier.", image=False, example="1"),
    # --- extensions (docs/optimizer.md "Extensions"): none changes an answer unless given -------
    Param(
        "dpr",
        "number",
        "Device pixel ratio 1..8 (decimals allowed): multiplies width and height.",
        low=1,
        high=MAX_DPR,
        example="2",
        extension=True,
    ),
    Param(
        "fit",
        "choice",
        "With width and height: `inside` (aspect kept), `cover` (fill the box, crop by "
        "crop_gravity), `fill` (stretch), `pad` (inside, then extend to exactly the box).",
        choices=FITS,
        default="inside",
        example="pad",
        extension=True,
    ),
    Param(
        "background",
        "str",
        "`rrggbb` or `rrggbbaa`: padding colour and the colour alpha is flattened onto for JPEG.",
        pattern=BACKGROUND_PATTERN.pattern,
        expected="6 or 8 hexadecimal digits (rrggbb or rrggbbaa)",
        example="ff0000",
        extension=True,
    ),
    Param(
        "trim",
        "strength",
        "`true` or a threshold 1..100: cut borders of the top-left corner's colour first.",
        low=1,
        high=100,
        on=DEFAULT_TRIM,
        example="true",
        extension=True,
    ),
    _int(
        "max_bytes",
        1,
        MAX_BYTES,
        "JPEG, WebP, AVIF: the highest quality up to `quality` whose output fits in this many "
        "bytes (X-Optimizer-Budget says when even the lowest does not).",
        example="20000",
        extension=True,
    ),
    Param(
        "info",
        "flag",
        "1 answers JSON facts about the image (size, format, colours, BlurHash, ThumbHash, "
        "placeholder) instead of pixels.",
        example="1",
        extension=True,
    ),
    Param(
        "watermark",
        "str",
        "Name of a watermark configured in ASSETGATE_WATERMARKS, applied last.",
        pattern=NAME_PATTERN.pattern,
        expected="a configured watermark name",
        example="logo",
        extension=True,
    ),
)

#: Every row of the OpenAPI document, aliases as rows of their own.
OPENAPI_PARAMS: Final[tuple[Param, ...]] = tuple(
    row for param in PARAMS for row in ((param, _alias_of(param)) if param.alias else (param,))
)

#: Short name -> long name (``w`` -> ``width``): the long name wins when both are given.
ALIASES: Final[Mapping[str, str]] = {p.alias: p.name for p in PARAMS if p.alias}

#: Names that turn a public URL from "static file" into "optimize this".
RECOGNISED: Final[frozenset[str]] = frozenset({p.name for p in OPENAPI_PARAMS} | {"face_crop"})


#: What a switch accepts, in its 400s (docs/optimizer.md, "Switches").
BOOL_EXPECTED: Final = "true, false, 1 or 0 (the bare name means true)"
#: Names that may stand alone in a query string: ``?flip`` is ``flip=true``.
SWITCHES: Final[frozenset[str]] = frozenset(
    p.name for p in PARAMS if p.kind in ("bool", "strength")
)


def bare_switches(query_string: str) -> str:
    """``flip`` (no ``=``) -> ``flip=true``, as imgproxy and thumbor read a bare switch.

    The query mapping cannot tell ``?flip`` from ``?flip=`` (both are ``""``), so this runs on
    the raw string; ``?flip=`` stays empty and is a 400 (``web.params.refuse_empty``)."""
    if not query_string:
        return query_string
    pieces = query_string.split("&")
    bare = [p for p in pieces if "=" not in p and unquote_plus(p) in SWITCHES]
    if not bare:
        return query_string
    return "&".join(f"{p}=true" if p in bare else p for p in pieces)
