"""``Mounts``: from an untrusted URL path to a local file, whichever source holds it.

With a result store, the mounts also share what each node learnt about a remote object: the
content fingerprint of its current version (``version`` / ``note``). A node that has no copy of
the object can then name the variant's ETag, the result store's key, without fetching the source.
The object's source-cache ident comes first and without I/O (``shared_ident``; every node names
an object alike), so the reader can start its other read by that name (the variant's alias,
``optimizer.variants``) while the fingerprint is read: node B answers what node A rendered in one
round trip (the fingerprint from Redis when ``ASSETGATE_REDIS_URL`` is set: the entry is kept
there too, for the TTL; else from the store, beside the variant). An index entry is
trusted for ``ASSETGATE_SOURCE_TTL_S`` after the node that wrote it last heard from the source,
the same staleness every node's own copy is allowed (``0``: never trusted).

The path check's lexical rules (``web.paths.clean_relative``: no ``..``, no absolute path, no
hidden name, the reserved ``cache/``) run first, for every source alike and before anything is
contacted; then the longest mount prefix picks the source. A directory is walked by
``web.paths.locate`` as before; a bucket or an origin goes through the source cache, which hands
back its local copy. Either way the caller gets a ``Located``: one regular file and its stat.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from assetgate.cache import SharedTier
from assetgate.cache.objects import ObjectTier, s3_store
from assetgate.errors import NotFound
from assetgate.operations.metrics import Metrics
from assetgate.serving.versions import SMALL_FILE_BYTES, FileVersion, FileVersions
from assetgate.settings import Settings
from assetgate.sources.copies import Copies
from assetgate.sources.locations import Bucket, Directory, Mount, Origin, parse_mounts, split
from assetgate.sources.origin import OriginSource
from assetgate.sources.remote import Remote
from assetgate.sources.s3 import BucketSource
from assetgate.web.caching import http_date
from assetgate.web.paths import Located, clean_relative, locate

OK: Final = "ok"
INDEX_PREFIX: Final = "sources/"
_FINGERPRINT = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True, slots=True)
class SharedFingerprint:
    """What the ETag and headers of a remote object's variants need, without its bytes."""

    fingerprint: str
    size: int
    mtime: float

    @property
    def last_modified(self) -> str:
        return http_date(self.mtime)


Check = Callable[[], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Backend:
    mount: Mount
    real_root: str | None  # a directory's realpath; None for a remote source
    remote: Remote | None


class Mounts:
    def __init__(
        self,
        backends: tuple[Backend, ...],
        copies: Copies,
        max_bytes: int,
        index: ObjectTier | None = None,
        fast_index: SharedTier | None = None,
        versions: FileVersions | None = None,
    ) -> None:
        self.backends = backends
        self.versions = versions  # told the fingerprints hashed while copies were written
        self.index = index
        self.fast_index = fast_index if index is not None else None  # Redis, when configured
        self._writes: set[asyncio.Task[None]] = set()
        self.copies = copies
        self.max_bytes = max_bytes
        only = backends[0] if len(backends) == 1 else None
        # One directory for everything: the route keeps its direct, synchronous walk.
        self.single_root = only.real_root if only is not None and not only.mount.prefix else None

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        metrics: Metrics | None = None,
        index: ObjectTier | None = None,
        fast_index: SharedTier | None = None,
        versions: FileVersions | None = None,
    ) -> Mounts:
        mounts = parse_mounts(settings.root, settings.sources)
        backends = tuple(_backend(mount, settings) for mount in mounts)
        copies = Copies(
            settings.source_cache_dir,
            settings.source_cache_bytes,
            settings.source_ttl_s,
            metrics,
        )
        return cls(backends, copies, settings.max_source_bytes, index, fast_index, versions)

    @property
    def remote(self) -> bool:
        return any(backend.remote is not None for backend in self.backends)

    def _pick(self, untrusted: str, reserved: tuple[str, ...]) -> tuple[Backend, str] | None:
        cleaned = clean_relative(untrusted, reserved=reserved)
        if cleaned is None:
            return None
        found = split(tuple(backend.mount for backend in self.backends), cleaned)
        if found is None:
            return None
        mount, rest = found
        return next(backend for backend in self.backends if backend.mount is mount), rest

    def shared_ident(self, untrusted: str, *, reserved: tuple[str, ...]) -> str | None:
        """The ident of the remote object ``untrusted`` names, when its shared fingerprint is
        worth reading; None: a directory, no result store, a current copy here."""
        picked = self._pick(untrusted, reserved) if self.index is not None else None
        if picked is None or picked[0].remote is None:
            return None
        ident = self.copies.ident(picked[0].remote, picked[1])
        if self.copies.fresh(ident):
            return None  # the copy here answers as fast, and knows better
        return ident

    def copy_ident(self, path: str) -> str | None:
        """The ident of the remote copy at ``path`` (a ``Located.real``) when there is a result
        store; None for a local file."""
        held = self.copies.entry_at(path) if self.index is not None else None
        return None if held is None else held[0]

    async def version(self, ident: str) -> SharedFingerprint | None:
        """The fingerprint the nodes shared for the object ``ident`` (``shared_ident``), or None
        (no result store, no recent index entry)."""
        if self.index is None:
            return None
        data = None
        if self.fast_index is not None:
            data = await self.fast_index.get(INDEX_PREFIX + ident)
        if data is None:
            data = await self.index.get(INDEX_PREFIX + ident, counted=False)
        return None if data is None else self._trusted(data)

    def _trusted(self, data: bytes) -> SharedFingerprint | None:
        try:
            entry = json.loads(data)
            fingerprint, size = str(entry["fingerprint"]), int(entry["size"])
            mtime, checked = float(entry["mtime"]), float(entry["checked"])
        except (ValueError, KeyError, TypeError):
            return None
        if not _FINGERPRINT.fullmatch(fingerprint) or time.time() - checked >= self.copies.ttl_s:
            return None
        return SharedFingerprint(fingerprint, size, mtime)

    def note(self, found: Located, source: FileVersion) -> None:
        """After the route fingerprinted a remote copy: share it (once per answer from the
        source, in the background)."""
        held = self.copies.entry_at(found.real) if self.index is not None else None
        if held is None:
            return
        ident, entry = held
        if entry.indexed >= entry.checked or source.size != entry.size:
            return
        entry.indexed = entry.checked
        checked = time.time() - (time.monotonic() - entry.checked)
        record = {
            "fingerprint": source.fingerprint,
            "size": source.size,
            "mtime": source.mtime,
            "checked": checked,
        }
        assert self.index is not None
        data = json.dumps(record).encode()
        self.index.put_later(INDEX_PREFIX + ident, data)
        if self.fast_index is not None and self.copies.ttl_s > 0:
            put = self.fast_index.set(INDEX_PREFIX + ident, data, self.copies.ttl_s)
            task = asyncio.get_running_loop().create_task(put)
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    async def locate(self, untrusted: str, *, reserved: tuple[str, ...]) -> Located | None:
        """The file ``untrusted`` names, or None (404) for an unsafe or missing path.

        A remote source's failure is its ``AppError`` (413, 502, 504), naming the mount."""
        picked = self._pick(untrusted, reserved)
        if picked is None:
            return None
        backend, rest = picked
        if backend.real_root is not None:
            return locate(backend.real_root, rest)
        assert backend.remote is not None
        try:
            public = "/" + backend.mount.prefix + rest
            found = await self.copies.locate(backend.remote, rest, self.max_bytes, public)
        except NotFound:
            return None
        if self.versions is not None and found.stat.st_size > SMALL_FILE_BYTES:
            held = self.copies.entry_at(found.real)
            if held is not None and held[1].fingerprint is not None:
                self.versions.adopt(found.stat, held[1].fingerprint)  # no second read to hash
        return found

    def _idents(self, paths: list[str]) -> set[str]:
        """The source-cache idents of the remote objects the public ``paths`` name."""
        idents = set()
        for path in paths:
            picked = self._pick(path.lstrip("/"), ())
            if picked is not None and picked[0].remote is not None:
                idents.add(self.copies.ident(picked[0].remote, picked[1]))
        return idents

    def purge_copies(self, paths: list[str], prefixes: list[str]) -> list[str]:
        """Delete this machine's copies of the objects ``paths`` name and of every object under
        ``prefixes`` (public paths, with their leading "/"); the files deleted."""
        return self.copies.purge(self._idents(paths), tuple(prefixes))

    async def purge_fingerprints(self, paths: list[str]) -> int:
        """Delete the fingerprints the nodes shared for ``paths`` (the result store's index and
        Redis): no node names a purged object's variants without asking its source again.
        How many were held. Raises when the store or Redis cannot answer."""
        if self.index is None:
            return 0
        names = sorted(INDEX_PREFIX + ident for ident in self._idents(paths))
        deleted = await self.index.delete(names)
        if self.fast_index is not None:
            deleted = max(deleted, await self.fast_index.delete(names))
        return deleted

    def checks(self, kinds: tuple[str, ...] = ("s3", "http")) -> dict[str, Check]:
        """``/readyz``'s view of each remote source of ``kinds``, by its name, and of the copies
        they are kept in (full: new objects answered 503)."""
        checks: dict[str, Check] = {
            f"source {backend.mount.name}": backend.remote.check
            for backend in self.backends
            if backend.remote is not None and backend.remote.kind in kinds
        }
        if checks:
            checks["source_cache"] = self.copies.check
        return checks

    async def aclose(self) -> None:
        if self._writes:  # fingerprints on their way to Redis: bounded by its op timeout
            await asyncio.wait(set(self._writes), timeout=2.0)
        for backend in self.backends:
            if backend.remote is not None:
                await backend.remote.aclose()


def _backend(mount: Mount, settings: Settings) -> Backend:
    location = mount.location
    if isinstance(location, Directory):
        return Backend(mount, os.path.realpath(location.path), None)
    remote: Remote
    if isinstance(location, Bucket):
        store = s3_store(location.bucket, location.prefix, settings)
        remote = BucketSource(
            mount.name, store, location.ident, read_timeout_s=settings.source_read_timeout_s
        )
    else:
        assert isinstance(location, Origin)
        remote = OriginSource(
            mount.name,
            location,
            allow_private=settings.origin_allow_private,
            connect_timeout_s=settings.source_connect_timeout_s,
            read_timeout_s=settings.source_read_timeout_s,
        )
    return Backend(mount, None, remote)
