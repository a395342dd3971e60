"""The disk tier: shared by processes; a disk that cannot write is no error."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import anyio.to_thread
import pytest

from assetgate.cache import Cache, DiskTier, bytes_codec
from assetgate.cache.entry import HEADER

pytestmark = pytest.mark.anyio

# Runs in another process: the same cache over the same directory, printing what it got.
CHILD = textwrap.dedent(
    """
    import asyncio, os, resource, signal, sys
    from pathlib import Path
    from assetgate.cache import Cache, DiskTier, bytes_codec

    root, key, value, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3].encode(), sys.argv[4]
    if mode == "full":  # the file system refuses more than 64 bytes per file: a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
    if mode == "nobody":  # a directory this process may read but not write
        os.setgid(65534)
        os.setuid(65534)

    async def main() -> None:
        cache = Cache("t", bytes_codec(), memory_bytes=1 << 20, disk=DiskTier(root, 1 << 20))

        async def compute() -> bytes:
            return value

        got, hit = await cache.get_or_compute(key, compute)
        print(got.decode(), "HIT" if hit else "MISS")

    asyncio.run(main())
    """
)


def run_child(root: Path, key: str, value: str, mode: str = "plain") -> str:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), key, value, mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def make(root: Path, budget: int = 1 << 20) -> Cache[bytes]:
    return Cache("t", bytes_codec(), memory_bytes=1 << 20, disk=DiskTier(root, budget))


async def never() -> bytes:
    raise AssertionError("computed although the disk held the entry")


async def test_two_processes_share_one_directory(tmp_path: Path) -> None:
    assert run_child(tmp_path, "k", "from-the-child") == "from-the-child MISS"
    assert run_child(tmp_path, "k", "other") == "from-the-child HIT"
    assert await make(tmp_path).get_or_compute("k", never) == (b"from-the-child", True)


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
async def test_a_damaged_entry_file_is_a_miss_and_is_removed(tmp_path: Path, damage: str) -> None:
    first = make(tmp_path)

    async def original() -> bytes:
        return b"A" * 1000

    await first.get_or_compute("k", original)
    path = first.disk.path_for("t:k") if first.disk else None
    assert path is not None
    assert path.stat().st_size == HEADER.size + 1000
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[:-10])
    elif damage == "flip":
        path.write_bytes(data[:-1] + b"B")  # same length, wrong checksum
    else:
        path.write_bytes(b"")

    async def fresh() -> bytes:
        return b"fresh"

    assert await make(tmp_path).get_or_compute("k", fresh) == (b"fresh", False)
    assert path.read_bytes().endswith(b"fresh")  # the bad file was replaced, never served


async def test_a_miss_waits_for_no_worker_thread(tmp_path: Path) -> None:
    """Node B's path (docs/sources.md): a variant not on this disk goes on to the next tier at
    once, even while every worker thread is busy (rendering); a held entry is still read."""
    cache = make(tmp_path)
    await cache.put("held", b"on disk")
    cache.memory.clear()
    limiter = anyio.to_thread.current_default_thread_limiter()
    busy = object()
    tokens = limiter.total_tokens
    limiter.total_tokens = 1
    await limiter.acquire_on_behalf_of(busy)
    try:
        with anyio.fail_after(2):
            assert await cache.find("absent") is None
        with anyio.move_on_after(0.2) as waited:
            await cache.find("held")
        assert waited.cancelled_caught  # reading a held entry is a worker thread's job
    finally:
        limiter.release_on_behalf_of(busy)
        limiter.total_tokens = tokens
    assert await cache.find("held") == b"on disk"


async def test_an_expired_entry_is_a_miss(tmp_path: Path) -> None:
    cache = Cache("t", bytes_codec(), memory_bytes=1 << 20, disk=DiskTier(tmp_path, 1 << 20))
    await cache.put("k", b"old")
    assert cache.disk is not None
    path = cache.disk.path_for("t:k")
    data = bytearray(path.read_bytes())
    magic, _, length, digest = HEADER.unpack_from(data)
    HEADER.pack_into(data, 0, magic, 1.0, length, digest)  # expired in 1970
    path.write_bytes(bytes(data))

    async def fresh() -> bytes:
        return b"new"

    assert await make(tmp_path).get_or_compute("k", fresh) == (b"new", False)


async def test_an_unusable_directory_serves_without_caching_and_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    cache = make(blocker / "cache")  # a directory under a regular file can never be created
    calls = 0

    async def compute() -> bytes:
        nonlocal calls
        calls += 1
        return b"v"

    with caplog.at_level(logging.WARNING, logger="assetgate.cache"):
        for key in ("a", "b", "c"):
            assert await cache.get_or_compute(key, compute) == (b"v", False)
    assert calls == 3
    warnings = [r for r in caplog.records if "not writable" in r.getMessage()]
    assert len(warnings) == 1
    assert str(blocker) in warnings[0].getMessage()


def test_a_full_disk_serves_without_caching(tmp_path: Path) -> None:
    assert run_child(tmp_path, "k", "x" * 500, "full") == "x" * 500 + " MISS"
    assert run_child(tmp_path, "k", "second", "plain") == "second MISS"  # nothing was kept
    assert not list((tmp_path / "tmp").iterdir())  # and no half-written file is left behind


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can reach (pytest's own tmp_path is private to its owner)."""
    folder = Path(tempfile.mkdtemp(prefix="assetgate-ro-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for inner, _, _ in os.walk(folder):
            os.chmod(inner, 0o755)
        shutil.rmtree(folder)


def test_a_read_only_directory_still_serves_its_entries(shared_dir: Path) -> None:
    root = shared_dir / "cache"
    assert run_child(root, "k", "kept") == "kept MISS"
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o555)
        for name in files:
            os.chmod(Path(folder) / name, 0o444)
    # root ignores permissions, so as root the child drops to "nobody" first
    reader = "nobody" if os.geteuid() == 0 else "plain"
    assert run_child(root, "k", "other", reader) == "kept HIT"
    assert run_child(root, "new", "fresh", reader) == "fresh MISS"
    assert run_child(root, "new", "again", reader) == "again MISS"  # nothing could be kept


def test_sweep_removes_least_recently_used_files_past_the_budget(tmp_path: Path) -> None:
    tier = DiskTier(tmp_path, budget_bytes=10_000)
    for index in range(5):
        assert tier.write(f"k{index}", b"x" * 2_000)
        os.utime(tier.path_for(f"k{index}"), (1_000_000 + index, 1_000_000 + index))
    os.utime(tier.path_for("k0"), (2_000_000, 2_000_000))  # read recently
    assert tier.write("k5", b"x" * 2_000)  # 12,000 bytes: over the budget
    kept = sorted(key for key in (f"k{i}" for i in range(6)) if tier.path_for(key).exists())
    assert kept == ["k0", "k3", "k4", "k5"]
    assert tier.used_bytes == 8_000
