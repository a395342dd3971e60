"""Watermarks configured by name (``ASSETGATE_WATERMARKS``), stamped last by ``watermark=<name>``.

The setting is JSON: ``{"logo": {"path": "brand/logo.png", "gravity": "southeast",
"margin": 16, "opacity": 0.6, "size": 0.2}}``. Each image is read once, at start, from under
the document root (the same path check as a request), checked to be an image by its magic bytes
and its header read under the request's decode limits (JPEG scans, GIF canvas, frames, disabled
codecs) with a pixel cap of its own, ``MAX_WATERMARK_PIXELS``: a watermark is decoded for each
render that asks for it, so a 49 MP one cost 29x the CPU of a logo per output width, and a 400 MP
PNG, a 2,080-scan JPEG and a 5,000-frame GIF were accepted. The header check is
``optimizer.watermark_images`` (libvips, Pillow), handed in as ``check``: this module stays pure
for the planning contract. A bad entry stops the server naming the variable. Each watermark's
bytes and placement are in ``fingerprint``, which goes into every image ETag: changing a logo
changes the tags.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from assetgate.imaging.formats import FORMATS, sniff
from assetgate.optimizer.vocabulary import GRAVITIES, NAME_PATTERN, Gravity
from assetgate.settings import json_value
from assetgate.web.paths import locate

#: Largest watermark file read (a logo, not a photo).
MAX_WATERMARK_BYTES: Final = 4 * 1024 * 1024
#: Largest watermark image (2000x2000): decoded per render, fitted to a share of the output.
MAX_WATERMARK_PIXELS: Final = 4_000_000

#: ``(data, format)`` -> None, or ValueError saying what is wrong with the image.
ImageCheck = Callable[[bytes, str], None]
_KEYS: Final = frozenset({"path", "gravity", "margin", "opacity", "size"})


@dataclass(frozen=True, slots=True)
class Watermark:
    data: bytes  # the encoded image, decoded per render (a small file: well under a ms)
    gravity: Gravity = "southeast"
    margin: int = 0  # px from the edges the gravity names
    opacity: float = 1.0  # 0..1, multiplied into the watermark's own alpha
    size: float = 0.25  # width as a fraction of the output's width (height kept inside it)


Watermarks = Mapping[str, Watermark]
NO_WATERMARKS: Final[Watermarks] = MappingProxyType({})


def parse_watermarks(
    value: str | None, real_root: str, check: ImageCheck | None = None
) -> dict[str, Watermark]:
    """JSON (inline or its file: ``settings.json_value``) -> checked watermarks, else
    ValueError saying which entry and why. ``check``: the image's header checks
    (``watermark_images.checker``); None only where nothing decodes."""
    if value is None or not value.strip():
        return {}
    data = json_value(value)
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object mapping a name to its watermark")
    return {str(name): _entry(str(name), spec, real_root, check) for name, spec in data.items()}


def fingerprint(watermarks: Watermarks) -> str:
    """A digest of every watermark's bytes and placement ("" when none are configured)."""
    if not watermarks:
        return ""
    digest = hashlib.blake2b(digest_size=8)
    for name in sorted(watermarks):
        mark = watermarks[name]
        digest.update(repr((name, mark.gravity, mark.margin, mark.opacity, mark.size)).encode())
        digest.update(hashlib.blake2b(mark.data, digest_size=16).digest())
    return digest.hexdigest()


def _entry(name: str, spec: object, real_root: str, check: ImageCheck | None) -> Watermark:
    if not NAME_PATTERN.fullmatch(name):
        raise ValueError(f"watermark name {name[:64]!r}: expected 1-64 of A-Z a-z 0-9 _ -")
    if not isinstance(spec, dict):
        raise ValueError(f"watermark {name!r}: expected an object with a path")
    unknown = sorted(set(spec) - _KEYS)
    if unknown:
        raise ValueError(f"watermark {name!r}: unknown key {unknown[0]!r}")
    path = spec.get("path")
    if not isinstance(path, str):
        raise ValueError(f"watermark {name!r}: path: expected a path under the document root")
    found = locate(real_root, path)
    if found is None:
        raise ValueError(f"watermark {name!r}: path: no such file under the document root")
    if found.stat.st_size > MAX_WATERMARK_BYTES:
        raise ValueError(f"watermark {name!r}: path: over {MAX_WATERMARK_BYTES} bytes")
    with open(found.real, "rb") as handle:
        data = handle.read(MAX_WATERMARK_BYTES + 1)
    fmt = sniff(data)
    if fmt is None or FORMATS[fmt].saver is None:  # a format every output can carry
        raise ValueError(f"watermark {name!r}: path: expected a PNG, WebP, GIF, JPEG or AVIF")
    if check is not None:
        try:
            check(data, fmt)
        except ValueError as exc:
            raise ValueError(f"watermark {name!r}: path: {exc}") from None
    gravity = spec.get("gravity", "southeast")
    if gravity not in GRAVITIES:
        raise ValueError(f"watermark {name!r}: gravity: expected one of {', '.join(GRAVITIES)}")
    return Watermark(
        data=data,
        gravity=gravity,
        margin=int(_number(name, spec, "margin", 0, 0, 10_000)),
        opacity=_number(name, spec, "opacity", 1.0, 0.0, 1.0),
        size=_number(name, spec, "size", 0.25, 0.01, 1.0),
    )


def _number(name: str, spec: Mapping[str, object], key: str, default: float, low: float,
            high: float) -> float:  # fmt: skip
    value = spec.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ValueError(f"watermark {name!r}: {key}: expected a number {low:g}..{high:g}")
    return float(value)
