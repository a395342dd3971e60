"""The optimizer's query parameters as one declarative table (spec §4.1).

``PARAMS`` is the single source of truth: ``spec.parse_spec`` reads each row with the
``web.params`` reader its ``kind`` names, ``openapi.py`` turns the same rows into OpenAPI
parameters and ``cli/optimize.py`` into flags, so they cannot disagree. A row's type and its
reading are ``optimizer.param_row``; the values a row accepts, ``optimizer.vocabulary``. Pure: no
I/O, no Starlette.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import unquote_plus

from assetgate.imaging.formats import DEFAULT_QUALITY
from assetgate.optimizer.param_row import Param
from assetgate.optimizer.vocabulary import (
    AUTO_HIGH,
    AUTO_LOW,
    AUTO_TARGET,
    BACKGROUND_PATTERN,
    CROP_PATTERN,
    DEFAULT_TRIM,
    FITS,
    FOCUS_PATTERN,
    FORMAT_CHOICES,
    GRAVITIES,
    MAX_BYTES,
    MAX_DPR,
    MAX_SIDE,
    NAME_PATTERN,
    RATIO_PATTERN,
    ROTATIONS,
    TINT_PATTERN,
)


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
