"""``Mounts``: from an untrusted URL path to a local file, whichever source holds it.

The path check's lexical rules (``web.paths.clean_relative``: no ``..``, no absolute path, no
hidden name, the reserved ``cache/``) run first, for every source alike and before anything is
contacted; then the longest mount prefix picks the source (``mount_of``: no I/O). A directory is
walked by ``web.paths.locate`` as before; a bucket or an origin goes through the source cache,
which hands back its local copy (``locate``). Either way the caller gets a ``Located``: one
regular file and its stat; for a remote object a ``RemoteCopy``, which also carries the copy's
record, so no later step looks the copy up by its path again.

Two steps, because with a result store a remote object is known by its ident before its copy is
fetched: the route first tries the variant another node rendered (``MountedPath.ask_others``,
``sources.fingerprints``), and only then fetches the object. The request enters ``Mounts`` twice.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from assetgate.cache import SharedTier
from assetgate.cache.objects import ObjectTier, s3_store
from assetgate.errors import NotFound
from assetgate.operations.metrics import Metrics
from assetgate.serving.versions import SMALL_FILE_BYTES, FileVersions
from assetgate.settings import Settings
from assetgate.sources.copies import Copies
from assetgate.sources.fingerprints import SharedFingerprints
from assetgate.sources.locations import Bucket, Directory, Mount, Origin, parse_mounts, split
from assetgate.sources.origin import OriginSource
from assetgate.sources.remote import Remote
from assetgate.sources.s3 import BucketSource
from assetgate.web.paths import Located, clean_relative, locate

OK: Final = "ok"

Check = Callable[[], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Backend:
    mount: Mount
    real_root: str | None  # a directory's realpath; None for a remote source
    remote: Remote | None


@dataclass(frozen=True, slots=True)
class MountedPath:
    """A request path that passed the lexical rules, with the mount that serves it."""

    backend: Backend
    key: str  # the path under the mount: a file under its directory, a key in its source
    # the remote object's ident (``Copies.ident``) when the nodes share fingerprints (a result
    # store); None: a directory, or nothing is shared
    shared: str | None = None
    ask_others: bool = False  # the object's shared fingerprint is worth reading: no current copy


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
        self.copies = copies
        self.max_bytes = max_bytes
        # With a result store (``index``), the nodes share their remote copies' fingerprints;
        # Redis (``fast_index``), when configured, answers them first.
        self.fingerprints = (
            None if index is None else SharedFingerprints(index, fast_index, copies.ttl_s)
        )
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

    def mount_of(self, untrusted: str, *, reserved: tuple[str, ...]) -> MountedPath | None:
        """The mount that serves ``untrusted`` and the path under it, or None (404) for a path
        the lexical rules refuse or no mount serves. No I/O: nothing is contacted yet."""
        cleaned = clean_relative(untrusted, reserved=reserved)
        if cleaned is None:
            return None
        found = split(tuple(backend.mount for backend in self.backends), cleaned)
        if found is None:
            return None
        mount, key = found
        backend = next(backend for backend in self.backends if backend.mount is mount)
        if backend.remote is None or self.fingerprints is None:
            return MountedPath(backend, key)
        ident = self.copies.ident(backend.remote, key)
        # a current copy here answers as fast as the result store, and knows better
        return MountedPath(backend, key, ident, ask_others=not self.copies.fresh(ident))

    async def locate(self, mounted: MountedPath) -> Located | None:
        """The file ``mounted`` names, or None (404) when it is missing or unsafe; a remote
        object's is its ``RemoteCopy``, fetched or revalidated when due.

        A remote source's failure is its ``AppError`` (413, 502, 504), naming the mount."""
        backend = mounted.backend
        if backend.real_root is not None:
            return locate(backend.real_root, mounted.key)
        assert backend.remote is not None
        try:
            public = "/" + backend.mount.prefix + mounted.key
            copy = await self.copies.locate(backend.remote, mounted.key, self.max_bytes, public)
        except NotFound:
            return None
        fingerprint = copy.entry.fingerprint
        if (
            self.versions is not None
            and fingerprint is not None
            and copy.stat.st_size > SMALL_FILE_BYTES
        ):
            self.versions.adopt(copy.stat, fingerprint)  # no second read to hash
        return copy

    def _idents(self, paths: list[str]) -> set[str]:
        """The source-cache idents of the remote objects the public ``paths`` name."""
        idents = set()
        for path in paths:
            mounted = self.mount_of(path.lstrip("/"), reserved=())
            if mounted is not None and mounted.backend.remote is not None:
                remote = mounted.backend.remote
                idents.add(mounted.shared or self.copies.ident(remote, mounted.key))
        return idents

    def purge_copies(self, paths: list[str], prefixes: list[str]) -> list[str]:
        """Delete this machine's copies of the objects ``paths`` name and of every object under
        ``prefixes`` (public paths, with their leading "/"); the files deleted."""
        return self.copies.purge(self._idents(paths), tuple(prefixes))

    async def purge_fingerprints(self, paths: list[str]) -> int:
        """Delete the fingerprints the nodes shared for ``paths`` (``SharedFingerprints.purge``);
        how many were held. Raises when the store or Redis cannot answer."""
        if self.fingerprints is None:
            return 0
        return await self.fingerprints.purge(self._idents(paths))

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
        if self.fingerprints is not None:
            await self.fingerprints.aclose()
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
