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

from collections.abc import Collection, Sequence
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
from assetgate.optimizer.watermarks import NO_WATERMARKS, Watermark, Watermarks
from assetgate.settings import Settings
from assetgate.web.negotiation import accepts

#: A negotiated AVIF's quality per point of the requested one: at 65 (for the default 85) an AVIF
#: matches WebP q85's PSNR on the bench photo at 0.68x its bytes (docs/optimizer.md).
AUTO_AVIF_QUALITY: Final = 65 / 85

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

    webp: bool  # WebP may be chosen: the client names it, the operator lets it, the encoder is on
    named: frozenset[OutputFormat] = frozenset()  # of webp/avif, those ``Accept`` names
    avif: bool = False  # the same for AVIF (extension: ASSETGATE_AUTO_FORMATS)
    avif_first: bool = True  # AVIF before WebP in ASSETGATE_AUTO_FORMATS

    @classmethod
    def from_accept(
        cls,
        accept: str | None,
        disabled: Collection[str] = (),
        auto: Sequence[str] = ("webp",),
    ) -> Negotiation:
        """``auto``: ASSETGATE_AUTO_FORMATS, the formats negotiated in the operator's order."""
        named = frozenset(fmt for fmt in _NEGOTIATED if accepts(accept, MEDIA_TYPES[fmt]))

        def usable(fmt: OutputFormat) -> bool:
            return fmt in named and fmt in auto and not codec_disabled(fmt, disabled)

        avif_first = (
            "webp" not in auto or "avif" not in auto or (auto.index("avif") < auto.index("webp"))
        )
        return cls(webp=usable("webp"), named=named, avif=usable("avif"), avif_first=avif_first)

    @property
    def preference(self) -> tuple[OutputFormat, ...]:
        """The negotiated formats this client may get, best first."""
        order: list[OutputFormat] = ["avif", "webp"] if self.avif_first else ["webp", "avif"]
        return tuple(fmt for fmt in order if (self.avif if fmt == "avif" else self.webp))

    def bucket(self, requested: OutputFormat | None) -> str:
        """The part of the negotiation that goes into the ETag, known before the source is read.

        Everything else that decides the format is a function of the source, which the ETag
        already covers, so a handful of buckets suffice and ``Accept`` cannot explode a cache:
        ``auto`` and ``webp`` (the spec's two), ``avif+webp`` with AVIF negotiation on.
        """
        if requested is not None:
            return requested
        return "+".join(self.preference) or "auto"


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


@dataclass(frozen=True, slots=True)
class Plan:
    output: OutputFormat
    quality: int
    width: int  # final size of one frame
    height: int
    animated: bool = False
    load_size: tuple[int, int] | None = None  # shrink-on-load size of the whole image
    crop: Box | None = None  # in the space of the loaded image
    smart: tuple[int, int] | None = None  # after the crop: libvips' attention crop to this size
    resize: tuple[int, int] | None = None  # after the crop
    pad: Pad | None = None  # after the resize
    flip: bool = False
    flop: bool = False
    rotate: int = 0
    filters: Filters = NO_FILTERS
    passthrough: bool = False  # nothing changes: serve the source file itself
    #: "never bigger": the format the source file is served as when a pure re-encode comes out
    #: bigger than it, or None when the original may not stand in (pixels change, or the client
    #: cannot use the source's format).
    fallback: OutputFormat | None = None
    background: tuple[int, int, int] = WHITE  # what alpha is flattened onto for JPEG
    trim: int = 0  # threshold of the trim before everything else (render does it); 0 = off
    max_bytes: int | None = None  # the byte budget (render searches the quality)
    watermark: Watermark | None = None  # applied last

    @property
    def changes_pixels(self) -> bool:
        """Anything beyond a re-encode: geometry, a filter, a trim or a watermark."""
        return bool(
            self.load_size or self.crop or self.smart or self.resize or self.pad or self.flip
            or self.flop or self.rotate or self.filters or self.trim or self.watermark
        )  # fmt: skip


def make_plan(
    spec: ImageSpec,
    source: SourceInfo,
    *,
    negotiation: Negotiation,
    limits: Limits,
    decoded: bool = False,
    watermarks: Watermarks = NO_WATERMARKS,
) -> Plan:
    """``decoded``: the image is already in memory at full size (after a trim): no shrink-on-load.
    ``watermarks``: ASSETGATE_WATERMARKS (an unknown name is a 400 naming ``watermark``)."""
    watermark = None
    if spec.watermark is not None:
        watermark = watermarks.get(spec.watermark)
        if watermark is None:
            known = ", ".join(sorted(watermarks)[:20]) or "none are configured"
            raise AppError.bad_param(
                "watermark", f"a configured watermark ({known})", spec.watermark
            )
    gravity = spec.gravity
    if gravity == "smart" and source.animated:
        gravity = "center"  # one crop for every frame: attention would pick one per frame
    box, smart, (base_w, base_h), target = _geometry(spec, source, gravity)
    pad = _pad(spec, target, gravity)
    canvas = (pad.width, pad.height) if pad else target
    out_w, out_h = _turned(spec, canvas)
    same = as_output(source.fmt)
    output = choose_format(
        spec.format,
        accepts_webp=negotiation.webp,
        same=same,
        has_alpha=source.has_alpha or (pad is not None and pad.colour[3] < 255),
        webp_fits=max(out_w, out_h) <= WEBP_MAX_SIDE,
        avif_fits=out_w * out_h <= limits.max_avif_pixels,
        prefer=negotiation.preference,
    )
    if codec_disabled(output, limits.decode.disabled):
        raise AppError.not_implemented(f"the {output} encoder is not available on this server")
    animated = source.animated and output in ("gif", "webp")
    if animated:
        check_animation(
            source, max_pixels=limits.decode.max_pixels, max_frames=limits.decode.max_frames
        )
    enlarged = canvas[0] * canvas[1] > base_w * base_h
    if enlarged and canvas[0] * canvas[1] > limits.max_upscale_pixels:
        raise AppError.too_large(
            f"upscaled output {canvas[0]}x{canvas[1]} is over the limit of "
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
    load_size, crop, smart, resize = _strategy(
        source, box, smart, (base_w, base_h), target, decoded=decoded
    )
    quality = spec.quality
    if output == "avif" and spec.format is None:
        quality = max(1, round(quality * AUTO_AVIF_QUALITY))
    plan = Plan(
        output=output,
        quality=quality,
        width=out_w,
        height=out_h,
        animated=animated,
        load_size=load_size,
        crop=crop,
        smart=smart,
        resize=resize,
        pad=pad,
        flip=spec.flip,
        flop=spec.flop,
        rotate=spec.rotate,
        filters=spec.filters,
        background=spec.background[:3] if spec.background else WHITE,
        trim=0 if animated or decoded else spec.trim,
        max_bytes=spec.max_bytes if output in ("jpeg", "webp", "avif") else None,
        watermark=watermark,
    )
    if plan.changes_pixels:
        return plan
    passthrough = output == same and spec.quality == DEFAULT_QUALITY and not spec.max_bytes
    may_stand_in = may_serve_source(spec.format, same, negotiation, output)
    return replace(plan, passthrough=passthrough, fallback=same if may_stand_in else None)


def choose_format(
    requested: OutputFormat | None,
    *,
    accepts_webp: bool,
    same: OutputFormat | None,
    has_alpha: bool,
    webp_fits: bool = True,
    avif_fits: bool = False,
    prefer: tuple[OutputFormat, ...] | None = None,
) -> OutputFormat:
    """Spec §4.1 ``format``: explicit, else WebP when accepted, else the input format when it is
    an output format (``same``, from ``as_output``), else JPEG (PNG when the image has alpha).
    When the output is too large for WebP (``webp_fits`` False), neither the negotiation nor a
    WebP source picks WebP. ``prefer`` (extension): the negotiated formats best first
    (``Negotiation.preference``); AVIF only where its output limit allows (``avif_fits``),
    else the next one: the client did not ask for AVIF, so a large image is no 413."""
    if requested is not None:
        return requested
    for fmt in prefer if prefer is not None else (("webp",) if accepts_webp else ()):
        if (fmt == "webp" and webp_fits) or (fmt == "avif" and avif_fits):
            return fmt
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


def _pad(spec: ImageSpec, target: tuple[int, int], gravity: CropGravity) -> Pad | None:
    """``fit=pad``: the canvas is the box itself, whatever the image's own size."""
    if spec.fit != "pad" or spec.width is None or spec.height is None:
        return None
    width, height = spec.width, spec.height
    if (width, height) == target:
        return None
    x, y = place("center" if gravity == "smart" else gravity, width - target[0], height - target[1])
    return Pad(width, height, x, y, spec.background or CLEAR)


def _turned(spec: ImageSpec, size: tuple[int, int]) -> tuple[int, int]:
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


def _strategy(
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
