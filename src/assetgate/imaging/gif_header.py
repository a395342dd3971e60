"""The canvas a GIF claims, read from its blocks without decoding a pixel.

A GIF states sizes in two places: the logical screen, and each frame's image descriptor (left,
top, width, height), which may reach far past the screen. Decoders allocate for both: Pillow grows
its canvas to cover a frame's extent (a 1x1 frame at 60000,60000 is a 3.6 GP canvas, Pillow's own
``decompression_bomb_extents.gif``), libnsgif sizes its screen by the first frame. So the size held
against ``ASSETGATE_MAX_INPUT_PIXELS`` is the union of the screen and every frame's extent, read
before either decoder opens the file (as ``heif_header`` does for HEIF).

API:
- ``canvas_size(data) -> (width, height) | None``: pure; ``data`` is the file (any bytes-like
  object, an ``mmap`` too). None when it is not a GIF. The walk skips extensions and image data by
  their sub-block lengths, steps over a stray byte as Pillow does, and stops at the trailer or the
  end of ``data``: every step consumes at least one byte, so it is bounded by the file's size.
- ``file_canvas_size(path)``: the same over a memory-mapped file.
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Final

Buffer = bytes | bytearray | memoryview | mmap.mmap

EXTENSION: Final = 0x21
IMAGE: Final = 0x2C
TRAILER: Final = 0x3B


def canvas_size(data: Buffer) -> tuple[int, int] | None:
    view = memoryview(data).cast("B") if not isinstance(data, mmap.mmap) else data
    end = len(view)
    if end < 13 or bytes(view[:6]) not in (b"GIF87a", b"GIF89a"):
        return None
    width, height = _u16(view, 6), _u16(view, 8)
    position = 13 + _table_size(view[10])
    while position < end:
        introducer = view[position]
        if introducer == TRAILER:
            break
        if introducer == EXTENSION:
            position = _skip_sub_blocks(view, position + 2, end)
        elif introducer == IMAGE:
            if position + 10 > end:
                break
            left, top = _u16(view, position + 1), _u16(view, position + 3)
            frame_width, frame_height = _u16(view, position + 5), _u16(view, position + 7)
            width = max(width, left + frame_width)
            height = max(height, top + frame_height)
            # Descriptor, local colour table, LZW minimum code size, then the image data.
            position = _skip_sub_blocks(view, position + 11 + _table_size(view[position + 9]), end)
        else:
            position += 1  # a stray byte: Pillow steps over it and reads on
    return width, height


def file_canvas_size(path: Path | str) -> tuple[int, int] | None:
    with open(path, "rb") as handle:
        try:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            return None
        with mapped:
            return canvas_size(mapped)


def _table_size(flags: int) -> int:
    """Bytes of the colour table a screen or image descriptor's packed field announces."""
    return 3 * (2 << (flags & 0x07)) if flags & 0x80 else 0


def _skip_sub_blocks(view: memoryview | mmap.mmap, position: int, end: int) -> int:
    """The position after a chain of sub-blocks (length byte, data) and its zero terminator."""
    while position < end:
        size = view[position]
        position += 1 + size
        if size == 0:
            break
    return position


def _u16(view: memoryview | mmap.mmap, offset: int) -> int:
    return view[offset] | view[offset + 1] << 8
