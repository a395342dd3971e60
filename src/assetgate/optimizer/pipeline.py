"""The image pipeline: a tuple of small steps in the order of spec §4.1 rule 1.

crop -> resize -> (pad) -> flip/flop/rotate -> blur/sharpen -> brightness/gamma/contrast ->
saturation/hue/tint/sepia -> watermark -> (JPEG) flattening onto ``background`` (then
``imaging.encode`` does format and quality). The padding of ``fit=pad`` is part of the picture
from then on: flips, rotations and filters apply to it. Each step is a no-op when its option is
off, so the common "just resize" request costs nothing here. Colour filters
work on the colour bands only and leave alpha alone; blur premultiplies alpha so transparent
pixels do not bleed a dark halo. An animation is run frame by frame, so a flip or a blur never
mixes two frames. The README maps every filter number to the libvips operation used below.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

import pyvips
from cachetools import LRUCache, cached

from assetgate.cpu import stop
from assetgate.imaging.formats import saver_of
from assetgate.imaging.frames import is_animated, make_roll, split_frames, timing
from assetgate.imaging.load import to_srgb8
from assetgate.optimizer.geometry import WHITE, place
from assetgate.optimizer.plan import Plan

Step = Callable[[pyvips.Image, Plan], pyvips.Image]

SEPIA: Final = (
    (0.393, 0.769, 0.189),
    (0.349, 0.686, 0.168),
    (0.272, 0.534, 0.131),
)
_ROT: Final = {90: "d90", 180: "d180", 270: "d270"}
# Fitted watermarks kept in memory. By bytes, not by count: a logo fitted to a 50 MP output is
# 200 MB, and 32 of them (the count bound this replaced) would be gigabytes.
LOGO_CACHE_BYTES: Final = 64 * 1024 * 1024


def crop(image: pyvips.Image, plan: Plan) -> pyvips.Image:
    box = plan.crop
    if box is not None:
        image = image.crop(box.x, box.y, box.width, box.height)
    if plan.smart is not None:
        # libvips' attention crop: the window with the most edges, saturation and skin tones.
        # It reads the image more than once: a shrink-on-load decode is sequential, and small.
        if plan.load_size is not None:
            image = image.copy_memory()
        width, height = plan.smart
        image = image.smartcrop(min(width, image.width), min(height, image.height),
                                interesting="attention")  # fmt: skip
    return image


def resize(image: pyvips.Image, plan: Plan) -> pyvips.Image:
    if plan.resize is None:
        return image
    width, height = plan.resize
    # thumbnail_image premultiplies alpha around the resampling; "force" = exactly the planned
    # size (the plan already kept the aspect ratio and decided whether enlarging is allowed).
    return image.thumbnail_image(width, height=height, size="force")


def pad(image: pyvips.Image, plan: Plan) -> pyvips.Image:
    """``fit=pad``: the canvas colour may be transparent, so alpha is added when it is not
    opaque (an opaque colour on an image with alpha keeps the image's alpha band)."""
    if plan.pad is None:
        return image
    colour = list(plan.pad.colour)
    image = _as_rgb(image)
    if colour[3] < 255 and not image.hasalpha():
        image = image.bandjoin_const([255])
    background = colour if image.hasalpha() else colour[:3]
    return image.embed(
        plan.pad.x, plan.pad.y, plan.pad.width, plan.pad.height,
        extend="background", background=background,
    )  # fmt: skip


def orient(image: pyvips.Image, plan: Plan) -> pyvips.Image:
    if plan.load_size is not None and (plan.flip or plan.rotate):
        # A shrink-on-load decode is sequential: flipver and rot would read it bottom-up or by
        # columns ("out of order read" on a large photo). The shrunk image is small: keep it.
        image = image.copy_memory()
    if plan.flip:
        image = image.flipver()
    if plan.flop:
        image = image.fliphor()
    if plan.rotate:
        image = image.rot(_ROT[plan.rotate])
    return image


def blur_sharpen(image: pyvips.Image, plan: Plan) -> pyvips.Image:
    if plan.filters.blur:
        sigma = plan.filters.blur / 5  # 1..100 -> sigma 0.2..20 px
        if image.hasalpha():
            image = image.premultiply().gaussblur(sigma).unpremultiply().cast("uchar")
        else:
            image = image.gaussblur(sigma)
    if plan.filters.sharpen:
        strength = plan.filters.sharpen / 100
        sigma, m2 = 0.5 + 1.5 * strength, 1.0 + 5.0 * strength
        image = _on_colour(image, lambda rgb: rgb.sharpen(sigma=sigma, m1=0.0, m2=m2))
    return image


def tone(image: pyvips.Image, plan: Plan) -> pyvips.Image:
    if plan.filters.brightness:
        offset = 2.55 * plan.filters.brightness
        image = _on_colour(image, lambda rgb: rgb.linear(1.0, offset, uchar=True))
    if plan.filters.gamma:
        exponent = 2.0 ** (plan.filters.gamma / 50)  # -100..100 -> 1/4..4; > 1 lifts the mid-tones
        image = _on_colour(image, lambda rgb: rgb.gamma(exponent=exponent))
    if plan.filters.contrast:
        factor = (100 + plan.filters.contrast) / 100  # 0 (flat grey) .. 2 (double contrast)
        image = _on_colour(
            image, lambda rgb: rgb.linear(factor, 128.0 * (1.0 - factor), uchar=True)
        )
    return image


def colour(image: pyvips.Image, plan: Plan) -> pyvips.Image:
    if (plan.filters.saturation or plan.filters.hue) and image.bands - int(image.hasalpha()) >= 3:
        chroma = (100 + plan.filters.saturation) / 100
        degrees = 3.6 * plan.filters.hue
        image = _on_colour(
            image,
            lambda rgb: (
                (rgb.colourspace("lch") * [1.0, chroma, 1.0] + [0.0, 0.0, degrees])
                .colourspace("srgb")
                .cast("uchar")
            ),
        )
    if plan.filters.tint is not None:
        factors = [channel / 255 for channel in plan.filters.tint]
        image = _on_colour(_as_rgb(image), lambda rgb: rgb.linear(factors, 0.0, uchar=True))
    if plan.filters.sepia:
        s = plan.filters.sepia / 100
        matrix = [[(1 - s) * (i == j) + s * SEPIA[i][j] for j in range(3)] for i in range(3)]
        image = _on_colour(_as_rgb(image), lambda rgb: rgb.recomb(matrix).cast("uchar"))
    return image


def trim(image: pyvips.Image, threshold: int) -> pyvips.Image:
    """Cut the borders of the top-left corner's colour (``find_trim``: differences above
    ``threshold`` in 8-bit units count as content). A uniform image is left whole, and so is
    one under 3 px a side (``find_trim`` median-filters 3x3 first and refuses smaller ones)."""
    if image.width < 3 or image.height < 3:
        return image
    bands = image.bands - int(image.hasalpha())
    colour = image.extract_band(0, n=bands) if image.hasalpha() else image
    corner = colour.getpoint(0, 0)
    left, top, width, height = colour.find_trim(threshold=threshold, background=corner)
    if width == 0 or height == 0:
        return image
    return image.crop(left, top, width, height)


def stamp(image: pyvips.Image, plan: Plan) -> pyvips.Image:
    """``watermark=<name>``: scaled to its share of the output's width, placed by its gravity
    and margin, its alpha times its opacity, composited over the image."""
    mark = plan.watermark
    if mark is None:
        return image
    box = (max(1, round(image.width * mark.size)), max(1, image.height - 2 * mark.margin))
    logo = _logo(mark.data, box, mark.opacity)
    spare_x = max(0, image.width - logo.width - 2 * mark.margin)
    spare_y = max(0, image.height - logo.height - 2 * mark.margin)
    x, y = place(mark.gravity, spare_x, spare_y)
    had_alpha = image.hasalpha()
    base = _as_rgb(image)
    out = base.composite2(logo, "over", x=x + mark.margin, y=y + mark.margin).cast("uchar")
    return out if had_alpha else out.extract_band(0, n=3)


def _logo_bytes(logo: pyvips.Image) -> int:
    return int(logo.width * logo.height * logo.bands)  # 8-bit, held in memory (``copy_memory``)


# Render threads share it; one over the whole budget is made again when asked, never kept.
LOGOS: Final[LRUCache[object, pyvips.Image]] = LRUCache(LOGO_CACHE_BYTES, getsizeof=_logo_bytes)


@cached(LOGOS, lock=threading.Lock())
def _logo(data: bytes, box: tuple[int, int], opacity: float) -> pyvips.Image:
    """A watermark decoded, fitted into ``box`` and faded, in memory: once for all the frames
    of an animation and for every request of that output size."""
    logo = to_srgb8(pyvips.Image.new_from_buffer(data, "", fail_on="error"))
    logo = logo.thumbnail_image(box[0], height=box[1])
    if not logo.hasalpha():
        logo = logo.bandjoin_const([255])
    if opacity < 1.0:
        logo = logo.extract_band(0, n=3).bandjoin((logo.extract_band(3) * opacity).cast("uchar"))
    return logo.copy_memory()


def flatten(image: pyvips.Image, plan: Plan) -> pyvips.Image:
    """JPEG has no alpha: flattened here onto ``background`` (the encoder would use white)."""
    if not saver_of(plan.output).flattens_alpha or not image.hasalpha() or plan.background == WHITE:
        return image
    if len(set(plan.background)) > 1:  # a colour: a grey image becomes sRGB to show it
        image = _as_rgb(image)
    colour = list(plan.background) if image.bands > 2 else [plan.background[0]]
    return image.flatten(background=colour).cast("uchar")


STEPS: Final[tuple[Step, ...]] = (
    crop, resize, pad, orient, blur_sharpen, tone, colour, stamp, flatten
)  # fmt: skip


def run(image: pyvips.Image, plan: Plan) -> pyvips.Image:
    if plan.animated and is_animated(image):
        delay, loop = timing(image)
        frames = [_run_steps(frame, plan) for frame in split_frames(image)]
        return make_roll(frames, delay=delay, loop=loop)
    return _run_steps(image, plan)


def _run_steps(image: pyvips.Image, plan: Plan) -> pyvips.Image:
    for step in STEPS:
        stop.check()
        image = step(image, plan)
    return image


def _on_colour(image: pyvips.Image, fn: Callable[[pyvips.Image], pyvips.Image]) -> pyvips.Image:
    """Apply ``fn`` to the colour bands, keep alpha as it is."""
    if not image.hasalpha():
        return fn(image)
    colour_bands = image.bands - 1
    return fn(image.extract_band(0, n=colour_bands)).bandjoin(image.extract_band(colour_bands))


def _as_rgb(image: pyvips.Image) -> pyvips.Image:
    if image.bands - int(image.hasalpha()) >= 3:
        return image
    return image.colourspace("srgb")
