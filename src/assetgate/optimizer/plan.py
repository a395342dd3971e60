"""ImageSpec + SourceInfo + Accept -> Plan: every decision made once, before a pixel is touched.

Pure (no pyvips), and the optimizer's one planning call, as imgproxy's ``prepare`` step: the
output format (spec §4.1 ``format`` with its negotiation), the geometry, the limits of spec §8
(24 MP upscaled output, 4 MP AVIF output, the animation limits), whether nothing changes at all
(pass-through) and whether the original may stand in for a re-encode that comes out bigger (the
"never bigger" rule) all land in one ``Plan``; ``render`` then only executes it. So a 413 or 501
costs a header read.

Geometry (``optimizer.geometry``) is computed in display space, i.e. after EXIF orientation, which
is the space a user's ``crop``/``focus_crop`` coordinates and ``width``/``height`` refer to. When
the image is only made smaller it is loaded at (about) the target scale (libvips shrink-on-load)
and any crop box is mapped into that scaled space, instead of decoding every source pixel and
resizing afterwards.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Final

from assetgate.errors import AppError
from assetgate.imaging.formats import (
    DEFAULT_QUALITY,
    FORMATS,
    MEDIA_TYPES,
    WEBP_MAX_SIDE,
    OutputFormat,
    SourceInfo,
    as_output,
    codec_disabled,
    saver_of,
)
from assetgate.imaging.limits import DecodeLimits, check_animation
from assetgate.optimizer.geometry import WHITE, Box, Pad, geometry, pad_for, strategy, turned
from assetgate.optimizer.spec import NO_FILTERS, Filters, ImageSpec
from assetgate.optimizer.watermarks import NO_WATERMARKS, Watermark, Watermarks
from assetgate.settings import Settings
from assetgate.web.negotiation import accepts

#: A negotiated AVIF's quality for the requested one: the AVIF quality whose SSIMULACRA2 score
#: matches WebP's at the requested quality (effort 4), the median over the corpus of
#: docs/benchmarks.md "quality=auto" (85 -> 70: WebP q85's look at 0.92x its bytes).
AVIF_FOR_WEBP: Final = ((0, 0), (50, 48), (60, 52), (70, 56), (75, 58), (80, 65), (85, 70),
                        (90, 79), (95, 87), (100, 100))  # fmt: skip


def avif_quality(requested: int) -> int:
    """The quality a negotiated AVIF is encoded at, so that it looks like the WebP it replaces."""
    for (q0, a0), (q1, a1) in itertools.pairwise(AVIF_FOR_WEBP):
        if requested <= q1:
            return max(1, round(a0 + (a1 - a0) * (requested - q0) / (q1 - q0)))
    return 100


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
    #: ``quality=auto``: the SSIMULACRA2 target the render searches the quality for (JPEG, WebP
    #: and AVIF stills; None otherwise, and ``quality`` is used as it is).
    auto: int | None = None

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
    box, smart, (base_w, base_h), target = geometry(spec, source, gravity)
    pad = pad_for(spec, target, gravity)
    canvas = (pad.width, pad.height) if pad else target
    out_w, out_h = turned(spec, canvas)
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
    saver = saver_of(output)
    animated = source.animated and saver.animates
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
    if saver.max_side is not None and max(out_w, out_h) > saver.max_side:
        raise AppError.too_large(
            f"{FORMATS[output].label} output {out_w}x{out_h} is over the format's limit of "
            f"{saver.max_side} px a side"
        )
    load_size, crop, smart, resize = strategy(
        source, box, smart, (base_w, base_h), target, decoded=decoded
    )
    quality = spec.quality
    if output == "avif" and spec.format is None:
        quality = avif_quality(quality)
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
        max_bytes=spec.max_bytes if saver.lossy else None,
        watermark=watermark,
        auto=spec.auto if saver.lossy and not animated else None,
    )
    if plan.changes_pixels:
        return plan
    passthrough = (
        output == same
        and spec.quality == DEFAULT_QUALITY
        and not spec.max_bytes
        and spec.auto is None
    )
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
    return output == same or saver_of(same).everywhere or same in negotiation.named
