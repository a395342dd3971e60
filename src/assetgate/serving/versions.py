"""File versions: what one version of a file is, worked out once per change, not per request.

A request stats its file once. The stat identity ``(st_dev, st_ino, st_size, st_mtime_ns,
st_ctime_ns)`` names one version of the file on this machine; the content fingerprint names its
bytes on every machine. ``FileVersions`` remembers the fingerprint, the validators and (for small
files) the bytes per stat identity, so a warm request costs one ``stat`` and a dict lookup:

- ETags and result-cache keys come from the content, not the inode: two servers holding copies of
  one file (other inodes, other mtimes) agree, and a rewrite that restores size and mtime
  (``cp -p``, ``rsync -t``) still moves ctime, so it is never given its old fingerprint.
- A file whose ctime is within ``settle_s`` of now is fingerprinted but not remembered ("racy
  git"): kernel timestamps tick coarsely, so two same-size writes in one tick share a stat identity.

The fingerprint is BLAKE3 cut to 128 bits (the ``blake3`` package, the reference Rust code): it
keys a result cache shared across paths and machines, where a crafted upload must not be able to
collide with another file, so it must be collision resistant (xxh3-128 is ~10x faster still, but
is not), and it is ~7x faster than the stdlib's blake2b-128 (0.6 vs 4 ms for a 3.8 MB photo, once
per change of a file; docs/benchmarks.md). One thread: the render gate owns the cores.
"""

from __future__ import annotations

import os
import stat
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, TypeVar

import anyio
import blake3

from assetgate.errors import AppError
from assetgate.serving.prepared import Prepared
from assetgate.web.caching import http_date

StatKey = tuple[int, int, int, int, int]
T = TypeVar("T")
V = TypeVar("V")

SMALL_FILE_BYTES: Final = 256 * 1024  # read and hashed on the event loop; bytes kept in memory
MAX_VARIANTS: Final = 64  # prepared answers kept per file version
_CHUNK_BYTES: Final = 1024 * 1024
_DIGEST_BYTES: Final = 16


def stat_key(info: os.stat_result) -> StatKey:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def fingerprint_bytes(data: bytes) -> str:
    return blake3.blake3(data).hexdigest(length=_DIGEST_BYTES)


class Fingerprint:
    """A fingerprint made piece by piece (content hashed while it is read or written)."""

    __slots__ = ("_hash",)

    def __init__(self) -> None:
        self._hash = blake3.blake3()

    def update(self, data: bytes | memoryview) -> None:
        self._hash.update(data)  # releases the GIL on large pieces

    def hexdigest(self) -> str:
        return self._hash.hexdigest(length=_DIGEST_BYTES)


@dataclass(frozen=True, slots=True, eq=False)
class FileVersion:
    """One version of a file. ``blocks`` holds the prepared answers derived from it, per variant
    (built on first use, dropped with the version), so a hit does no header work; ``derived``
    what the parts worked out from its bytes, so a second render skips the header read."""

    key: StatKey
    size: int
    mtime: float
    fingerprint: str  # 32 hex digits: BLAKE3-128 of the content
    last_modified: str  # HTTP-date of mtime
    body: bytes | None  # the content, for small files while the memory budget allows
    blocks: dict[Hashable, Prepared] = field(default_factory=dict)
    derived: dict[Hashable, object] = field(default_factory=dict)

    def prepare(self, variant: Hashable, build: Callable[[FileVersion], Prepared]) -> Prepared:
        """The prepared answer for ``variant``, built on first use; at most ``MAX_VARIANTS`` are
        kept per version, so a stream of distinct queries cannot grow it."""
        found = self.blocks.get(variant)
        if found is None:
            found = build(self)
            self.keep(variant, found)
        return found

    def keep(self, variant: Hashable, prepared: Prepared) -> None:
        _put_bounded(self.blocks, variant, prepared)

    def recall(self, key: Hashable, kind: type[T]) -> T | None:
        """What a part worked out from this version's bytes (a decoded image header, say)."""
        found = self.derived.get(key)
        return found if isinstance(found, kind) else None

    def note(self, key: Hashable, value: object) -> None:
        """Remember ``value`` with this version (dropped with it; at most ``MAX_VARIANTS``)."""
        _put_bounded(self.derived, key, value)


def _put_bounded(table: dict[Hashable, V], key: Hashable, value: V) -> None:
    """Replace, or add while the table holds fewer than ``MAX_VARIANTS``: a stream of distinct
    queries cannot grow what one version keeps."""
    if key in table or len(table) < MAX_VARIANTS:
        table[key] = value


class FileVersions:
    """The bounded memo ``stat identity -> FileVersion``; touched only from the event loop."""

    def __init__(
        self,
        *,
        body_budget_bytes: int,
        max_files: int = 16_384,
        small_file_bytes: int = SMALL_FILE_BYTES,
        settle_s: float = 2.0,
    ) -> None:
        self.body_budget_bytes = body_budget_bytes
        self.max_files = max_files
        self.small_file_bytes = small_file_bytes
        self.settle_s = settle_s
        self.body_bytes = 0
        self.fingerprinted = 0  # how many times a file's content was read and hashed
        # An OrderedDict, not cachetools' LRUCache: this is on every request and the C-level
        # get + move_to_end is ~0.4 us cheaper (docs/caching.md, "Every memo in the process").
        self._entries: OrderedDict[StatKey, FileVersion] = OrderedDict()
        self._pending: dict[StatKey, anyio.Event] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def holds(self, version: FileVersion) -> bool:
        """Whether ``source`` is the remembered version (not a racy or over-budget one)."""
        return self._entries.get(version.key) is version

    def peek(self, key: StatKey) -> FileVersion | None:
        """The remembered version ``key``, marked as recently used."""
        version = self._entries.get(key)
        if version is not None:
            self._entries.move_to_end(key)
        return version

    def adopt(self, info: os.stat_result, fingerprint: str) -> FileVersion:
        """The version ``info`` describes, whose content was hashed while it was written: a
        remote source's copy (``sources.copies``), written once to a new file and renamed into
        place, so no second write can share its stat identity and it needs no reading again."""
        key = stat_key(info)
        version = self._entries.get(key)
        if version is None:
            version = FileVersion(
                key=key,
                size=info.st_size,
                mtime=info.st_mtime,
                fingerprint=fingerprint,
                last_modified=http_date(info.st_mtime),
                body=None,
            )
            self._entries[key] = version
            while len(self._entries) > self.max_files:
                self._drop_oldest()
        return version

    async def identify(self, path: str | Path, info: os.stat_result) -> FileVersion:
        """The version of ``path`` that ``info`` (the request's one stat) describes.

        A file that vanished or became unreadable since that stat is a 404, like a missing one.
        """
        key = stat_key(info)
        while True:
            version = self._entries.get(key)
            if version is not None:
                self._entries.move_to_end(key)
                return version
            pending = self._pending.get(key)
            if pending is None:
                break
            await pending.wait()  # someone is hashing this very version: share the result
            if key not in self._entries:
                break  # not remembered (racy or failed): do the work ourselves
        try:
            if info.st_size <= self.small_file_bytes:
                small = _read_small(path, self.small_file_bytes)
                if small is not None:
                    return self._remember(key, *small)
            return await self._hash_large(key, path)
        except OSError:
            raise AppError.not_found() from None

    async def _hash_large(self, key: StatKey, path: str | Path) -> FileVersion:
        done = self._pending[key] = anyio.Event()
        try:
            found = await anyio.to_thread.run_sync(_hash_large, path)
            return self._remember(key, *found)
        finally:
            if self._pending.get(key) is done:
                del self._pending[key]
            done.set()

    def _remember(
        self, key: StatKey, read: os.stat_result, digest: str, body: bytes | None
    ) -> FileVersion:
        version = FileVersion(
            key=stat_key(read),
            size=read.st_size if body is None else len(body),
            mtime=read.st_mtime,
            fingerprint=digest,
            last_modified=http_date(read.st_mtime),
            body=body,
        )
        # The content belongs to ``read``; only a version that was stable while we read it, and
        # whose timestamps have settled, may answer later requests.
        self.fingerprinted += 1
        if version.key != key or time.time() - read.st_ctime_ns / 1e9 < self.settle_s:
            return version
        if body is not None and len(body) > self.body_budget_bytes:
            version = replace(version, body=None, blocks={}, derived={})
        if version.body is not None:
            while self.body_bytes + len(version.body) > self.body_budget_bytes:
                self._drop_oldest()
            self.body_bytes += len(version.body)
        self._entries[key] = version
        while len(self._entries) > self.max_files:
            self._drop_oldest()
        return version

    def _drop_oldest(self) -> None:
        _, old = self._entries.popitem(last=False)
        if old.body is not None:
            self.body_bytes -= len(old.body)


async def identify_path(
    versions: FileVersions, path: str | Path
) -> tuple[os.stat_result, FileVersion]:
    """The stat and version of the regular file at ``path``, for a caller that has no path check's
    stat (a stored package blob); 404 when it is missing or not a regular file."""
    try:
        info = os.stat(path)
    except OSError:
        raise AppError.not_found() from None
    if not stat.S_ISREG(info.st_mode):
        raise AppError.not_found()
    return info, await versions.identify(path, info)


def _read_small(path: str | Path, limit: int) -> tuple[os.stat_result, str, bytes] | None:
    """Read on the event loop: a small file in the page cache is cheaper than a thread hop.

    None when the file has grown past ``limit`` since it was stat'ed (it is hashed on a thread).
    """
    with open(path, "rb") as handle:
        body = handle.read(limit + 1)
        read = os.fstat(handle.fileno())
    if len(body) > limit:
        return None
    return read, fingerprint_bytes(body), body


def _hash_large(path: str | Path) -> tuple[os.stat_result, str, None]:
    """Run on a worker thread (the hash releases the GIL on large pieces)."""
    digest = Fingerprint()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK_BYTES):
            digest.update(chunk)
        read = os.fstat(handle.fileno())
    return read, digest.hexdigest(), None
