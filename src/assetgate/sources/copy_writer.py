"""Writing one copy to this machine's disk: hashed while it streams, dated as its object, and the
partial downloads a stopped run left swept away (``sources.copies`` decides which copy to write).

A partial download is ``tmp/<pid>.<random>.part`` under the copies' directory; several processes
may share that directory (``--workers N``), so a live sibling's parts are left alone.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import time
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Final

import anyio.to_thread

from assetgate.serving.versions import Fingerprint
from assetgate.sources.remote import WriteFailed

WRITES_AHEAD: Final = 4  # chunks a copy's writer may fall behind the stream: the memory it holds
#: A partial download older than this belongs to no running fetch (each has a read deadline).
STALE_PART_S: Final = 3600.0
FULL_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EDQUOT})


class DiskFull(Exception):
    """The copy could not be written: no space left (carries the bytes written until then)."""

    def __init__(self, written: int) -> None:
        super().__init__(written)
        self.written = written


class HashingFile:
    """Writes a copy and hashes it on the way, so the copy is never read again to be fingerprinted
    and the disk never holds up the network: each chunk is hashed on the event loop (BLAKE3, ~0.1
    ms per 512 KB) and written at its offset by a worker thread while the next chunk arrives. At
    most ``WRITES_AHEAD`` chunks wait for the disk: a network faster than the disk is slowed down,
    not buffered in memory (a 100 MB source, sixteen at once)."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.digest = Fingerprint()
        self.size = 0
        self._writes: list[asyncio.Task[None]] = []

    async def write(self, chunk: bytes | memoryview) -> None:
        self.digest.update(chunk)
        offset, self.size = self.size, self.size + len(chunk)
        pwrite = anyio.to_thread.run_sync(_write_at, self.fd, chunk, offset)
        self._writes.append(asyncio.get_running_loop().create_task(pwrite))
        behind = self.behind()
        if len(behind) > WRITES_AHEAD:  # wait for the oldest; a cancelled wait leaves them be
            await asyncio.wait(behind[: len(behind) - WRITES_AHEAD])
        try:
            self._settle()  # a disk error ends the copy now (``close`` still waits for the rest)
        except OSError as exc:
            raise WriteFailed(exc) from exc

    def _settle(self) -> None:
        """Drop the finished writes; the first that failed raises its error."""
        first: BaseException | None = None
        for done in [write for write in self._writes if write.done()]:
            error = None if done.cancelled() else done.exception()  # each one retrieved
            self._writes.remove(done)
            first = first or error
        if first is not None:
            raise first

    def behind(self) -> list[asyncio.Task[None]]:
        """The writes not finished yet, oldest first."""
        return [write for write in self._writes if not write.done()]

    async def close(self) -> None:
        """Wait for every write, then close the file. A write's thread is never abandoned (a
        cancelled wait still waits for it), so none meets a closed or reused descriptor."""
        cancelled: asyncio.CancelledError | None = None
        while running := self.behind():
            try:  # not ``gather``: cancelled, it cancels the tasks and leaves their threads running
                await asyncio.wait(running)
            except asyncio.CancelledError as exc:
                cancelled = exc
        os.close(self.fd)
        if cancelled is not None:
            raise cancelled
        self._settle()


def _write_at(fd: int, chunk: bytes | memoryview, offset: int) -> None:
    view = memoryview(chunk)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


def date_from(path: Path, last_modified: str | None) -> None:
    """The copy's mtime is the object's Last-Modified: every node sends the same one."""
    if not last_modified:
        return
    try:
        stamp = parsedate_to_datetime(last_modified).timestamp()
        os.utime(path, (stamp, stamp))
    except (TypeError, ValueError, OverflowError, OSError):
        return


def free_bytes(path: Path) -> int:
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return 0


def sweep_partials(tmp: Path) -> int:
    """Remove the partial downloads whose process is gone or that are older than any fetch;
    how many. Another live process's are left alone (several may share the directory)."""
    removed = 0
    try:
        parts = list(tmp.glob("*.part"))
    except OSError:
        return 0
    now = time.time()
    for part in parts:
        owner = part.name.partition(".")[0]
        try:
            alive = owner.isdigit() and _alive(int(owner))
            if alive and now - part.stat().st_mtime < STALE_PART_S:
                continue
            part.unlink()
        except OSError:
            continue
        removed += 1
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process has fetched nothing yet: a previous run's number
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
