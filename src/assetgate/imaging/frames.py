"""Animations as libvips holds them: every frame stacked in one tall "toilet roll" image.

The roll carries ``page-height`` (one frame's height), ``delay`` (ms per frame) and ``loop``. The
loaders build rolls, the optimizer's pipeline runs its steps per frame, the encoders keep or drop
the frames, and conversion reports the frame count: all of them read the roll through these few
functions, so "is this animated" has one answer everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyvips


def page_height(image: pyvips.Image) -> int:
    """One frame's height, or 0 when ``image`` is a still (no roll, or a roll of one frame)."""
    if not image.get_typeof("page-height"):
        return 0
    height = int(image.get("page-height"))
    return height if 0 < height < image.height else 0


def is_animated(image: pyvips.Image) -> bool:
    return page_height(image) > 0


def frame_geometry(image: pyvips.Image) -> tuple[int, int, int]:
    """(width, height of one frame, frame count)."""
    height = page_height(image)
    if height:
        return image.width, height, image.height // height
    return image.width, image.height, 1


def first_frame(image: pyvips.Image) -> pyvips.Image:
    height = page_height(image)
    return image.crop(0, 0, image.width, height) if height else image


def split_frames(image: pyvips.Image) -> list[pyvips.Image]:
    """The frames of a roll, top to bottom (a still is one frame)."""
    height = page_height(image)
    if not height:
        return [image]
    count = image.height // height
    return [image.crop(0, index * height, image.width, height) for index in range(count)]


def make_roll(
    frames: Sequence[pyvips.Image], *, delay: Sequence[int] | None = None, loop: int | None = None
) -> pyvips.Image:
    """Stack equally sized frames into a roll with its ``page-height``, ``delay`` and ``loop``."""
    roll = pyvips.Image.arrayjoin(list(frames), across=1) if len(frames) > 1 else frames[0]
    return mark_roll(roll, frames[0].height, delay=delay, loop=loop)


def mark_roll(
    image: pyvips.Image,
    page_height: int,
    *,
    delay: Sequence[int] | None = None,
    loop: int | None = None,
) -> pyvips.Image:
    """``image`` (frames already stacked) labelled as a roll of ``page_height`` high frames."""
    roll = image.copy()
    roll.set_type(pyvips.GValue.gint_type, "page-height", page_height)
    if delay is not None:
        roll.set_type(pyvips.GValue.array_int_type, "delay", list(delay))
    if loop is not None:
        roll.set_type(pyvips.GValue.gint_type, "loop", loop)
    return roll


def timing(image: pyvips.Image) -> tuple[list[int] | None, int | None]:
    """A roll's ``delay`` and ``loop`` (None where the decoder set none), to carry them over."""
    delay = list(image.get("delay")) if image.get_typeof("delay") else None
    loop = int(image.get("loop")) if image.get_typeof("loop") else None
    return delay, loop
