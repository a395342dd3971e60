"""The size a HEIF/AVIF file claims for its primary image, read from its boxes without libheif.

libheif refuses some headers before it reports any size (a side over 2^31, a cut ``mdat``, a
broken codec configuration), and libvips reports the size after the ``clap`` crop, so a file
whose coded image (``ispe``) is 200 MP but whose crop box says 64x48 looks small until it is
decoded. The limit is about what a decoder allocates, so it is checked against the ``ispe`` of the
primary item (ISO/IEC 23008-12: ``meta`` -> ``pitm``, ``iprp`` -> ``ipco`` + ``ipma``) before
libheif sees the file: a claim over the limit is 413 whatever follows.

pillow-heif was weighed and not used: it is the same libheif (it fails on the same headers) and
reports the cropped size too.

API:
- ``primary_image_size(data) -> (width, height) | None``: pure; ``data`` is the file or any prefix
  of it (or just its ``meta`` box). None when the boxes are missing, cut or malformed. Never reads
  past ``data``, never trusts a size, visits a bounded number of boxes.
- ``read_meta(path) -> bytes``: the file's top-level ``meta`` box, found by reading box headers
  only (``meta`` may follow a large ``mdat``); empty when absent or over ``MAX_META_BYTES``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

#: A ``meta`` box larger than this is not read (real ones are a few kB, grids included).
MAX_META_BYTES: Final = 4 * 1024 * 1024
#: Boxes visited in one container before giving up (no real file comes near it).
MAX_BOXES: Final = 4096

Buffer = bytes | bytearray | memoryview


def primary_image_size(data: Buffer) -> tuple[int, int] | None:
    view = memoryview(data).cast("B")
    meta = _child(view, 0, len(view), b"meta")
    if meta is None:
        return None
    start, end = meta[0] + 4, meta[1]  # a FullBox: version and flags first
    primary = _primary_item(view, start, end)
    iprp = _child(view, start, end, b"iprp")
    if primary is None or iprp is None:
        return None
    ipco = _child(view, iprp[0], iprp[1], b"ipco")
    if ipco is None:
        return None
    properties = list(_boxes(view, ipco[0], ipco[1]))
    sizes: list[tuple[int, int]] = []
    for kind, s, e in _boxes(view, iprp[0], iprp[1]):
        if kind != b"ipma":
            continue
        for index in _associations(view, s, e, primary):
            if 1 <= index <= len(properties) and properties[index - 1][0] == b"ispe":
                _, ps, pe = properties[index - 1]
                if pe - ps >= 12:
                    sizes.append((_u32(view, ps + 4), _u32(view, ps + 8)))
    return max(sizes, key=lambda size: size[0] * size[1]) if sizes else None


def read_meta(path: Path | str) -> bytes:
    with open(path, "rb") as handle:
        file_size = os.fstat(handle.fileno()).st_size
        offset = 0
        for _ in range(MAX_BOXES):
            handle.seek(offset)
            header = handle.read(16)
            box = _box_at(memoryview(header), 0, len(header), limit=file_size - offset)
            if box is None:
                return b""
            kind, _, length = box
            if kind == b"meta":
                if length > MAX_META_BYTES:
                    return b""
                handle.seek(offset)
                return handle.read(length)
            offset += length
    return b""


# --- boxes ------------------------------------------------------------------------------------


def _box_at(
    view: memoryview, offset: int, end: int, *, limit: int
) -> tuple[bytes, int, int] | None:
    """(type, header length, box length) of the box at ``offset``; ``limit`` = bytes to the end
    of its container (may exceed ``end`` when only a header was read)."""
    if end - offset < 8:
        return None
    length, kind = _u32(view, offset), bytes(view[offset + 4 : offset + 8])
    header = 8
    if length == 1:
        if end - offset < 16:
            return None
        length, header = int.from_bytes(view[offset + 8 : offset + 16], "big"), 16
    elif length == 0:
        length = limit
    if length < header or length > limit:
        return None
    return kind, header, length


def _boxes(view: memoryview, start: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """(type, payload start, payload end) of each child box in ``view[start:end]``; stops at the
    first malformed one."""
    offset = start
    for _ in range(MAX_BOXES):
        box = _box_at(view, offset, end, limit=end - offset)
        if box is None:
            return
        kind, header, length = box
        yield kind, offset + header, offset + length
        offset += length


def _child(view: memoryview, start: int, end: int, wanted: bytes) -> tuple[int, int] | None:
    for kind, s, e in _boxes(view, start, end):
        if kind == wanted:
            return s, e
    return None


def _primary_item(view: memoryview, start: int, end: int) -> int | None:
    pitm = _child(view, start, end, b"pitm")
    if pitm is None:
        return None
    s, e = pitm
    if e - s < 6:
        return None
    wide = view[s] != 0  # version 0: a 16-bit item ID, else 32-bit
    if wide and e - s < 8:
        return None
    return _u32(view, s + 4) if wide else _u16(view, s + 4)


def _associations(view: memoryview, start: int, end: int, item: int) -> Iterator[int]:
    """The 1-based ``ipco`` indexes ``ipma`` associates with ``item``."""
    if end - start < 8:
        return
    version, wide_index = view[start], view[start + 3] & 1
    id_bytes = 2 if version < 1 else 4
    count, offset = _u32(view, start + 4), start + 8
    for _ in range(min(count, end - offset)):
        if offset + id_bytes + 1 > end:
            return
        item_id = int.from_bytes(view[offset : offset + id_bytes], "big")
        associations = view[offset + id_bytes]
        offset += id_bytes + 1
        step = 2 if wide_index else 1
        if offset + associations * step > end:
            return
        if item_id == item:
            for i in range(associations):
                at = offset + i * step
                yield (_u16(view, at) & 0x7FFF) if wide_index else (view[at] & 0x7F)
        offset += associations * step


def _u16(view: memoryview, offset: int) -> int:
    return int.from_bytes(view[offset : offset + 2], "big")


def _u32(view: memoryview, offset: int) -> int:
    return int.from_bytes(view[offset : offset + 4], "big")
