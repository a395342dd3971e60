"""The local-disk tier: one file per entry, in a directory every worker process of a machine shares.

Files plus an atomic rename, not a library: each entry is written to ``tmp/`` and renamed into
place, so a reader sees a whole old file or a whole new one, never a half-written one; the header
of ``entry`` (magic, expiry, length, BLAKE2b of the payload) makes a truncated or corrupt file a
miss, and the bad file is removed. Least recently used goes first: a hit refreshes the file's
mtime (at most once a minute) and a sweep, run by whichever process crosses an eighth of the
budget in writes (one at a time, under an ``flock``), deletes the oldest files until the
directory is at 90 % of its budget. A full or read-only disk only means "not cached": the error
is logged once and writes pause for a while; nothing is ever raised to the request. The methods
block: call them from a worker thread (``holds``, one ``stat``, excepted).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Final

from assetgate.cache.entry import unpack

log = logging.getLogger("assetgate.cache")

TOUCH_EVERY_S: Final = 60.0
PAUSE_AFTER_ERROR_S: Final = 30.0
SWEEP_TARGET: Final = 0.9
STALE_TMP_S: Final = 3600.0


class DiskTier:
    def __init__(self, root: Path, budget_bytes: int) -> None:
        self.root = root
        self.budget_bytes = budget_bytes
        self._tmp = root / "tmp"
        self._lock_path = root / ".sweep.lock"
        self._written = 0  # bytes this process wrote since its last sweep
        self._used: int | None = None  # bytes in the directory at the last sweep, plus writes
        self._paused_until = 0.0
        self._warned = False
        self._guard = threading.Lock()

    @property
    def used_bytes(self) -> int:
        return self._used or 0

    def path_for(self, key: str) -> Path:
        name = hashlib.blake2b(key.encode(), digest_size=20).hexdigest()
        return self.root / name[:2] / name

    def holds(self, key: str) -> bool:
        """Whether an entry file exists (one ``stat``: cheap enough for the event loop, so a miss
        costs no trip to a worker thread; ``read`` still decides whether it is intact)."""
        return os.path.exists(self.path_for(key))

    def read(self, key: str) -> tuple[float, bytes] | None:
        """(expires_at, payload) of an intact entry; a bad file is removed and is a miss."""
        path = self.path_for(key)
        try:
            with path.open("rb") as handle:
                data = handle.read()
                mtime = os.fstat(handle.fileno()).st_mtime
        except OSError:
            return None
        now = time.time()
        found = unpack(data, now)
        if found is None:
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        if now - mtime > TOUCH_EVERY_S:
            with contextlib.suppress(OSError):
                os.utime(path)
        return found

    def delete(self, key: str) -> bool:
        """Remove the entry's file (a purge); whether there was one."""
        try:
            size = self.path_for(key).stat().st_size
            self.path_for(key).unlink()
        except OSError:
            return False
        with self._guard:
            self._used = max(0, (self._used or 0) - size)
        return True

    def write(self, key: str, data: bytes) -> bool:
        """Store the packed entry ``data``; False (never an exception) when the disk cannot."""
        if len(data) > self.budget_bytes or time.monotonic() < self._paused_until:
            return False
        path = self.path_for(key)
        tmp = self._tmp / f"{uuid.uuid4().hex}.part"
        try:
            self._tmp.mkdir(parents=True, exist_ok=True)
            path.parent.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            self._pause(exc)
            return False
        with self._guard:
            first = self._used is None  # the directory's size is known after one sweep
            self._written += len(data)
            self._used = (self._used or 0) + len(data)
            due = first or self._written > self.budget_bytes // 8 or self._used > self.budget_bytes
        if due:
            self.sweep()
        return True

    def _pause(self, exc: OSError) -> None:
        self._paused_until = time.monotonic() + PAUSE_AFTER_ERROR_S
        if not self._warned:
            self._warned = True
            log.warning(
                "cache directory %s is not writable (%s); serving without caching",
                self.root,
                exc.strerror or exc,
            )

    def sweep(self) -> None:
        """Delete least recently used files until the directory is under its budget."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            lock = open(self._lock_path, "a")  # noqa: SIM115 - closed below
        except OSError as exc:
            self._pause(exc)
            return
        with lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return  # another process is sweeping
            entries, total = self._scan()
            if total > self.budget_bytes:
                target = self.budget_bytes * SWEEP_TARGET
                for _, size, path in sorted(entries):
                    if total <= target:
                        break
                    with contextlib.suppress(OSError):
                        os.unlink(path)
                        total -= size
        with self._guard:
            self._written = 0
            self._used = total

    def _scan(self) -> tuple[list[tuple[float, int, str]], int]:
        entries: list[tuple[float, int, str]] = []
        total = 0
        now = time.time()
        with contextlib.suppress(OSError), os.scandir(self.root) as top:
            for folder in top:
                if not folder.is_dir(follow_symlinks=False):
                    continue
                is_tmp = folder.name == "tmp"
                with contextlib.suppress(OSError), os.scandir(folder.path) as files:
                    for entry in files:
                        with contextlib.suppress(OSError):
                            info = entry.stat(follow_symlinks=False)
                            if is_tmp:
                                if now - info.st_mtime > STALE_TMP_S:
                                    os.unlink(entry.path)
                                continue
                            entries.append((info.st_mtime, info.st_size, entry.path))
                            total += info.st_size
        return entries, total
