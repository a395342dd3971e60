"""A document root with one small real file per case, written before each test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from assetgate.settings import Settings
from tests.conftest import app_client
from tests.imaging import factory as make

FILES: dict[str, Callable[[], bytes]] = {
    "photo.jpg": lambda: make.jpeg(800, 600, quality=90),
    "noise.jpg": make.noise_jpeg,
    "oriented6.jpg": lambda: make.oriented_jpeg(6, 80, 60),
    "cmyk.jpg": make.cmyk_jpeg,
    "alpha.png": lambda: make.png(200, 100, alpha=True),
    "palette.png": make.palette_png,
    "deep.png": make.png16,
    "anim.gif": lambda: make.gif(40, 30, 3),
    "anim.webp": lambda: make.webp(40, 30, count=3),
    "anim.png": lambda: make.apng(40, 30, 3),
    "still.webp": make.webp,
    "still.avif": make.avif,
    "still.heic": make.heic,
    "still.bmp": make.bmp,
    "still.tga": make.tga,
    "still.tiff": make.tiff,
    "still.ppm": make.ppm,
    "still.pgm": make.pgm,
    "still.pbm": make.pbm,
    "bomb.png": make.bomb_png,
    "bomb.gif": make.bomb_gif,
    "bomb.jpg": make.bomb_jpeg,
    "bomb.bmp": make.bomb_bmp,
    "cut.jpg": lambda: make.truncated(make.noise_jpeg(), 0.5),
    "cut.png": lambda: make.truncated(make.png(300, 200, alpha=True), 0.5),
    "notes.txt": lambda: b"plain text, not an image\n",
    "fake.jpg": lambda: b"<html>not a jpeg</html>",
    "style.css": lambda: b"body {\n    color: red;\n}\n",
    "dir/nested.jpg": lambda: make.jpeg(64, 48),
}


@pytest.fixture(scope="session")
def generated() -> dict[str, bytes]:
    """Encoded once per session (AVIF and HEIC encodes are the slow part)."""
    return {name: build() for name, build in FILES.items()}


@pytest.fixture
def files(docroot: Path, generated: dict[str, bytes]) -> dict[str, bytes]:
    for name, data in generated.items():
        target = docroot / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return generated


@pytest.fixture
async def opt(files: dict[str, bytes], settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings) as client:
        yield client


@pytest.fixture
def custom_client(
    files: dict[str, bytes], make_settings: Callable[..., Settings]
) -> Callable[..., Any]:
    """``async with custom_client(render_queue=0) as client: ...``"""

    def build(**overrides: Any) -> app_client:
        return app_client(make_settings(**overrides))

    return build
