"""The JPEG scan counter: what libjpeg would run, from the markers alone, and never an exception,
a read past the buffer or an unbounded walk for whatever is cut or malformed."""

from __future__ import annotations

import struct
import time
from dataclasses import replace
from pathlib import Path

import pytest
import pyvips

from assetgate.errors import AppError
from assetgate.imaging.jpeg_header import read_file_scans, read_scans
from assetgate.imaging.load import probe
from tests.imaging import factory as make
from tests.imaging.decode_limits import LIMITS

MANY = 10**6


def _vips_jpeg(**options: object) -> bytes:
    image = make.quadrants(64, 48)
    vips = pyvips.Image.new_from_memory(image.tobytes(), 64, 48, 3, "uchar")
    return bytes(vips.jpegsave_buffer(**options))


def test_real_encoders_write_one_or_about_ten_scans() -> None:
    assert read_scans(make.jpeg(), stop_after=MANY).count == 1
    assert read_scans(_vips_jpeg(restart_interval=1), stop_after=MANY).count == 1
    assert read_scans(_vips_jpeg(interlace=True), stop_after=MANY).count == 10
    assert read_scans(_vips_jpeg(interlace=True, restart_interval=1), stop_after=MANY).count == 10
    grey = make.pillow_bytes(make.quadrants(64, 48).convert("L"), "JPEG", progressive=True)
    assert read_scans(grey, stop_after=MANY).count == 6


def test_the_scan_bomb_is_counted_scan_by_scan() -> None:
    data = make.scan_bomb_jpeg(64, 64)
    assert pyvips.Image.new_from_buffer(data, "", fail_on="warning").avg() == 128  # valid
    assert read_scans(data, stop_after=MANY).count == 3 * (1 + 63 * 14)
    assert read_scans(make.scan_bomb_jpeg(64, 64, components=1), stop_after=MANY).count == 883
    assert read_scans(data, stop_after=100).count == 101  # stops as soon as the limit is passed


def test_a_thumbnail_inside_exif_is_not_counted() -> None:
    """An APP1 segment may hold a whole JPEG (scans and all): skipped by its length."""
    thumbnail = _vips_jpeg(interlace=True)
    progressive = _vips_jpeg(interlace=True)
    app1 = b"\xff\xe1" + struct.pack(">H", len(thumbnail) + 8) + b"Exif\x00\x00" + thumbnail
    assert read_scans(progressive[:2] + app1 + progressive[2:], stop_after=MANY).count == 10


def test_fill_bytes_and_garbage_between_segments_are_skipped_as_libjpeg_does() -> None:
    data = _vips_jpeg(interlace=True)
    second_scan = data.index(b"\xff\xda", data.index(b"\xff\xda") + 2)
    filled = data[:second_scan] + b"\xff\xff\xff" + data[second_scan:]
    assert read_scans(filled, stop_after=MANY).count == 10
    garbage = data[:second_scan] + b"\x12\x00\x34" + data[second_scan:]
    assert read_scans(garbage, stop_after=MANY).count == 10


def test_nothing_after_eoi_counts() -> None:
    """A second image appended after EOI (MPO, motion photos) is not decoded by libjpeg."""
    data = _vips_jpeg(interlace=True)
    assert read_scans(data + make.scan_bomb_jpeg(16, 16), stop_after=MANY).count == 10


@pytest.mark.parametrize("keep", [0, 1, 2, 3, 4, 7, 20, 100, 300, 1000])
def test_cut_or_malformed_input_never_raises(keep: int) -> None:
    data = make.scan_bomb_jpeg(16, 16)
    assert 0 <= read_scans(data[:keep], stop_after=MANY).count <= 2649
    assert read_scans(b"\xff\xd8\xff\xc4\x00\x00" + data[keep:], stop_after=MANY).count >= 0
    assert read_scans(b"\xff\xd8\xff\xda\x00", stop_after=MANY).count == 0  # no length: no scan
    assert read_scans(b"\xff\xd8\xff\xda\x00\x08\x01", stop_after=MANY).count == 1
    assert read_scans(b"GIF89a", stop_after=MANY).count == 0


def test_a_file_is_counted_through_a_memory_map(tmp_path: Path) -> None:
    path = tmp_path / "bomb.jpg"
    path.write_bytes(make.scan_bomb_jpeg(64, 64))
    assert read_file_scans(path, stop_after=MANY).count == 2649
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    assert read_file_scans(empty, stop_after=MANY).count == 0


@pytest.mark.parametrize("as_file", [False, True])
def test_probe_refuses_the_scan_bomb_with_413_before_libjpeg(as_file: bool, tmp_path: Path) -> None:
    """4096x4096 with 2,649 scans: ~10 CPU-s to decode; refused from its 200 KB of markers."""
    data = make.scan_bomb_jpeg()
    path = tmp_path / "bomb.jpg"
    path.write_bytes(data)
    started = time.process_time()  # work done, not wall time: a busy machine keeps it
    with pytest.raises(AppError) as caught:
        probe(path if as_file else data, "jpeg", LIMITS)
    assert time.process_time() - started < 1.0  # CPU-s; libjpeg would spend ~10
    assert caught.value.status == 413
    assert "more than 100" in caught.value.message
    allowed = probe(data, "jpeg", replace(LIMITS, max_scans=3000))  # configurable
    assert (allowed.width, allowed.height) == (4096, 4096)


def test_probe_accepts_a_real_progressive_photo() -> None:
    info = probe(_vips_jpeg(interlace=True), "jpeg", replace(LIMITS, max_scans=10))
    assert (info.width, info.height) == (64, 48)


def test_a_complete_progression_and_an_early_end() -> None:
    data = make.progressive_jpeg(64, 48)
    whole = read_scans(data, stop_after=MANY)
    assert (whole.progressive, whole.complete, whole.ended, whole.truncated) == (
        True,
        True,
        True,
        False,
    )
    assert not read_scans(data[:-2], stop_after=MANY).truncated  # only the EOI missing
    for scans in range(1, 10):
        cut = read_scans(make.cut_between_scans(data, scans), stop_after=MANY)
        assert cut.count == scans
        assert not cut.complete
        assert cut.truncated, scans
        # The same scans closed with an EOI: an encoder that ended its progression early.
        assert not read_scans(
            make.cut_between_scans(data, scans) + b"\xff\xd9", stop_after=MANY
        ).truncated
    baseline = read_scans(make.jpeg(), stop_after=MANY)
    assert (baseline.progressive, baseline.complete, baseline.truncated) == (False, True, False)
