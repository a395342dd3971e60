"""Images for the source tests, made on the fly; same-size variants for rewrite tests."""

from __future__ import annotations

from PIL import Image

from tests.imaging.factory import BLUE, RED, pillow_bytes, quadrants


def quadrant_bmp(width: int = 64, height: int = 48) -> bytes:
    """Uncompressed: every BMP of one size has the same byte length, whatever its pixels."""
    return pillow_bytes(quadrants(width, height), "BMP")


def solid_bmp(colour: tuple[int, int, int] = BLUE, width: int = 64, height: int = 48) -> bytes:
    return pillow_bytes(Image.new("RGB", (width, height), colour), "BMP")


def pixel(body: bytes, x: int, y: int) -> tuple[int, ...]:
    import pyvips

    image = pyvips.Image.new_from_buffer(body, "")
    return tuple(int(v) for v in image(x, y)[:3])


def size_of(body: bytes) -> tuple[int, int]:
    import pyvips

    image = pyvips.Image.new_from_buffer(body, "")
    return image.width, image.height


def near(found: tuple[int, ...], expected: tuple[int, int, int], slack: int = 40) -> bool:
    return all(abs(a - b) <= slack for a, b in zip(found, expected, strict=True))


__all__ = ["BLUE", "RED", "near", "pixel", "quadrant_bmp", "size_of", "solid_bmp"]
