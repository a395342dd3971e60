"""Hostile inputs, generated in the tests (nothing large is committed)."""

from __future__ import annotations

import io
import struct
import zipfile

from PIL import Image

from tests.imaging import factory as make


def lying_jpeg(side: int = 7000) -> bytes:
    """The issue's reproduction: a header claiming side x side around 16x16 of scan data."""
    return make.bomb_jpeg(side)


def cut_gif_data(side: int = 500, keep: int = 40) -> bytes:
    """The issue's reproduction: a side x side GIF whose LZW data is cut to ``keep`` bytes, with
    the block terminator and the trailer put back."""
    noise = Image.effect_noise((side, side), 60).convert("P")
    out = io.BytesIO()
    noise.save(out, "GIF")
    data = out.getvalue()
    index = 13 + (3 * 2 ** ((data[10] & 7) + 1) if data[10] & 0x80 else 0)
    while data[index] == 0x21:  # extensions before the image descriptor
        index += 2
        while data[index]:
            index += data[index] + 1
        index += 1
    assert data[index] == 0x2C
    flags = data[index + 9]
    start = index + 10 + (3 * 2 ** ((flags & 7) + 1) if flags & 0x80 else 0) + 1  # after LZW size
    return data[:start] + bytes([keep]) + data[start + 1 : start + 1 + keep] + b"\x00;"


def jpeg_with_extraneous_bytes() -> bytes:
    """A camera quirk libjpeg warns about and decodes: stray bytes before the SOS marker."""
    data = make.noise_jpeg(64, 48)
    return data.replace(b"\xff\xda", b"\x00\x00\xff\xda", 1)


def jpeg_without_eoi() -> bytes:
    """Complete scans, no end-of-image marker (some cameras and encoders)."""
    data = make.noise_jpeg(64, 48)
    assert data.endswith(b"\xff\xd9")
    return data[:-2]


def polyglot_gif_html() -> bytes:
    """A real GIF followed by HTML: the image decodes; the rest is never served as HTML."""
    return make.gif(8, 8, 1) + b"<html><script>alert(1)</script></html>"


def polyglot_jpeg_zip() -> bytes:
    """A real JPEG with a ZIP archive appended (a classic GIFAR/JPEG-ZIP polyglot)."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("payload.html", "<script>alert(1)</script>")
    return make.jpeg(32, 24) + archive.getvalue()


def png_chunk_length_lie() -> bytes:
    """A PNG whose IDAT claims more bytes than the file holds."""
    data = bytearray(make.png(64, 48))
    index = data.find(b"IDAT") - 4
    length = struct.unpack_from(">I", data, index)[0]
    struct.pack_into(">I", data, index, length + 10_000)
    return bytes(data)
