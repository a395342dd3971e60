"""Small real images of every input format, made on the fly (no binary fixtures in the repo).

Most images are a four-quadrant pattern (red, green / blue, white) so orientation and crops can be
checked by the colour found at a point; animations change colour per frame.
"""

from __future__ import annotations

import io
import struct
import zlib

import pillow_heif
import pyvips
from PIL import Image

RED = (230, 20, 20)
GREEN = (20, 200, 40)
BLUE = (20, 40, 230)
WHITE = (255, 255, 255)


def quadrants(width: int, height: int) -> Image.Image:
    image = Image.new("RGB", (width, height), WHITE)
    hw, hh = width // 2, height // 2
    image.paste(RED, (0, 0, hw, hh))
    image.paste(GREEN, (hw, 0, width, hh))
    image.paste(BLUE, (0, hh, hw, height))
    return image


def pillow_bytes(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def jpeg(width: int = 64, height: int = 48, *, quality: int = 95) -> bytes:
    return pillow_bytes(quadrants(width, height), "JPEG", quality=quality)


# EXIF orientation N: how a viewer turns the stored pixels into the displayed image. The inverse
# of each is applied to the display image to get the stored pixels.
_INVERSE = {
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_90,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_270,
}


def oriented_jpeg(orientation: int, width: int = 64, height: int = 48) -> bytes:
    """Displays as ``quadrants(width, height)`` once EXIF ``orientation`` is applied."""
    display = quadrants(width, height)
    stored = display if orientation == 1 else display.transpose(_INVERSE[orientation])
    exif = Image.Exif()
    exif[0x0112] = orientation
    exif[0x8825] = {2: (52.0, 31.0, 0.0)}  # GPS latitude: must never reach a client
    return pillow_bytes(stored, "JPEG", quality=95, exif=exif.tobytes())


def cmyk_jpeg(width: int = 40, height: int = 30) -> bytes:
    """Pure cyan in CMYK (Pillow writes Adobe APP14, inverted CMYK)."""
    return pillow_bytes(Image.new("CMYK", (width, height), (255, 0, 0, 0)), "JPEG", quality=95)


def png(width: int = 64, height: int = 48, *, alpha: bool = False) -> bytes:
    image = quadrants(width, height)
    if alpha:
        image = image.convert("RGBA")
        image.putalpha(Image.linear_gradient("L").resize((width, height)))
    return pillow_bytes(image, "PNG")


def png16(width: int = 40, height: int = 30, value: int = 32768) -> bytes:
    image = (pyvips.Image.black(width, height, bands=3) + value).cast("ushort")
    return bytes(image.copy(interpretation="rgb16").pngsave_buffer(bitdepth=16))


def grey16_png(width: int = 40, height: int = 30, value: int = 49152) -> bytes:
    image = (pyvips.Image.black(width, height) + value).cast("ushort")
    return bytes(image.copy(interpretation="grey16").pngsave_buffer(bitdepth=16))


def palette_png(width: int = 40, height: int = 30) -> bytes:
    """Palette PNG with a transparent index (tRNS)."""
    image = Image.new("P", (width, height), 1)
    image.putpalette([0, 0, 0, 230, 20, 20] + [0, 0, 0] * 254)
    image.paste(0, (0, 0, width // 2, height))
    return pillow_bytes(image, "PNG", transparency=0)


def grey_alpha_png(width: int = 40, height: int = 30) -> bytes:
    image = Image.new("LA", (width, height), (128, 255))
    image.paste((0, 0), (0, 0, width // 2, height))
    return pillow_bytes(image, "PNG")


def frames(width: int, height: int, count: int) -> list[Image.Image]:
    colours = [RED, GREEN, BLUE, WHITE]
    return [Image.new("RGB", (width, height), colours[i % 4]) for i in range(count)]


def gif(width: int = 40, height: int = 30, count: int = 3) -> bytes:
    images = frames(width, height, count)
    if count == 1:
        return pillow_bytes(images[0], "GIF")
    return pillow_bytes(
        images[0], "GIF", save_all=True, append_images=images[1:], duration=100, loop=0
    )


def apng(width: int = 40, height: int = 30, count: int = 3) -> bytes:
    images = [image.convert("RGBA") for image in frames(width, height, count)]
    return pillow_bytes(
        images[0], "PNG", save_all=True, append_images=images[1:], duration=100, loop=0
    )


def webp(width: int = 64, height: int = 48, *, count: int = 1, lossless: bool = False) -> bytes:
    if count > 1:
        images = frames(width, height, count)
        return pillow_bytes(
            images[0], "WEBP", save_all=True, append_images=images[1:], duration=100, loop=0
        )
    return pillow_bytes(quadrants(width, height), "WEBP", quality=95, lossless=lossless)


def webp_animated(width: int = 40, height: int = 30) -> bytes:
    return webp(width, height, count=3)


def avif(width: int = 64, height: int = 48) -> bytes:
    image = pyvips.Image.new_from_memory(
        quadrants(width, height).tobytes(), width, height, 3, "uchar"
    )
    return bytes(image.heifsave_buffer(compression="av1", Q=90, effort=0))


def heic(width: int = 64, height: int = 48) -> bytes:
    heif = pillow_heif.from_pillow(quadrants(width, height))
    buffer = io.BytesIO()
    heif.save(buffer, quality=90)
    return buffer.getvalue()


def bmp(width: int = 64, height: int = 48) -> bytes:
    return pillow_bytes(quadrants(width, height), "BMP")


def tga(width: int = 64, height: int = 48) -> bytes:
    return pillow_bytes(quadrants(width, height), "TGA")


def tiff(width: int = 64, height: int = 48) -> bytes:
    return pillow_bytes(quadrants(width, height), "TIFF")


def ppm(width: int = 64, height: int = 48) -> bytes:
    return pillow_bytes(quadrants(width, height), "PPM")


def pgm(width: int = 64, height: int = 48) -> bytes:
    return pillow_bytes(quadrants(width, height).convert("L"), "PPM")


def pbm(width: int = 64, height: int = 48) -> bytes:
    return pillow_bytes(quadrants(width, height).convert("1"), "PPM")


# --- header-only bombs: a few bytes claiming 60000 x 60000 -----------------------------------

BOMB_SIDE = 60_000


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def bomb_png(side: int = BOMB_SIDE) -> bytes:
    ihdr = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 4096)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", ihdr)
        + _png_chunk(b"IDAT", idat)
        + _png_chunk(b"IEND", b"")
    )


def bomb_jpeg(side: int = BOMB_SIDE) -> bytes:
    """A real JPEG whose SOF0 frame header is rewritten to claim side x side."""
    data = bytearray(jpeg(16, 16))
    index = data.find(b"\xff\xc0")
    struct.pack_into(">HH", data, index + 5, side, side)
    return bytes(data)


def bomb_gif(side: int = BOMB_SIDE) -> bytes:
    """Logical screen side x side around one 1x1 frame."""
    data = bytearray(gif(1, 1, 1))
    struct.pack_into("<HH", data, 6, side, side)
    return bytes(data)


def bomb_bmp(side: int = BOMB_SIDE) -> bytes:
    data = bytearray(bmp(4, 4))
    struct.pack_into("<ii", data, 18, side, side)
    return bytes(data)


def bomb_tga(side: int = BOMB_SIDE) -> bytes:
    data = bytearray(tga(4, 4))
    struct.pack_into("<HH", data, 12, side, side)
    return bytes(data)


def bomb_ppm(side: int = BOMB_SIDE) -> bytes:
    return f"P6\n{side} {side}\n255\n".encode() + b"\x00" * 3000


def bomb_webp() -> bytes:
    """A 1x1 lossless WebP whose VP8L header is patched to 15000 x 15000 (225 MP): the data
    cannot fill it, but a decoder that trusted the header would allocate for it."""
    data = bytearray(webp(1, 1, lossless=True))
    index = data.find(b"VP8L") + 8
    assert data[index] == 0x2F
    bits = int.from_bytes(data[index + 1 : index + 5], "little")
    bits = (bits & ~((1 << 28) - 1)) | 14999 | (14999 << 14)
    data[index + 1 : index + 5] = bits.to_bytes(4, "little")
    return bytes(data)


def bomb_tiff(side: int = BOMB_SIDE) -> bytes:
    image = pyvips.Image.black(8, 8).cast("uchar")
    data = bytearray(image.tiffsave_buffer())
    # Patch ImageWidth (256) and ImageLength (257) in the first IFD (little-endian TIFF).
    ifd = struct.unpack_from("<I", data, 4)[0]
    count = struct.unpack_from("<H", data, ifd)[0]
    for index in range(count):
        entry = ifd + 2 + index * 12
        tag, kind = struct.unpack_from("<HH", data, entry)
        if tag in (256, 257):
            if kind == 3:
                struct.pack_into("<H", data, entry + 8, side)
            else:
                struct.pack_into("<I", data, entry + 8, side)
    return bytes(data)


#: 14142 x 14142 = 200 MP, the issue's HEIC.
HEIF_BOMB_SIDE = 14_142


def claim_ispe(data: bytes, width: int, height: int) -> bytes:
    """A HEIF/AVIF with every ``ispe`` property (before ``mdat``) rewritten to width x height;
    a ``clap`` crop box is left as it is."""
    out = bytearray(data)
    end = out.find(b"mdat")
    index = out.find(b"ispe", 0, end)
    assert index > 0
    while index > 0:
        struct.pack_into(">II", out, index + 8, width, height)
        index = out.find(b"ispe", index + 4, end)
    return bytes(out)


def bomb_heic(side: int = HEIF_BOMB_SIDE) -> bytes:
    """A real 64x48 HEIC whose ``ispe`` claims side x side while its ``clap`` box still crops to
    64x48: libvips reports 64x48, and only the decode would find out."""
    data = heic(64, 48)
    assert b"clap" in data
    return claim_ispe(data, side, side)


def bomb_avif(side: int = HEIF_BOMB_SIDE) -> bytes:
    """A real AVIF whose ``ispe`` claims side x side, its ``mdat`` cut after 12 bytes: libheif
    refuses to read the header at all."""
    data = claim_ispe(avif(64, 48), side, side)
    return data[: data.find(b"mdat") + 16]


def truncated(data: bytes, keep: float = 0.5) -> bytes:
    return data[: max(16, int(len(data) * keep))]


def noise_jpeg(width: int = 400, height: int = 300) -> bytes:
    """High-entropy JPEG: truncation is then certain to cut scan data."""
    image = pyvips.Image.gaussnoise(width, height, sigma=60, mean=128).cast("uchar")
    image = image.bandjoin([image, image]).copy(interpretation="srgb")
    return bytes(image.jpegsave_buffer(Q=90))


def decode(data: bytes) -> pyvips.Image:
    return pyvips.Image.new_from_buffer(data, "", access="sequential")


def pixel(data: bytes, x: int, y: int) -> list[float]:
    image = pyvips.Image.new_from_buffer(data, "")
    return list(image(x, y))


# --- progressive-JPEG scan bomb --------------------------------------------------------------


class _BitWriter:
    """Entropy-coded bits, padded with 1s and byte-stuffed as T.81 F.1.2.3 asks."""

    def __init__(self) -> None:
        self.value = 0
        self.count = 0

    def put(self, value: int, length: int) -> None:
        self.value = (self.value << length) | value
        self.count += length

    def data(self) -> bytes:
        pad = -self.count % 8
        value = (self.value << pad) | ((1 << pad) - 1)
        return value.to_bytes((self.count + pad) // 8, "big").replace(b"\xff", b"\xff\x00")


def _jpeg_segment(marker: int, payload: bytes) -> bytes:
    return struct.pack(">BBH", 0xFF, marker, len(payload) + 2) + payload


def scan_bomb_jpeg(width: int = 4096, height: int = 4096, components: int = 3) -> bytes:
    """A valid flat-grey progressive JPEG of 2,649 scans (3 components): per component one DC
    scan, then each of the 63 AC coefficients on its own, first at point transform 13 and then
    refined one bit at a time (1 + 63 x 14 scans). Every block is zero, so each AC scan is a
    few end-of-band runs: the file is small and libjpeg still walks every block once per scan.
    """
    blocks = ((width + 7) // 8) * ((height + 7) // 8)
    sof = struct.pack(">BHHB", 8, height, width, components)
    sof += b"".join(struct.pack(">BBB", c + 1, 0x11, 0) for c in range(components))
    dc_table = b"\x00" + bytes([1] + [0] * 15) + b"\x00"  # symbol 0 (difference 0) = "0"
    # EOBr symbols r<<4 for r = 0..14, each a 4-bit code equal to r.
    ac_table = b"\x10" + bytes([0, 0, 0, 15] + [0] * 12) + bytes(r << 4 for r in range(15))
    parts = [
        b"\xff\xd8",
        _jpeg_segment(0xDB, b"\x00" + b"\x01" * 64),
        _jpeg_segment(0xC2, sof),
        _jpeg_segment(0xC4, dc_table + ac_table),
    ]
    dc = _BitWriter()
    dc.put(0, blocks)
    runs = _BitWriter()
    left = blocks
    while left:  # EOBRUN = 2^r + r extra bits, at most 32767 blocks per symbol
        run = min(left, 32767)
        r = run.bit_length() - 1
        runs.put(r, 4)
        runs.put(run - (1 << r), r)
        left -= run
    dc_data, run_data = dc.data(), runs.data()

    def sos(component: int, first: int, last: int, high: int, low: int) -> bytes:
        return _jpeg_segment(
            0xDA, struct.pack(">BBBBBB", 1, component + 1, 0, first, last, high << 4 | low)
        )

    for component in range(components):
        parts += [sos(component, 0, 0, 0, 13), dc_data]
        for k in range(1, 64):
            parts += [sos(component, k, k, 0, 13), run_data]
            for high in range(13, 0, -1):
                parts += [sos(component, k, k, high, high - 1), run_data]
    parts.append(b"\xff\xd9")
    return b"".join(parts)


# --- GIF canvas bombs: screens and frame descriptors that claim more than the pixels -----------

Frame = tuple[int, int, int, int]  # left, top, width, height


def gif_claiming(screen: tuple[int, int], frames: list[Frame]) -> bytes:
    """A GIF89a with a two-colour global table whose frames each carry one pixel of LZW data
    (clear, index 0, end) whatever their descriptor claims: a 1x1 frame is complete, a larger
    one is short of data, as a bomb's is."""
    header = b"GIF89a" + struct.pack("<HHBBB", *screen, 0x80, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
    loop = b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    body = b"".join(
        b"\x21\xf9\x04\x00\x0a\x00\x00\x00"  # graphic control: 100 ms
        + b"\x2c"
        + struct.pack("<HHHHB", *frame, 0)
        + b"\x02\x02\x44\x01\x00"  # LZW minimum code size 2; codes 4, 0, 5 in 3 bits
        for frame in frames
    )
    return header + loop + body + b";"


def gif_bombs() -> dict[str, bytes]:
    """The four shapes that reached libnsgif or Pillow: a huge screen, a huge first frame (libnsgif
    grows its screen to it), a huge later frame, a 1x1 frame placed far off a small screen
    (Pillow's ``decompression_bomb_extents.gif``: Pillow grows its canvas to the extent)."""
    return {
        "screen.gif": gif_claiming((60_000, 60_000), [(0, 0, 1, 1)]),
        "first-frame.gif": gif_claiming((100, 100), [(0, 0, 60_000, 60_000)]),
        "later-frame.gif": gif_claiming((100, 100), [(0, 0, 1, 1), (0, 0, 65_535, 1_000)]),
        "extents.gif": gif_claiming((100, 100), [(0, 0, 1, 1), (60_000, 60_000, 1, 1)]),
    }


# --- truncated progressive JPEGs ----------------------------------------------------------------


def progressive_jpeg(width: int = 400, height: int = 300) -> bytes:
    """A progressive photo-like JPEG (libjpeg's default script: 10 scans) with real detail."""
    image = pyvips.Image.gaussnoise(width, height, sigma=40, mean=128).cast("uchar").gaussblur(2)
    image = image.bandjoin([image.flip("horizontal"), image.flip("vertical")])
    return bytes(image.copy(interpretation="srgb").jpegsave_buffer(Q=90, interlace=True))


def scan_offsets(data: bytes) -> list[int]:
    """Where each SOS marker starts (the file has no APP segment holding a JPEG)."""
    offsets, index = [], data.find(b"\xff\xda")
    while index >= 0:
        offsets.append(index)
        index = data.find(b"\xff\xda", index + 2)
    return offsets


def cut_between_scans(data: bytes, scans: int) -> bytes:
    """The file as a download cut right before scan ``scans + 1`` leaves it (no EOI)."""
    return data[: scan_offsets(data)[scans]]


def zero_padded_cut(data: bytes, keep: float) -> bytes:
    """The first ``keep`` of the file, then zero bytes to its full length (a download cut short
    into a preallocated file)."""
    kept = int(len(data) * keep)
    return data[:kept] + bytes(len(data) - kept)


# --- TIFFs libvips refuses or misreads ---------------------------------------------------------


def lab_tiff(width: int = 64, height: int = 48, **tags: int) -> bytes:
    """CIE L*a*b* (photometric 8), as Pillow writes it: libvips reads it only as its own LabQ."""
    info = {int(tag.removeprefix("tag")): value for tag, value in tags.items()}
    return pillow_bytes(quadrants(width, height).convert("LAB"), "TIFF", tiffinfo=info)


def float_tiff(width: int = 64, height: int = 48, *, unit: bool = True) -> bytes:
    """32-bit float grey, LZW with the floating-point predictor; samples 0..1 (``unit``, the
    common convention) or 0..255."""
    grey = quadrants(width, height).convert("L").convert("F")
    if unit:
        grey = grey.point(lambda value: value / 255)
    return pillow_bytes(grey, "TIFF", compression="tiff_lzw", tiffinfo={317: 3})


def old_jpeg_tiff(width: int = 64, height: int = 48) -> bytes:
    """Old-style JPEG compression (6): one strip holding a whole JFIF stream, found through
    JPEGInterchangeFormat as libtiff's OJPEG reader wants it; YCbCr 4:2:0."""
    jpeg_data = pillow_bytes(quadrants(width, height), "JPEG", quality=90, subsampling=2)
    short, long = 3, 4
    tags = [  # tag, type, count, value (BitsPerSample points at three shorts after the IFD)
        (256, long, 1, width),
        (257, long, 1, height),
        (258, short, 3, 0),
        (259, short, 1, 6),
        (262, short, 1, 6),
        (273, long, 1, 0),
        (277, short, 1, 3),
        (278, long, 1, height),
        (279, long, 1, len(jpeg_data)),
        (284, short, 1, 1),
        (513, long, 1, 0),
        (514, long, 1, len(jpeg_data)),
        (530, short, 2, 2 | 2 << 16),
    ]
    bits_at = 8 + 2 + 12 * len(tags) + 4
    data_at = bits_at + 6
    entries = b"".join(
        struct.pack(
            "<HHII", tag, kind, count, {258: bits_at, 273: data_at, 513: data_at}.get(tag, value)
        )
        for tag, kind, count, value in tags
    )
    header = b"II*\x00" + struct.pack("<IH", 8, len(tags)) + entries + struct.pack("<I", 0)
    return header + struct.pack("<HHH", 8, 8, 8) + jpeg_data
