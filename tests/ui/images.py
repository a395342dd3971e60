"""Generated test images with colours a screenshot can check."""

from __future__ import annotations

import io
from pathlib import Path

import pyvips
from PIL import Image

RED = (255, 0, 0)
BLUE = (0, 0, 255)


def halves(width: int, height: int, left: tuple[int, ...], right: tuple[int, ...]) -> pyvips.Image:
    half = width // 2
    a = pyvips.Image.black(half, height, bands=3) + list(left)
    b = pyvips.Image.black(width - half, height, bands=3) + list(right)
    return a.join(b, "horizontal").cast("uchar")


def write_halves(path: Path, width: int, height: int) -> Path:
    """Red left half, blue right half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    halves(width, height, RED, BLUE).write_to_file(str(path))
    return path


def png_bytes(width: int, height: int, colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, "PNG")
    return out.getvalue()


def near(pixel: tuple[int, ...], colour: tuple[int, int, int], tolerance: int = 40) -> bool:
    return all(abs(int(p) - c) <= tolerance for p, c in zip(pixel[:3], colour, strict=True))


def decode(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")
