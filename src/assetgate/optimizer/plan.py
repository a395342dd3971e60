"""ImageSpec + SourceInfo + Accept -> Plan: every decision made once, before a pixel is touched.

Pure (no pyvips), and the optimizer's one planning call, as imgproxy's ``prepare`` step: the
output format (spec §4.1 ``format`` with its negotiation), the geometry, the limits of spec §8
(24 MP upscaled output, 4 MP AVIF output, the animation limits), whether nothing changes at all
(pass-through) and whether the original may stand in for a re-encode that comes out bigger (the
"never bigger" rule) all land in one ``Plan``; ``render`` then only executes it. So a 413 or 501
costs a header read.

Geometry is computed in display space, i.e. after EXIF orientation, which is the space a user's
``crop``/``focus_crop`` coordinates and ``width``/``height`` refer to. When the image is only made
smaller it is loaded at (about) the target scale (libvips shrink-on-load) and any crop box is
mapped into that scaled space, instead of decoding every source pixel and resizing afterwards.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Final

from assetgate.errors import AppError
from assetgate.imaging.formats import (
    DEFAULT_QUALITY,
    MEDIA_TYPES,
    WEBP_MAX_SIDE,
    OutputFormat,
    SourceInfo,
    as_output,
    codec_disabled,
)
from assetgate.imaging.limits import DecodeLimits, check_animation
from assetgate.optimizer.params import CropGravity
from assetgate.optimizer.spec import NO_FILTERS, Filters, ImageSpec
from assetgate.settings import Settings
from assetgate.web.negotiation import accepts

#: The formats whose use depends on ``Accept`` (JPEG, PNG and GIF every client shows).
_NEGOTIATED: Final[tuple[OutputFormat, ...]] = ("webp", "avif")


@dataclass(frozen=True, slots=True)
class Limits:
    decode: DecodeLimits
    max_upscale_pixels: int
    max_avif_pixels: int

    @classmethod
    def from_settings(cls, settings: Settings, decode: DecodeLimits | None = None) -> Limits:
        """``decode``: the ones already built from ``settings`` (``Resources`` keeps them)."""
        return cls(
            decode=decode or DecodeLimits.from_settings(settings),
            max_upscale_pixels=settings.max_upscale_pixels,
            max_avif_pixels=settings.max_avif_pixels,
        )


@dataclass(frozen=True, slots=True)
class Negotiation:
    """What the request's ``Accept`` allows, read once at the edge (for the ETag and the plan)."""

    webp: bool  # WebP may be chosen: the client names it and the encoder is on
    named: frozenset[OutputFormat] = frozenset()  # of webp/avif, those ``Accept`` names

    @classmethod
    def from_accept(cls, accept: str | None, disabled: Collection[str] = ()) -> Negotiation:
        named = frozenset(fmt for fmt in _NEGOTIATED if accepts(accept, MEDIA_TYPES[fmt]))
        return cls(webp="webp" in named and not codec_disabled("webp", disabled), named=named)

    def bucket(self, requested: OutputFormat | None) -> str:
        """The part of the negotiation that goes into the ETag, known before the source is read.

        Everything else that decides the format is a function of the source, which the ETag
        already covers, so three buckets suffice and ``Accept`` cannot explode a cache.
        """
        if requested is not None:
            return requested
        return "webp" if self.webp else "auto"


@dataclass(frozen=True, slots=True)
class Box:
    x: int
    y: int
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class Plan:
    output: OutputFormat
    quality: int
    width: int  # final size of one frame
    height: int
    animated: bool = False
    load_size: tuple[int, int] | None = None  # shrink-on-load size of the whole image
    crop: Box | None = None  # in the space of the loaded image
    resize: tuple[int, int] | None = None  # after the crop
    flip: bool = False
    flop: bool = False
    rotate: int = 0
    filters: Filters = NO_FILTERS
    passthrough: bool = False  # nothing changes: serve the source file itself
    #: "never bigger": the format the source file is served as when a pure re-encode comes out
    #: bigger than it, or None when the original may not stand in (pixels change, or the client
    #: cannot use the source's format).
    fallback: OutputFormat | None = None

    @property
    def changes_pixels(self) -> bool:
        """Anything beyond a re-encode: geometry or a filter."""
        return bool(
            self.load_size or self.crop or self.resize or self.flip or self.flop or self.rotate
            or self.filters
        )  # fmt: skip


def make_plan(
    spec: ImageSpec, source: SourceInfo, *, negotiation: Negotiation, limits: Limits
) -> Plan:
    box, (base_w, base_h), target = _geometry(spec, source)
    out_w, out_h = _turned(spec, target)
    same = as_output(source.fmt)
    output = choose_format(
        spec.format,
        accepts_webp=negotiation.webp,
        same=same,
        has_alpha=source.has_alpha,
        webp_fits=max(out_w, out_h) <= WEBP_MAX_SIDE,
    )
    if codec_disabled(output, limits.decode.disabled):
        raise AppError.not_implemented(f"the {output} encoder is not available on this server")
    animated = source.animated and output in ("gif", "webp")
    if animated:
        check_animation(
            source, max_pixels=limits.decode.max_pixels, max_frames=limits.decode.max_frames
        )
    enlarged = target[0] * target[1] > base_w * base_h
    if enlarged and target[0] * target[1] > limits.max_upscale_pixels:
        raise AppError.too_large(
            f"upscaled output {target[0]}x{target[1]} is over the limit of "
            f"{limits.max_upscale_pixels / 1e6:g} MP"
        )
    if output == "avif" and out_w * out_h > limits.max_avif_pixels:
        raise AppError.too_large(
            f"AVIF output {out_w}x{out_h} is over the limit of {limits.max_avif_pixels / 1e6:g} MP"
        )
    if output == "webp" and max(out_w, out_h) > WEBP_MAX_SIDE:
        raise AppError.too_large(
            f"WebP output {out_w}x{out_h} is over the format's limit of {WEBP_MAX_SIDE} px a side"
        )
    load_size, crop, resize = _strategy(source, box, (base_w, base_h), target)
    plan = Plan(
        output=output,
        quality=spec.quality,
        width=out_w,
        height=out_h,
        animated=animated,
        load_size=load_size,
        crop=crop,
        resize=resize,
        flip=spec.flip,
        flop=spec.flop,
        rotate=spec.rotate,
        filters=spec.filters,
    )
    if plan.changes_pixels:
        return plan
    passthrough = output == same and spec.quality == DEFAULT_QUALITY
    may_stand_in = may_serve_source(spec.format, same, negotiation, output)
    return replace(plan, passthrough=passthrough, fallback=same if may_stand_in else None)


def choose_format(
    requested: OutputFormat | None,
    *,
    accepts_webp: bool,
    same: OutputFormat | None,
    has_alpha: bool,
    webp_fits: bool = True,
) -> OutputFormat:
    """Spec §4.1 ``format``: explicit, else WebP when accepted, else the input format when it is
    an output format (``same``, from ``as_output``), else JPEG (PNG when the image has alpha).
    When the output is too large for WebP (``webp_fits`` False), neither the negotiation nor a
    WebP source picks WebP."""
    if requested is not None:
        return requested
    if accepts_webp and webp_fits:
        return "webp"
    if same is not None and (same != "webp" or webp_fits):
        return same
    return "png" if has_alpha else "jpeg"


def may_serve_source(
    requested: OutputFormat | None,
    same: OutputFormat | None,
    negotiation: Negotiation,
    output: OutputFormat,
) -> bool:
    """May the original bytes stand in for a re-encode (the "never bigger" rule)?

    Only when the client can use them: an explicit ``format`` must equal the source's; otherwise
    JPEG, PNG and GIF are safe everywhere, and WebP/AVIF when ``Accept`` names them or when the
    answer is in the source's format anyway (a WebP source is answered as WebP to a client that
    asked for neither WebP nor a format). ``same`` is the source's own format as served.
    """
    if same is None:
        return False
    if requested is not None:
        return requested == same
    return output == same or same in ("jpeg", "png", "gif") or same in negotiation.named


def _geometry(
    spec: ImageSpec, source: SourceInfo
) -> tuple[Box | None, tuple[int, int], tuple[int, int]]:
    """(crop box or None, the size it leaves, the size after resizing), before any rotation."""
    box = _crop_box(spec, source.width, source.height)
    base = (box.width, box.height) if box else (source.width, source.height)
    return box, base, _fit(spec, *base)


def _turned(spec: ImageSpec, size: tuple[int, int]) -> tuple[int, int]:
    return (size[1], size[0]) if spec.rotate in (90, 270) else size


def _crop_box(spec: ImageSpec, width: int, height: int) -> Box | None:
    """Rule 2: focus_crop, then crop, then aspect_ratio. None when the box is the whole image."""
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
            w, h = min(crop.width, width), min(crop.height, height)
            x, y = _place(spec.gravity, width - w, height - h)
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
        ratio = spec.aspect_ratio
        if width / height > ratio:
            w = max(1, min(width, round(height * ratio)))
            box = Box((width - w) // 2, 0, w, height)
        else:
            h = max(1, min(height, round(width / ratio)))
            box = Box(0, (height - h) // 2, width, h)
    if box is not None and (box.width, box.height) == (width, height):
        return None
    return box


def _place(gravity: CropGravity, spare_x: int, spare_y: int) -> tuple[int, int]:
    x = 0 if "west" in gravity else spare_x if "east" in gravity else spare_x // 2
    y = 0 if "north" in gravity else spare_y if "south" in gravity else spare_y // 2
    return x, y


def _fit(spec: ImageSpec, width: int, height: int) -> tuple[int, int]:
    """Fit inside width x height, aspect kept; never larger unless upscaling=resampling."""
    if spec.width is None and spec.height is None:
        return width, height
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


def _strategy(
    source: SourceInfo, box: Box | None, base: tuple[int, int], target: tuple[int, int]
) -> tuple[tuple[int, int] | None, Box | None, tuple[int, int] | None]:
    """(load_size, crop in loaded space, resize after crop); ``base`` is the size ``box`` leaves."""
    if target == base:
        return None, box, None
    if target[0] > base[0] or target[1] > base[1]:
        return None, box, target  # enlarging: decode at full size, then resample
    if box is None:
        return target, None, None
    sx, sy = target[0] / box.width, target[1] / box.height
    load_w = max(target[0], round(source.width * sx))
    load_h = max(target[1], round(source.height * sy))
    x = _clamp(round(box.x * sx), 0, load_w - target[0])
    y = _clamp(round(box.y * sy), 0, load_h - target[1])
    return (load_w, load_h), Box(x, y, target[0], target[1]), None


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))
