"""A file's content fingerprint, remembered per stat identity.

ETags and result-cache keys name the source by its content, not its inode or mtime: every machine
then gives one file the same key, and a file rewritten with its old size and mtime (``cp -p``,
``rsync -t``) still gets a new one, because the rewrite changes the ctime (and often the inode),
which is part of the memo's key. A hash is computed once per identity; a file that changes while
it is read gets no fingerprint (and so no cache entry), never a half-way one.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import Final

import anyio.to_thread

CHUNK: Final = 1 << 20
INLINE_BYTES: Final = 256 * 1024  # smaller files are hashed on the event loop (< 0.2 ms)
MEMO_ENTRIES: Final = 65_536

Identity = tuple[int, int, int, int, int]


def identity(info: os.stat_result) -> Identity:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class _Changed(Exception):
    """The file is not the one the caller's ``stat`` described (exceptions are not memoised)."""


class Fingerprints:
    """One per app (built in ``Resources``): a bounded memo of identity -> content hash."""

    def __init__(self, entries: int = MEMO_ENTRIES) -> None:
        self._memo = functools.lru_cache(maxsize=entries)(_hash_file)

    async def of(self, path: Path, info: os.stat_result) -> str | None:
        """The content hash of ``path`` as ``info`` describes it; None when the file is changing
        under us (the answer is then not cacheable). OSError when it cannot be read."""
        key = identity(info)
        if info.st_size <= INLINE_BYTES:
            return self._get(str(path), key)
        return await anyio.to_thread.run_sync(self._get, str(path), key)

    def _get(self, path: str, key: Identity) -> str | None:
        try:
            return self._memo(path, key)
        except _Changed:
            return None

    def clear(self) -> None:
        self._memo.cache_clear()


def _hash_file(path: str, key: Identity) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        if identity(os.fstat(handle.fileno())) != key:
            raise _Changed
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
        if identity(os.fstat(handle.fileno())) != key:
            raise _Changed
    return digest.hexdigest()
