"""The HEIF/AVIF box parser: the primary item's claimed size, and None (never an exception, never
a read past the buffer, never an unbounded walk) for whatever is cut, looping or oversized."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import pytest
import pyvips

from assetgate.imaging.heif_header import MAX_BOXES, primary_image_size, read_meta
from tests.imaging import factory as make


def _box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def _full(kind: bytes, payload: bytes, version: int = 0, flags: int = 0) -> bytes:
    return _box(kind, bytes([version]) + flags.to_bytes(3, "big") + payload)


def _heif(*, primary: int = 1, ipma: bytes | None = None, pitm_version: int = 0) -> bytes:
    """A minimal HEIF container: item 2 is a 10x10 thumbnail, item 1 claims 300x200."""
    ipco = _box(
        b"ipco",
        _full(b"ispe", struct.pack(">II", 300, 200))
        + _full(b"ispe", struct.pack(">II", 10, 10))
        + _box(b"pixi", b"\x00\x00\x00\x00\x01\x08"),
    )
    if ipma is None:  # item 1 -> properties 1 and 3 (essential bit set on 1); item 2 -> 2
        ipma = _full(b"ipma", struct.pack(">IHB2BHB1B", 2, 1, 2, 0x81, 3, 2, 1, 2))
    item = struct.pack(">I", primary) if pitm_version else struct.pack(">H", primary)
    meta = _full(
        b"meta",
        _full(b"hdlr", b"\x00" * 4 + b"pict" + b"\x00" * 13)
        + _full(b"pitm", item, version=pitm_version)
        + _box(b"iprp", ipco + ipma),
    )
    return _box(b"ftyp", b"heic\x00\x00\x00\x00mif1heic") + meta + _box(b"mdat", b"\x00" * 32)


def test_a_real_heic_and_avif_report_the_coded_size_of_the_primary_item() -> None:
    assert primary_image_size(make.heic(64, 64)) == (64, 64)
    assert primary_image_size(make.avif(300, 200)) == (300, 200)
    width, height = primary_image_size(make.heic(64, 48)) or (0, 0)
    assert width >= 64  # the coded size; clap crops it for display
    assert height >= 48


def test_the_primary_items_ispe_is_chosen_among_others() -> None:
    assert primary_image_size(_heif()) == (300, 200)
    assert primary_image_size(_heif(primary=2)) == (10, 10)
    assert primary_image_size(_heif(primary=2, pitm_version=1)) == (10, 10)
    assert primary_image_size(_heif(primary=3)) is None  # no item 3
    wide = _full(b"ipma", struct.pack(">IIBH", 1, 1, 1, 0x8001), version=1, flags=1)
    assert primary_image_size(_heif(ipma=wide)) == (300, 200)  # 32-bit IDs, 15-bit indexes


def test_the_bombs_claim_200_mp_where_libvips_sees_little_or_nothing() -> None:
    side = make.HEIF_BOMB_SIDE
    heic, avif = make.bomb_heic(), make.bomb_avif()
    assert primary_image_size(heic) == (side, side)
    assert primary_image_size(avif) == (side, side)
    # Why libvips' header read is not enough: the crop box hides the claim, and a cut mdat
    # stops libheif before it reports any size.
    assert pyvips.Image.new_from_buffer(heic, "").width == 64
    with pytest.raises(pyvips.Error):
        pyvips.Image.new_from_buffer(avif, "")


@pytest.mark.parametrize("build", [make.heic, make.avif, _heif])
def test_every_prefix_is_none_until_the_meta_box_is_whole(build: Callable[[], bytes]) -> None:
    data = build()
    full = primary_image_size(data)
    assert full is not None
    meta = data.find(b"meta") - 4
    meta_end = meta + struct.unpack_from(">I", data, meta)[0]
    for cut in range(len(data) + 1):
        assert primary_image_size(data[:cut]) == (full if cut >= meta_end else None), cut


def test_every_byte_of_a_real_meta_box_may_be_corrupted() -> None:
    data = make.heic(64, 64)
    meta_end = data.find(b"mdat") - 4
    for index in range(meta_end):
        for value in (0x00, 0x01, 0x7F, 0xFF):
            damaged = data[:index] + bytes([value]) + data[index + 1 :]
            size = primary_image_size(damaged)
            assert size is None or all(isinstance(side, int) and side >= 0 for side in size)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00\x00\x00",
        _box(b"meta", b""),  # too short for a FullBox
        struct.pack(">I4s", 0xFFFFFFFF, b"meta") + b"\x00" * 64,  # larger than the buffer
        struct.pack(">I4sQ", 1, b"meta", 2**63) + b"\x00" * 64,  # 64-bit size, oversized
        struct.pack(">I4sQ", 1, b"meta", 4) + b"\x00" * 64,  # 64-bit size below its header
        struct.pack(">I4s", 4, b"free") + _heif(),  # a size below the header stops the walk
        struct.pack(">I4s", 7, b"free") * 100,
        _box(b"free", b"") * (MAX_BOXES + 10) + _heif(),  # meta past the visit bound
        _heif(ipma=_full(b"ipma", struct.pack(">I", 0xFFFFFFFF))),  # count with no entries
        _heif(ipma=_full(b"ipma", struct.pack(">IHB", 1, 1, 200) + b"\x01")),  # count > bytes
        _heif(ipma=_full(b"ipma", struct.pack(">IHBB", 1, 1, 1, 9))),  # index past ipco
        _heif(ipma=_full(b"ipma", struct.pack(">IHBB", 1, 1, 1, 3))),  # index of a non-ispe
        _heif(ipma=_full(b"ipma", struct.pack(">IHBB", 1, 1, 1, 0))),  # index 0: none
    ],
)
def test_cut_looping_or_oversized_boxes_are_none(data: bytes) -> None:
    assert primary_image_size(data) is None


def test_a_size_zero_box_runs_to_the_end_of_its_container() -> None:
    data = _heif()
    meta = data.find(b"meta") - 4
    open_ended = data[:meta] + b"\x00\x00\x00\x00" + data[meta + 4 : data.find(b"mdat") - 4]
    assert primary_image_size(open_ended) == (300, 200)


def test_read_meta_finds_the_box_after_a_large_mdat(tmp_path: Path) -> None:
    data = _heif()
    mdat = data.find(b"mdat") - 4
    ftyp_end = data.find(b"meta") - 4
    path = tmp_path / "late.heic"
    big_mdat = struct.pack(">I4sQ", 1, b"mdat", 16 + 2_000_000) + b"\x00" * 2_000_000
    path.write_bytes(data[:ftyp_end] + big_mdat + data[ftyp_end:mdat])
    meta = read_meta(path)
    assert meta[4:8] == b"meta"
    assert primary_image_size(meta) == (300, 200)


def test_read_meta_refuses_a_meta_box_over_the_bound_and_a_cut_file(tmp_path: Path) -> None:
    huge = tmp_path / "huge.heic"
    with huge.open("wb") as handle:
        handle.write(struct.pack(">I4s", 5 * 1024 * 1024, b"meta"))
        handle.truncate(5 * 1024 * 1024)  # sparse: nothing large is written
    assert read_meta(huge) == b""
    cut = tmp_path / "cut.heic"
    cut.write_bytes(_heif()[:40])
    assert read_meta(cut) == b""
