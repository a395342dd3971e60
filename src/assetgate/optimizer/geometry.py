"""Where the pixels go, pure: the crop box (fixed, by gravity or left to the attention crop), the
size the resize reaches (``fit`` inside/cover/fill/pad, ``dpr`` already folded in), the padding
canvas, and the load strategy (shrink-on-load size, the crop mapped into loaded space). The
planner (``optimizer.plan``) calls these once per variant; they never see a pixel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from assetgate.errors import AppError
from assetgate.imaging.formats import SourceInfo
from assetgate.optimizer.spec import ImageSpec
from assetgate.optimizer.vocabulary import CropGravity


@dataclass(frozen=True, slots=True)
class Box:
    x: int
    y: int
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class Pad:
    """``fit=pad``: the resized image placed at x, y on a width x height canvas of ``colour``."""

    width: int
    height: int
    x: int
    y: int
    colour: tuple[int, int, int, int]


#: ``fit=pad`` without ``background``: transparent (white where the format has no alpha).
CLEAR: Final = (0, 0, 0, 0)
WHITE: Final = (255, 255, 255)


def geometry(
    spec: ImageSpec, source: SourceInfo, gravity: CropGravity
) -> tuple[Box | None, tuple[int, int] | None, tuple[int, int], tuple[int, int]]:
    """(fixed crop box or None, smart crop size or None, the size they leave, the size after
    resizing), before any rotation. A smart gravity leaves the placement to the pixels."""
    width, height = source.width, source.height
    box = _crop_box(spec, width, height, gravity)
    smart = _smart_size(spec, width, height) if gravity == "smart" else None
    base = smart or ((box.width, box.height) if box else (width, height))
    if spec.fit == "cover" and spec.box:
        assert spec.width is not None
        assert spec.height is not None
        cover = _ratio_size(*base, spec.width / spec.height)
        if cover != base:
            if gravity == "smart":
                smart = cover
            else:
                x, y = place(gravity, base[0] - cover[0], base[1] - cover[1])
                ox, oy = (box.x, box.y) if box else (0, 0)
                box = Box(ox + x, oy + y, *cover)
            base = cover
    return box, smart, base, _fit(spec, *base)


def _smart_size(spec: ImageSpec, width: int, height: int) -> tuple[int, int] | None:
    """The size of a crop whose place the attention crop chooses (two-value crop, ratio)."""
    if spec.focus is not None:
        return None
    if spec.crop is not None:
        if spec.crop.x is not None:
            return None
        size = (min(spec.crop.width, width), min(spec.crop.height, height))
    elif spec.aspect_ratio is not None:
        size = _ratio_size(width, height, spec.aspect_ratio)
    else:
        return None
    return None if size == (width, height) else size


def _ratio_size(width: int, height: int, ratio: float) -> tuple[int, int]:
    """The largest width/height == ``ratio`` box inside width x height."""
    if width / height > ratio:
        return max(1, min(width, round(height * ratio))), height
    return width, max(1, min(height, round(width / ratio)))


def pad_for(spec: ImageSpec, target: tuple[int, int], gravity: CropGravity) -> Pad | None:
    """``fit=pad``: the canvas is the box itself, whatever the image's own size."""
    if spec.fit != "pad" or spec.width is None or spec.height is None:
        return None
    width, height = spec.width, spec.height
    if (width, height) == target:
        return None
    x, y = place("center" if gravity == "smart" else gravity, width - target[0], height - target[1])
    return Pad(width, height, x, y, spec.background or CLEAR)


def turned(spec: ImageSpec, size: tuple[int, int]) -> tuple[int, int]:
    return (size[1], size[0]) if spec.rotate in (90, 270) else size


def _crop_box(spec: ImageSpec, width: int, height: int, gravity: CropGravity) -> Box | None:
    """Rule 2: focus_crop, then crop, then aspect_ratio. None when the box is the whole image,
    or when a smart gravity places it (``_smart_size``)."""
    box: Box | None = None
    if spec.focus is not None:
        focus = spec.focus
        w, h = min(focus.width, width), min(focus.height, height)
        cx = focus.x * width if focus.relative else focus.x
        cy = focus.y * height if focus.relative else focus.y
        x = _clamp(round(cx - w / 2), 0, width - w)
        y = _clamp(round(cy - h / 2), 0, height - h)
        box = Box(x, y, w, h)
    elif spec.crop is not None:
        crop = spec.crop
        if crop.x is None or crop.y is None:
            if gravity == "smart":
                return None
            w, h = min(crop.width, width), min(crop.height, height)
            x, y = place(gravity, width - w, height - h)
            box = Box(x, y, w, h)
        else:
            if crop.x >= width or crop.y >= height:
                raise AppError.bad_param(
                    "crop",
                    f"a box that overlaps the {width}x{height} image",
                    f"{crop.width},{crop.height},{crop.x},{crop.y}",
                )
            box = Box(
                crop.x, crop.y, min(crop.width, width - crop.x), min(crop.height, height - crop.y)
            )
    elif spec.aspect_ratio is not None:
        if gravity == "smart":
            return None
        w, h = _ratio_size(width, height, spec.aspect_ratio)
        box = Box((width - w) // 2, (height - h) // 2, w, h)
    if box is not None and (box.width, box.height) == (width, height):
        return None
    return box


def place(gravity: CropGravity, spare_x: int, spare_y: int) -> tuple[int, int]:
    x = 0 if "west" in gravity else spare_x if "east" in gravity else spare_x // 2
    y = 0 if "north" in gravity else spare_y if "south" in gravity else spare_y // 2
    return x, y


def _fit(spec: ImageSpec, width: int, height: int) -> tuple[int, int]:
    """Fit inside width x height, aspect kept; never larger unless upscaling=resampling.

    ``fit=cover`` arrives here with the box's ratio already cut, and gets exactly the box when
    the source is large enough; ``fit=fill`` stretches each side on its own."""
    if spec.width is None and spec.height is None:
        return width, height
    if spec.box and spec.fit in ("cover", "fill"):
        assert spec.width is not None
        assert spec.height is not None
        if spec.fit == "fill":
            if spec.upscale:
                return spec.width, spec.height
            return min(spec.width, width), min(spec.height, height)
        if spec.upscale or (spec.width <= width and spec.height <= height):
            return spec.width, spec.height
    scale = min(
        spec.width / width if spec.width else float("inf"),
        spec.height / height if spec.height else float("inf"),
    )
    if not spec.upscale:
        scale = min(scale, 1.0)
    fitted_w = spec.width if spec.width and scale == spec.width / width else round(width * scale)
    fitted_h = (
        spec.height if spec.height and scale == spec.height / height else round(height * scale)
    )
    return max(1, fitted_w), max(1, fitted_h)


Strategy = tuple[tuple[int, int] | None, Box | None, tuple[int, int] | None, tuple[int, int] | None]


def strategy(
    source: SourceInfo,
    box: Box | None,
    smart: tuple[int, int] | None,
    base: tuple[int, int],
    target: tuple[int, int],
    *,
    decoded: bool = False,
) -> Strategy:
    """(load_size, crop in loaded space, smart crop size, resize after crop); ``base`` is the
    size the crops leave."""
    if target == base:
        return None, box, smart, None
    if decoded or target[0] > base[0] or target[1] > base[1]:
        return None, box, smart, target  # enlarging: decode at full size, then resample
    if box is None and smart is None:
        return target, None, None, None
    sx, sy = target[0] / base[0], target[1] / base[1]
    load_w = max(target[0], round(source.width * sx))
    load_h = max(target[1], round(source.height * sy))
    if box is None:
        return (load_w, load_h), None, target, None
    # the fixed box in loaded space: exactly the target, or what the smart crop then cuts
    box_w = target[0] if smart is None else _clamp(round(box.width * sx), target[0], load_w)
    box_h = target[1] if smart is None else _clamp(round(box.height * sy), target[1], load_h)
    x = _clamp(round(box.x * sx), 0, load_w - box_w)
    y = _clamp(round(box.y * sy), 0, load_h - box_h)
    return (load_w, load_h), Box(x, y, box_w, box_h), (target if smart else None), None


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))
