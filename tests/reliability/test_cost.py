"""The cost the door admits by: decoded bytes from the header, before any pixel is decoded."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from assetgate.imaging.formats import sniff
from assetgate.imaging.load import probe
from tests.imaging import factory as make
from tests.imaging.decode_limits import LIMITS


def _info(tmp_path: Path, name: str, data: bytes):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_bytes(data)
    fmt = sniff(data[:64], name)
    assert fmt is not None
    return probe(path, fmt, replace(LIMITS, max_pixels=10**8))


def test_a_still_costs_pixels_times_bands(tmp_path: Path) -> None:
    assert _info(tmp_path, "a.jpg", make.jpeg(300, 200)).decoded_bytes(all_frames=True) == (
        300 * 200 * 3
    )
    alpha = _info(tmp_path, "a.png", make.png(300, 200, alpha=True))
    assert alpha.decoded_bytes(all_frames=True) == 300 * 200 * 4


def test_an_animation_costs_every_frame_only_when_every_frame_is_kept(tmp_path: Path) -> None:
    info = _info(tmp_path, "a.webp", make.webp(40, 30, count=5))
    bands = 4 if info.has_alpha else 3
    assert info.decoded_bytes(all_frames=True) == 40 * 30 * bands * 5
    assert info.decoded_bytes(all_frames=False) == 40 * 30 * bands
