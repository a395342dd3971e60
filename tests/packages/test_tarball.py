"""Hostile and odd archives against the real unpacker and store (no HTTP)."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from pathlib import Path

import pytest

from assetgate.errors import AppError
from assetgate.packages.store import Store
from assetgate.packages.tarball import TarballLimits, clean_member_name, unpack
from tests.packages.upstream import make_tarball


def write(tmp_path: Path, data: bytes) -> Path:
    target = tmp_path / "in.tgz"
    target.write_bytes(data)
    return target


def add(archive: tarfile.TarFile, name: str, data: bytes = b"", **attrs: object) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in attrs.items():
        setattr(info, key, value)
    archive.addfile(info, io.BytesIO(data) if data else None)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "store", 1 << 30)


def blob_count(store: Store) -> int:
    return sum(1 for p in store.blobs_dir.rglob("*") if p.is_file())


def test_regular_package_unpacks_and_dedupes(tmp_path: Path, store: Store) -> None:
    files = {
        "package.json": b'{"main":"a.js"}',
        "a.js": b"same",
        "dist/b.js": b"same",
        "LICENSE": b"MIT",
    }
    unpacked = unpack(write(tmp_path, make_tarball(files)), store.new_sink())
    assert set(unpacked.files) == set(files)
    assert unpacked.manifest == files["package.json"]
    assert unpacked.files["a.js"].sha256 == unpacked.files["dist/b.js"].sha256
    assert unpacked.files["a.js"].blob.endswith(".js")
    assert blob_count(store) == 3


def test_any_first_segment_is_stripped_and_rootless_entries_ignored(
    tmp_path: Path, store: Store
) -> None:
    def extra(archive: tarfile.TarFile) -> None:
        add(archive, "toplevel.js", b"ignored")

    data = make_tarball({"index.d.ts": b"x"}, root="node", extra=extra)
    assert set(unpack(write(tmp_path, data), store.new_sink()).files) == {"index.d.ts"}


def test_traversal_absolute_links_and_devices_are_skipped(tmp_path: Path, store: Store) -> None:
    def hostile(archive: tarfile.TarFile) -> None:
        add(archive, "package/../../evil.js", b"evil1")
        add(archive, "../evil2.js", b"evil2")
        add(archive, "/abs/evil3.js", b"evil3")
        add(archive, "package/a\\..\\evil4.js", b"evil4")
        add(archive, "C:/evil5.js", b"evil5")
        add(archive, "package/link.js", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        add(archive, "package/hard.js", type=tarfile.LNKTYPE, linkname="package/ok.js")
        add(archive, "package/dev", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
        add(archive, "package/fifo", type=tarfile.FIFOTYPE)
        add(archive, "package/dir", type=tarfile.DIRTYPE)
        info = tarfile.TarInfo("package/innocent.js")
        info.pax_headers = {"path": "package/../../../pax-evil.js"}
        info.size = 4
        archive.addfile(info, io.BytesIO(b"pax!"))

    data = make_tarball({"ok.js": b"fine"}, extra=hostile)
    unpacked = unpack(write(tmp_path, data), store.new_sink())
    assert set(unpacked.files) == {"ok.js"}
    written = {p.read_bytes() for p in store.blobs_dir.rglob("*") if p.is_file()}
    assert written == {b"fine"}
    leaked = [p for p in tmp_path.rglob("*evil*")] + [p for p in tmp_path.parent.glob("*evil*")]
    assert leaked == []


def test_last_duplicate_wins_and_the_overwritten_blob_is_dropped(
    tmp_path: Path, store: Store
) -> None:
    def dup(archive: tarfile.TarFile) -> None:
        add(archive, "package/a.js", b"second")

    unpacked = unpack(
        write(tmp_path, make_tarball({"a.js": b"first"}, extra=dup)), store.new_sink()
    )
    assert unpacked.files["a.js"].size == len(b"second")
    assert {p.read_bytes() for p in store.blobs_dir.rglob("*") if p.is_file()} == {b"second"}


def test_gzip_bomb_is_stopped_and_nothing_is_left(tmp_path: Path, store: Store) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as archive:
        for index in range(40):
            add(archive, f"package/zeros{index}.bin", bytes(1024 * 1024))
    bomb = gzip.compress(raw.getvalue())
    assert len(bomb) * 100 < 40 * 1024 * 1024
    with pytest.raises(AppError) as caught:
        unpack(write(tmp_path, bomb), store.new_sink())
    assert caught.value.status == 413
    assert blob_count(store) == 0


@pytest.mark.parametrize(
    ("limits", "files"),
    [
        (TarballLimits(max_files=3), {f"f{i}.js": b"x" for i in range(5)}),
        (TarballLimits(max_file_bytes=10), {"big.js": b"x" * 11}),
        (TarballLimits(max_unpacked_bytes=15), {"a.js": b"x" * 8, "b.js": b"y" * 8}),
    ],
)
def test_caps(tmp_path: Path, store: Store, limits: TarballLimits, files: dict[str, bytes]) -> None:
    with pytest.raises(AppError) as caught:
        unpack(write(tmp_path, make_tarball(files)), store.new_sink(), limits)
    assert caught.value.status == 413
    assert blob_count(store) == 0


@pytest.mark.parametrize(
    "data",
    [
        b"not gzip at all",
        gzip.compress(b"not a tar" * 100, mtime=0),  # the same test id in every xdist worker
        make_tarball({"a.js": os.urandom(5000)})[:3000],
    ],
)
def test_broken_archives_are_502(tmp_path: Path, store: Store, data: bytes) -> None:
    with pytest.raises(AppError) as caught:
        unpack(write(tmp_path, data), store.new_sink())
    assert caught.value.status == 502
    assert blob_count(store) == 0


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("package/a.js", "a.js"),
        ("package/./dist//a.js", "dist/a.js"),
        ("a.js", None),
        ("package/", None),
        ("package/../a.js", None),
        ("/package/a.js", None),
        ("../package/a.js", None),
        ("package/a\x00.js", None),
        ("package/C:/a.js", None),
        ("package/" + "x" * 256, None),
    ],
)
def test_clean_member_name(name: str, expected: str | None) -> None:
    assert clean_member_name(name) == expected
