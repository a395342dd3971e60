"""How many scans a JPEG makes libjpeg run, counted from its markers without libjpeg.

A progressive (or multi-scan sequential) JPEG is decoded scan by scan into a whole-image
coefficient buffer, and every scan walks every block of its components: the cost is scans x
blocks, and libjpeg consumes every scan before libvips sees its first pixel, so neither the render
deadline nor the pixel limit stops it. A few hundred kilobytes of valid scans (one coefficient and
one bit per scan: up to 63 x 14 + 14 per component) cost tens of CPU-seconds. Real encoders write
1 scan (baseline) or about 10 (libjpeg's and mozjpeg's progressive scripts); libjpeg-turbo's own
tools refuse more than 500. The limit is ``ASSETGATE_MAX_JPEG_SCANS`` (docs/optimizer.md).

A sequential frame whose first scan holds every component is decoded in one pass (libjpeg does not
read further scans), so it counts as 1 without reading on; otherwise the entropy-coded data of each
scan is skipped with one C-level search for the next marker (``0xFF`` then neither a stuffed
``0x00`` nor a restart marker), so counting costs a memory scan of the file, no decoding.

The same walk tells a progressive file that stops between scans from a complete one: libjpeg
fills whatever the missing scans would have refined with zeros and says nothing (a file cut inside
a scan warns, and ``integrity.complete_jpeg`` puts back the EOI a camera file may lack). A file
with no EOI whose progression stops before every coefficient of every component reached its last
bit is truncated (an encoder may end a progression early, but then writes its EOI).

API:
- ``read_scans(data, *, stop_after) -> Scans``: pure; ``data`` is the file (any bytes-like
  object, an ``mmap`` too). Stops at EOI, at the end of ``data``, at a malformed segment, or as
  soon as the count exceeds ``stop_after`` (the caller's limit: the walk is then bounded by it).
- ``read_file_scans(path, *, stop_after) -> Scans``: the same over a memory-mapped file.
- ``Scans(count, progressive, complete, ended)``; ``.truncated`` as described above.
"""

from __future__ import annotations

import mmap
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

Buffer = bytes | bytearray | memoryview | mmap.mmap

SOI: Final = 0xD8
EOI: Final = 0xD9
SOS: Final = 0xDA
#: Start-of-frame markers of progressive processes (Huffman and arithmetic, ITU T.81 Table B.1).
PROGRESSIVE_SOF: Final = frozenset({0xC2, 0xC6, 0xCA, 0xCE})
#: Every other start-of-frame marker (DHT 0xC4, JPG 0xC8 and DAC 0xCC are not frames).
SEQUENTIAL_SOF: Final = frozenset({0xC0, 0xC1, 0xC3, 0xC5, 0xC7, 0xC9, 0xCB, 0xCD, 0xCF})
#: Markers with no length field after them.
_STANDALONE: Final = frozenset({0x01, SOI, *range(0xD0, 0xD8)})
#: The next marker after entropy-coded data: 0xFF, not a stuffed 0x00, not a restart, not fill.
_NEXT_MARKER: Final = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")


@dataclass(frozen=True, slots=True)
class Scans:
    count: int
    progressive: bool = False
    complete: bool = True  # every coefficient of every component refined to its last bit
    ended: bool = False  # an EOI marker was reached (unknown for a one-scan sequential file)

    @property
    def truncated(self) -> bool:
        return self.progressive and not self.complete and not self.ended


def read_scans(data: Buffer, *, stop_after: int) -> Scans:
    view = memoryview(data).cast("B") if not isinstance(data, mmap.mmap) else data
    end = len(view)
    if end < 4 or view[0] != 0xFF or view[1] != SOI:
        return Scans(0)
    position, scans, components, progressive = 2, 0, 0, False
    # Progressive: the point transform each (component, coefficient) has reached; -1 = none yet.
    reached: dict[int, list[int]] = {}
    while position + 1 < end:
        if view[position] != 0xFF or view[position + 1] in (0x00, 0xFF):
            # Fill bytes or garbage between segments: libjpeg skips to the next marker too.
            found = _NEXT_MARKER.search(data, position)
            if found is None:
                break
            position = found.start()
        marker = view[position + 1]
        if marker == EOI:
            return Scans(scans, progressive, _complete(reached), ended=True)
        if marker in _STANDALONE:
            position += 2
            continue
        if position + 4 > end:
            break
        length = (view[position + 2] << 8) | view[position + 3]
        if length < 2:
            break
        segment_end = position + 2 + length
        if marker in PROGRESSIVE_SOF or marker in SEQUENTIAL_SOF:
            progressive = marker in PROGRESSIVE_SOF
            components = view[position + 9] if position + 10 <= end else 0
            if progressive:
                ids = [view[at] for at in range(position + 10, min(segment_end, end) - 2, 3)]
                reached = {component: [-1] * 64 for component in ids[:components]}
        elif marker == SOS:
            scans += 1
            in_scan = view[position + 4] if position + 5 <= end else 0
            if not progressive and scans == 1 and in_scan >= components > 0:
                return Scans(1)  # one interleaved sequential scan: libjpeg reads no further
            if scans > stop_after:
                return Scans(scans, progressive, complete=False)
            if progressive:
                _refine(reached, view, position + 4, min(segment_end, end))
            found = _NEXT_MARKER.search(data, segment_end)
            if found is None:
                break
            position = found.start()
            continue
        position = segment_end
    return Scans(scans, progressive, _complete(reached))


def read_file_scans(path: Path | str, *, stop_after: int) -> Scans:
    with open(path, "rb") as handle:
        try:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            return Scans(0)
        with mapped:
            return read_scans(mapped, stop_after=stop_after)


def _refine(
    reached: dict[int, list[int]], view: memoryview | mmap.mmap, start: int, end: int
) -> None:
    """Apply one progressive scan header (T.81 B.2.3: Ns, Ns x (Cs, tables), Ss, Se, Ah|Al)."""
    if end - start < 1:
        return
    count = view[start]
    tail = start + 1 + 2 * count
    if tail + 3 > end:
        return
    first, last, approximation = view[tail], min(view[tail + 1], 63), view[tail + 2]
    high, low = approximation >> 4, approximation & 0x0F
    for index in range(count):
        bits = reached.get(view[start + 1 + 2 * index])
        if bits is None:
            continue
        for k in range(first, last + 1):
            if (high == 0 and bits[k] == -1) or (high > 0 and bits[k] == high):
                bits[k] = low


def _complete(reached: dict[int, list[int]]) -> bool:
    return all(all(bit == 0 for bit in bits) for bits in reached.values())
