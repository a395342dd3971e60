"""The package store's file bodies: content-addressed blobs on disk, apart from the index.

Layout under ``ASSETGATE_STORE``::

    blobs/ab/<sha256>[.js] file bodies named by their sha256 (CSS/JS keep their suffix)
    tmp/                   bodies being written (same filesystem, so ``os.replace`` is atomic)

A body is written under a temporary name and renamed into place, so a reader sees a whole file or
none; an identical body already present is not written again. No path is derived from an archive
entry or a URL: blob names are hex digests, each resolved through ``web.paths.resolve_under``.
What references a blob is the index's business (``packages.store``), not this module's.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

from cachetools import LRUCache

from assetgate.packages.tarball import StoredBlob
from assetgate.web.paths import resolve_under

PATH_CACHE_ENTRIES: Final = 8192


class Blobs:
    def __init__(self, root: Path) -> None:
        self.dir = root / "blobs"
        self.tmp_dir = root / "tmp"
        for folder in (self.dir, self.tmp_dir):
            folder.mkdir(parents=True, exist_ok=True)
        for index in range(256):
            (self.dir / f"{index:02x}").mkdir(exist_ok=True)
        self._dir_str = str(self.dir)
        self._tmp_str = str(self.tmp_dir)
        # Checked paths, least recently used out; ``forget`` runs on a worker thread (eviction),
        # ``path`` on the event loop: ``cachetools`` is not thread-safe, hence the lock.
        self._paths_lock = threading.Lock()
        self._paths: LRUCache[str, Path] = LRUCache(PATH_CACHE_ENTRIES)

    def path(self, blob: str) -> Path | None:
        """The blob's file, checked by ``resolve_under`` once and then remembered (the name is
        a digest, so the answer can only change by deletion, which calls ``forget``)."""
        with self._paths_lock:
            found = self._paths.get(blob)
        if found is not None:
            return found
        located = resolve_under(self.dir, f"{blob[:2]}/{blob}")
        if located is None:
            return None
        with self._paths_lock:
            self._paths[blob] = located.path
        return located.path

    def forget(self) -> None:
        with self._paths_lock:
            self._paths = LRUCache(PATH_CACHE_ENTRIES)

    def put_bytes(self, data: bytes, suffix: str) -> tuple[StoredBlob, bool]:
        """Small bodies (most package files): hashed in memory, written once, no temp-name dance.

        Returns the blob and whether this call created its file."""
        digest = hashlib.sha256(data).hexdigest()
        blob = digest + suffix
        final = os.path.join(self._dir_str, blob[:2], blob)
        created = not os.path.exists(final)
        if created:
            tmp = os.path.join(self._tmp_str, f"put-{os.getpid()}-{threading.get_ident()}-{blob}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, final)
        return StoredBlob(digest, hashlib.sha512(data).hexdigest(), len(data), blob), created

    def put(self, chunks: Iterator[bytes], suffix: str) -> tuple[StoredBlob, bool]:
        """A streamed body, hashed while it is written to a temporary file."""
        sha256 = hashlib.sha256()
        sha512 = hashlib.sha512()
        size = 0
        fd, tmp_name = tempfile.mkstemp(dir=self.tmp_dir, prefix="blob-")
        try:
            with os.fdopen(fd, "wb") as out:
                for chunk in chunks:
                    sha256.update(chunk)
                    sha512.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
            digest = sha256.hexdigest()
            blob = digest + suffix
            final = self.dir / blob[:2] / blob
            created = not final.exists()
            if created:
                os.replace(tmp_name, final)
            else:
                os.unlink(tmp_name)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise
        stored = StoredBlob(sha256=digest, sha512=sha512.hexdigest(), size=size, blob=blob)
        return stored, created

    def delete(self, blobs: Iterable[str]) -> None:
        for blob in blobs:
            with contextlib.suppress(OSError):
                (self.dir / blob[:2] / blob).unlink()
