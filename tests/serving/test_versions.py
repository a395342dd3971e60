"""File versions of real files: content fingerprints, remembered per stat identity, bounded."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import anyio
import blake3
import pytest

from assetgate.errors import AppError
from assetgate.serving.prepared import Prepared
from assetgate.serving.versions import (
    MAX_VARIANTS,
    FileVersions,
    Fingerprint,
    fingerprint_bytes,
    stat_key,
)

pytestmark = pytest.mark.anyio


def blake(data: bytes) -> str:
    return blake3.blake3(data).hexdigest(length=16)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_the_fingerprint_is_blake3_cut_to_128_bits_whole_or_piece_by_piece() -> None:
    # BLAKE3's published answer for the empty input (its first 16 bytes): every node, every
    # version of the package, and a file hashed whole or as it streams agree.
    assert fingerprint_bytes(b"") == "af1349b9f5f9a1a6a0404dea36dcc949"
    data = os.urandom(3 * 1024 * 1024 + 17)
    pieces = Fingerprint()
    for start in range(0, len(data), 512 * 1024):
        pieces.update(memoryview(data)[start : start + 512 * 1024])
    assert pieces.hexdigest() == fingerprint_bytes(data)
    assert len(fingerprint_bytes(data)) == 32


async def identify(sources: FileVersions, path: Path) -> tuple[str, bytes | None]:
    source = await sources.identify(path, os.stat(path))
    return source.fingerprint, source.body


async def test_copies_on_two_roots_share_one_fingerprint(tmp_path: Path) -> None:
    """Other inodes and other mtimes: the fingerprint is the content's."""
    data = os.urandom(5000)
    first = write(tmp_path / "a" / "logo.png", data)
    second = tmp_path / "b" / "logo.png"
    second.parent.mkdir()
    shutil.copyfile(first, second)
    os.utime(second, ns=(0, 10**18))
    assert os.stat(first).st_ino != os.stat(second).st_ino
    one, two = FileVersions(body_budget_bytes=1 << 20), FileVersions(body_budget_bytes=1 << 20)
    assert (await identify(one, first))[0] == (await identify(two, second))[0] == blake(data)
    other = write(tmp_path / "c" / "logo.png", data[:-1] + bytes([data[-1] ^ 1]))
    assert (await identify(one, other))[0] != blake(data)


async def test_a_settled_version_is_read_once(tmp_path: Path) -> None:
    path = write(tmp_path / "f.css", b"body{}" * 100)
    sources = FileVersions(body_budget_bytes=1 << 20, settle_s=0)
    for _ in range(3):
        fingerprint, body = await identify(sources, path)
    assert sources.fingerprinted == 1
    assert body == b"body{}" * 100
    assert fingerprint == blake(body)


async def test_a_just_written_file_is_not_remembered(tmp_path: Path) -> None:
    """Timestamps tick coarsely: a version younger than ``settle_s`` is hashed per request."""
    path = write(tmp_path / "f.css", b"a{}")
    sources = FileVersions(body_budget_bytes=1 << 20, settle_s=60)
    await identify(sources, path)
    await identify(sources, path)
    assert sources.fingerprinted == 2
    assert len(sources) == 0


async def test_a_rewrite_keeping_size_and_mtime_gets_a_new_fingerprint(tmp_path: Path) -> None:
    path = write(tmp_path / "f.js", b"var a = 1;")
    sources = FileVersions(body_budget_bytes=1 << 20, settle_s=0)
    old = os.stat(path)
    assert (await identify(sources, path))[0] == blake(b"var a = 1;")
    time.sleep(0.05)  # let the coarse kernel clock tick, as any real rewrite does
    path.write_bytes(b"var b = 2;")
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
    new = os.stat(path)
    assert (new.st_size, new.st_mtime_ns) == (old.st_size, old.st_mtime_ns)
    assert stat_key(new) != stat_key(old)  # ctime moved
    assert await identify(sources, path) == (blake(b"var b = 2;"), b"var b = 2;")


async def test_a_file_changed_after_its_stat_is_answered_as_read_but_not_remembered(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "f.txt", b"small")
    sources = FileVersions(body_budget_bytes=1 << 20, small_file_bytes=64, settle_s=0)
    info = os.stat(path)
    time.sleep(0.05)
    grown = os.urandom(1000)  # now past the small-file limit: hashed on a thread
    path.write_bytes(grown)
    source = await sources.identify(path, info)
    assert (source.fingerprint, source.size, source.body) == (blake(grown), 1000, None)
    assert len(sources) == 0


async def test_memory_for_bodies_is_bounded(tmp_path: Path) -> None:
    sources = FileVersions(body_budget_bytes=250, small_file_bytes=200, settle_s=0)
    files = [write(tmp_path / f"{n}.txt", bytes([n]) * 100) for n in range(5)]
    for path in files:
        await identify(sources, path)
        assert sources.body_bytes <= 250
    big = write(tmp_path / "big.txt", b"x" * 190)  # fits the small limit, not the free budget
    assert await identify(sources, big) == (blake(b"x" * 190), b"x" * 190)
    assert sources.body_bytes == 190
    huge = write(tmp_path / "huge.txt", b"y" * 10_000)  # over the small limit: no body
    assert await identify(sources, huge) == (blake(b"y" * 10_000), None)
    before = sources.fingerprinted
    assert (await identify(sources, huge))[0] == blake(b"y" * 10_000)
    assert sources.fingerprinted == before  # remembered without its bytes


async def test_the_number_of_versions_is_bounded(tmp_path: Path) -> None:
    sources = FileVersions(body_budget_bytes=1 << 20, max_files=2, settle_s=0)
    for n in range(5):
        await identify(sources, write(tmp_path / f"{n}.txt", bytes([n])))
    assert len(sources) == 2


async def test_concurrent_first_requests_for_a_large_file_hash_it_once(tmp_path: Path) -> None:
    data = os.urandom(3 * 1024 * 1024)
    path = write(tmp_path / "movie.bin", data)
    sources = FileVersions(body_budget_bytes=1 << 20, settle_s=0)
    info = os.stat(path)
    found: list[str] = []

    async def one() -> None:
        found.append((await sources.identify(path, info)).fingerprint)

    async with anyio.create_task_group() as group:
        for _ in range(6):
            group.start_soon(one)
    assert found == [blake(data)] * 6
    assert sources.fingerprinted == 1


async def test_a_file_gone_since_its_stat_is_a_404(tmp_path: Path) -> None:
    path = write(tmp_path / "gone.txt", b"x")
    info = os.stat(path)
    path.unlink()
    with pytest.raises(AppError) as caught:
        await FileVersions(body_budget_bytes=0).identify(path, info)
    assert caught.value.status == 404


async def test_prepared_answers_per_version_are_bounded(tmp_path: Path) -> None:
    path = write(tmp_path / "f.css", b"a{}")
    source = await FileVersions(body_budget_bytes=1 << 20).identify(path, os.stat(path))
    built: list[int] = []

    def build(n: int) -> Prepared:
        built.append(n)
        return Prepared.build(f'"{n}"', source.mtime, {"ETag": f'"{n}"'})

    for n in range(MAX_VARIANTS * 2):
        assert source.prepare(n, lambda _s, n=n: build(n)).etag == f'"{n}"'
    assert len(source.blocks) == MAX_VARIANTS
    assert source.prepare(0, lambda _s: build(-1)).etag == '"0"'  # kept: not built again
    assert built[-1] == MAX_VARIANTS * 2 - 1
