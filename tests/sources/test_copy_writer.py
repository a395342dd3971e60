"""The source cache's copy writer: hashed on the event loop, written at offsets by threads."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import pytest

from assetgate.serving.versions import fingerprint_bytes
from assetgate.sources.copy_writer import WRITES_AHEAD, HashingFile

pytestmark = pytest.mark.anyio

PIECE = 512 * 1024


async def test_a_copy_is_written_whole_and_hashed_while_it_streams(tmp_path: Path) -> None:
    data = os.urandom(3 * 1024 * 1024 + 5)
    sink = HashingFile(tmp_path / "copy")
    for start in range(0, len(data), PIECE):
        await sink.write(memoryview(data)[start : start + PIECE])
    await sink.close()
    assert (tmp_path / "copy").read_bytes() == data
    assert sink.size == len(data)
    assert sink.digest.hexdigest() == fingerprint_bytes(data)


async def test_a_cancelled_copy_never_writes_after_its_file_is_closed(tmp_path: Path) -> None:
    # A client hanging up cancels the fetch while worker threads still write: closing the
    # descriptor under them would lose bytes (EBADF) or, once its number is reused, write into
    # another file. A cancelled close returns once no write is running; each piece is on disk
    # whole or not at all, and a file opened next (the freed descriptor number) stays untouched.
    data = os.urandom(24 * 1024 * 1024)
    sink = HashingFile(tmp_path / "copy")
    for start in range(0, len(data), PIECE):
        await sink.write(memoryview(data)[start : start + PIECE])
    await asyncio.sleep(0.002)  # some writes running, some not started
    closing = asyncio.get_running_loop().create_task(sink.close())
    await asyncio.sleep(0)
    closing.cancel()
    with contextlib.suppress(asyncio.CancelledError):  # done already when no write was running
        await closing
    other = os.open(tmp_path / "other", os.O_RDWR | os.O_CREAT)
    try:
        await asyncio.sleep(0.2)
        assert os.fstat(other).st_size == 0
    finally:
        os.close(other)
    copy = (tmp_path / "copy").read_bytes().ljust(len(data), b"\0")
    pieces = [(copy[at : at + PIECE], data[at : at + PIECE]) for at in range(0, len(data), PIECE)]
    assert all(got in (want, bytes(len(want))) for got, want in pieces)
    assert any(got == want for got, want in pieces)


async def test_a_cancelled_close_returns_only_once_no_thread_writes(tmp_path: Path) -> None:
    # Large pieces, cancelled while their threads write: the file must not change after the
    # cancelled close returned (gather, cancelled, cancels the write tasks but not their threads).
    data = os.urandom(4 * 8 * 1024 * 1024)
    for attempt in range(20):
        path = tmp_path / f"copy{attempt}"
        sink = HashingFile(path)
        for start in range(0, len(data), len(data) // 4):
            await sink.write(memoryview(data)[start : start + len(data) // 4])
        await asyncio.sleep(0.001)  # the threads are writing
        closing = asyncio.get_running_loop().create_task(sink.close())
        await asyncio.sleep(0)
        closing.cancel()
        with contextlib.suppress(asyncio.CancelledError):  # unless the writes were done already
            await closing
        closed = os.stat(path)
        await asyncio.sleep(0.05)
        later = os.stat(path)
        assert (later.st_size, later.st_blocks) == (closed.st_size, closed.st_blocks), attempt
        path.unlink()


async def test_a_copy_never_holds_more_than_a_few_chunks_for_the_disk(tmp_path: Path) -> None:
    # A network faster than the disk must slow down, not pile a 100 MB source up in memory.
    data = os.urandom(32 * 1024 * 1024)
    sink = HashingFile(tmp_path / "copy")
    most = 0
    for start in range(0, len(data), PIECE):
        await sink.write(memoryview(data)[start : start + PIECE])
        most = max(most, len(sink.behind()))
    await sink.close()
    assert most <= WRITES_AHEAD
    assert (tmp_path / "copy").read_bytes() == data
