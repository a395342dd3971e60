"""Small real images of every input format, generated at test time (nothing binary committed).

Each sample knows the size and frame count its WebP must have, so a test can decode the answer
and compare. Sizes are all different, so a mixed-up ZIP order cannot pass by accident.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import pyvips
from PIL import Image


@dataclass(frozen=True)
class Sample:
    name: str  # the upload's file name
    data: bytes
    width: int  # of the expected WebP (after EXIF orientation)
    height: int
    frames: int = 1


def _gradient(width: int, height: int, bands: int = 3) -> pyvips.Image:
    x = pyvips.Image.xyz(width, height)
    red = x[0] * (255 / max(1, width - 1))
    green = x[1] * (255 / max(1, height - 1))
    blue = (red + green) / 2
    image = red.bandjoin([green, blue])
    if bands == 4:
        image = image.bandjoin((x[0] % 2) * 255)
    return image.cast("uchar").copy(interpretation="srgb")


def _pil_frames(width: int, height: int, count: int, mode: str = "RGB") -> list[Image.Image]:
    colours = [(220, 30, 30), (30, 200, 30), (30, 30, 220), (230, 200, 20), (150, 20, 150)]
    frames = []
    for index in range(count):
        frame = Image.new(mode, (width, height), colours[index % len(colours)])
        frame.putpixel((index, index), (255, 255, 255) if mode == "RGB" else (255, 255, 255, 255))
        frames.append(frame)
    return frames


def _pil_bytes(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def jpeg_rotated() -> Sample:
    """120x80 pixels stored with EXIF orientation 6 (rotate 90°): a viewer shows 80x120."""
    image = _gradient(120, 80).copy()
    image.set_type(pyvips.GValue.gint_type, "orientation", 6)
    data = image.jpegsave_buffer(Q=90)
    return Sample("rotated.jpg", data, 80, 120)


def png() -> Sample:
    return Sample("alpha.png", _gradient(50, 40, bands=4).pngsave_buffer(), 50, 40)


def apng() -> Sample:
    frames = _pil_frames(30, 20, 3, "RGBA")
    data = _pil_bytes(
        frames[0], "PNG", save_all=True, append_images=frames[1:], duration=80, loop=0
    )
    return Sample("spinner.apng", data, 30, 20, 3)


def gif() -> Sample:
    frames = _pil_frames(32, 24, 4)
    data = _pil_bytes(
        frames[0], "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0
    )
    return Sample("banner.gif", data, 32, 24, 4)


def webp_animated() -> Sample:
    frames = _pil_frames(36, 28, 3)
    data = _pil_bytes(
        frames[0], "WEBP", save_all=True, append_images=frames[1:], duration=90, loop=0
    )
    return Sample("sticker.webp", data, 36, 28, 3)


def avif() -> Sample:
    data = _gradient(48, 32).heifsave_buffer(compression="av1", effort=0, Q=60)
    return Sample("photo.avif", data, 48, 32)


def bmp() -> Sample:
    return Sample("old.bmp", _pil_bytes(_pil_frames(33, 22, 1)[0], "BMP"), 33, 22)


def tiff() -> Sample:
    return Sample("scan.tiff", _gradient(44, 33).tiffsave_buffer(), 44, 33)


def tga() -> Sample:
    return Sample("game.tga", _pil_bytes(_pil_frames(25, 15, 1)[0], "TGA"), 25, 15)


def pbm() -> Sample:
    bitmap = Image.new("1", (17, 9), 1)
    bitmap.putpixel((3, 3), 0)
    return Sample("bitmap.pbm", _pil_bytes(bitmap, "PPM"), 17, 9)


def heic() -> Sample:
    import pillow_heif

    heif = pillow_heif.from_pillow(_pil_frames(40, 30, 1)[0])
    out = io.BytesIO()
    heif.save(out, quality=80)
    return Sample("phone.heic", out.getvalue(), 40, 30)


MAKERS: dict[str, Callable[[], Sample]] = {
    "jpeg": jpeg_rotated,
    "png": png,
    "apng": apng,
    "gif": gif,
    "webp": webp_animated,
    "avif": avif,
    "bmp": bmp,
    "tiff": tiff,
    "tga": tga,
    "pbm": pbm,
    "heic": heic,
}


@cache
def sample(kind: str) -> Sample:
    return MAKERS[kind]()


def decode_webp(data: bytes) -> tuple[int, int, int]:
    """(width, height, frames) of a WebP, decoded by Pillow (not the library that wrote it)."""
    with Image.open(io.BytesIO(data), formats=["WEBP"]) as image:
        assert image.format == "WEBP"
        frames = int(getattr(image, "n_frames", 1))
        image.seek(frames - 1)
        image.load()  # every frame decodes
        return image.width, image.height, frames


def riff_chunks(data: bytes) -> list[bytes]:
    """The chunk ids of a WebP (RIFF) file, to see what metadata it carries."""
    assert data[:4] == b"RIFF"
    assert data[8:12] == b"WEBP"
    chunks = []
    offset = 12
    while offset + 8 <= len(data):
        kind = data[offset : offset + 4]
        size = int.from_bytes(data[offset + 4 : offset + 8], "little")
        chunks.append(kind)
        offset += 8 + size + (size & 1)
    return chunks


def jpeg_with_metadata() -> Sample:
    """90x60 pixels, EXIF orientation 8, camera make, GPS position and an ICC profile."""
    from PIL import ImageCms

    image = _pil_frames(90, 60, 1)[0]
    exif = Image.Exif()
    exif[0x0112] = 8  # Orientation: rotate 270° to display
    exif[0x010F] = "SecretCam"  # Make
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 30.0), 3: "E", 4: (2.0, 17.0, 40.0)}  # GPS IFD
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    data = _pil_bytes(image, "JPEG", exif=exif.tobytes(), icc_profile=icc, quality=90)
    assert b"SecretCam" in data
    return Sample("gps.jpg", data, 60, 90)
