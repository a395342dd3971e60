"""The GIF canvas reader: the screen grown to every frame's extent, from the blocks alone, and
never an exception, a read past the buffer or an unbounded walk for whatever is cut."""

from __future__ import annotations

import struct
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from assetgate.errors import AppError
from assetgate.imaging.gif_header import canvas_size, file_canvas_size
from assetgate.imaging.load import decoding, open_image, probe
from tests.imaging import factory as make
from tests.imaging.decode_limits import LIMITS


def test_real_gifs_report_their_screen() -> None:
    assert canvas_size(make.gif(40, 30, 3)) == (40, 30)
    assert canvas_size(make.gif(7, 5, 1)) == (7, 5)


def test_local_colour_tables_and_comments_are_skipped_by_their_lengths() -> None:
    """Frames with their own palettes, and a comment full of image-descriptor bytes."""
    frames = [Image.new("P", (20, 10), i) for i in range(3)]
    for index, frame in enumerate(frames):
        frame.putpalette([index * 40, 0, 0] * 256)
    data = make.pillow_bytes(
        frames[0], "GIF", save_all=True, append_images=frames[1:], comment=b"\x2c" * 200
    )
    assert b"\x2c" * 200 in data
    assert canvas_size(data) == (20, 10)


def test_every_frame_extent_grows_the_canvas() -> None:
    data = make.gif_claiming((100, 80), [(0, 0, 1, 1), (150, 0, 10, 1), (0, 300, 1, 5)])
    assert canvas_size(data) == (160, 305)
    bombs = {name: canvas_size(data) for name, data in make.gif_bombs().items()}
    assert bombs == {
        "screen.gif": (60_000, 60_000),
        "first-frame.gif": (60_000, 60_000),
        "later-frame.gif": (65_535, 1_000),
        "extents.gif": (60_001, 60_001),
    }


def test_stray_bytes_are_stepped_over_as_pillow_does() -> None:
    data = make.gif_claiming((10, 10), [(0, 0, 1, 1)])
    trailer = len(data) - 1
    stray = data[:trailer] + b"\x00\x07" + make.gif_claiming((1, 1), [(500, 0, 1, 1)])[13 + 6 :]
    assert canvas_size(stray) == (501, 10)


@pytest.mark.parametrize("keep", [0, 6, 12, 13, 14, 20, 40, 50, 60, 70])
def test_cut_input_never_raises(keep: int) -> None:
    data = make.gif_bombs()["extents.gif"]
    size = canvas_size(data[:keep])
    assert size is None if keep < 13 else size is not None
    assert canvas_size(b"GIF89a" + struct.pack("<HHB", 1, 1, 0xFF) + b"\x00\x00") == (1, 1)
    assert canvas_size(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20) is None


def test_a_file_is_read_through_a_memory_map(tmp_path: Path) -> None:
    path = tmp_path / "a.gif"
    path.write_bytes(make.gif_bombs()["extents.gif"])
    assert file_canvas_size(path) == (60_001, 60_001)
    (tmp_path / "empty.gif").write_bytes(b"")
    assert file_canvas_size(tmp_path / "empty.gif") is None


@pytest.mark.parametrize("name", sorted(make.gif_bombs()))
@pytest.mark.parametrize("as_file", [False, True])
def test_every_gif_bomb_is_413_before_decoding(name: str, as_file: bool, tmp_path: Path) -> None:
    """Before: 415 (libnsgif refused the header) or 500 (Pillow's DecompressionBombError)."""
    data = make.gif_bombs()[name]
    path = tmp_path / name
    path.write_bytes(data)
    src = path if as_file else data
    with pytest.raises(AppError) as caught:
        probe(src, "gif", LIMITS)
    assert caught.value.status == 413
    assert "over the input limit of 50 MP" in caught.value.message
    for animated in (False, True):
        with pytest.raises(AppError) as caught, decoding():
            open_image(src, "gif", LIMITS, animated=animated)
        assert caught.value.status == 413


def test_a_canvas_within_the_limit_decodes() -> None:
    data = make.gif_claiming((4, 4), [(0, 0, 1, 1), (3, 3, 1, 1)])
    info = probe(data, "gif", replace(LIMITS, max_pixels=16))
    assert (info.width, info.height, info.pages) == (4, 4, 2)
    with pytest.raises(AppError) as caught:
        probe(data, "gif", replace(LIMITS, max_pixels=15))
    assert caught.value.status == 413
