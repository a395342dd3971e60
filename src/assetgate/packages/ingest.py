"""The packages part's state: packument cache, single-flight ingest of versions and library files.

One ``Packages`` object is built in the part's lifespan. Its job is to make a pinned thing present
in the store, asking upstream at most once per thing however many requests arrive together
(an asyncio task per key in this process, an ``flock`` per key across worker processes). Nothing
is stored before it was verified: a tarball is hashed while it streams to a temporary file and
compared with the registry's ``dist.integrity`` before a single entry is unpacked; a library file
is compared with the catalog's ``sri``. A script or style sheet the catalog gives no ``sri`` for is
refused (the catalog hashes every one; a browser loads them with ``integrity=``); any other file
without one is stored unverified, and no integrity is ever published for it (``library_sri``).
Failures are remembered for a minute so a hostile or broken upstream object is not downloaded
again on every request.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar, cast

import anyio.to_thread
import httpx

from assetgate.cache import Cache, Codec, dataclass_codec, memory_codec
from assetgate.cpu.workgate import WorkGate
from assetgate.errors import AppError, NotFound, Overloaded
from assetgate.packages import catalogs
from assetgate.packages.catalogs import LibraryVersion
from assetgate.packages.defaultfile import choose_default_file
from assetgate.packages.download import download_verified, put_file, temp_file
from assetgate.packages.integrity import expected_for_dist, needs_sri, parse_sri
from assetgate.packages.packument import Unpublished, parse_packument
from assetgate.packages.registry import Registries, registry_host
from assetgate.packages.store import FileRow, Store, VersionKey, VersionRow
from assetgate.packages.tarball import (
    TarballLimits,
    blob_suffix,
    unpack,
)
from assetgate.packages.versions import (
    Packument,
    is_exact,
    resolve_version,
    resolve_without_scan,
)
from assetgate.resources import Resources

log = logging.getLogger("assetgate.packages")

T = TypeVar("T")
ALIAS_TTL_S: Final = 300.0
STALE_IF_ERROR_S: Final = 24 * 3600.0
NEGATIVE_TTL_S: Final = 60.0
PACKUMENT_MEMORY_BYTES: Final = 32 * 1024 * 1024
MAX_TARBALL_BYTES: Final = 64 * 1024 * 1024
DEFAULT_LIMITS: Final = TarballLimits()
INLINE_SCAN_VERSIONS: Final = 512  # a range over more versions is resolved on a worker thread
SCANS_AT_ONCE: Final = 2
# What one kept version holds in memory, roughly (its Dist, strings, the dict slot): the weight
# of a packument is counted from its length, never by encoding it on the event loop.
VERSION_WEIGHT_BYTES: Final = 512


def packument_codec() -> Codec[Packument]:
    json_codec = dataclass_codec(Packument)
    return Codec(
        json_codec.encode,
        json_codec.decode,
        lambda packument: 1024 + VERSION_WEIGHT_BYTES * len(packument.dists),
    )


@dataclass(frozen=True, slots=True)
class Upstreams:
    registries: Registries
    library_api: str
    library_files: str
    timeout_s: float
    packument_max_bytes: int = catalogs.PACKUMENT_MAX_BYTES


@dataclass(frozen=True, slots=True)
class IngestCaches:
    once: Cache[Any]  # single flight of every ingest, failures remembered for a minute
    packuments: Cache[Packument]  # shared through Redis when configured
    libraries: Cache[LibraryVersion]  # the library catalog's file list of a version

    @classmethod
    def build(cls, res: Resources) -> IngestCaches:
        return cls(
            once=res.cache(
                "ingest", memory_codec(), memory_bytes=0, ttl=0.0, negative_ttl_s=NEGATIVE_TTL_S
            ),
            packuments=res.cache(
                "packuments",
                packument_codec(),
                memory_bytes=PACKUMENT_MEMORY_BYTES,
                ttl=ALIAS_TTL_S,
                negative_ttl_s=NEGATIVE_TTL_S,
                shared=True,
            ),
            libraries=res.cache(
                "libraries",
                dataclass_codec(LibraryVersion),
                memory_bytes=PACKUMENT_MEMORY_BYTES,
                negative_ttl_s=NEGATIVE_TTL_S,
                shared=True,
            ),
        )

    async def aclose(self) -> None:
        for cache in (self.once, self.packuments, self.libraries):
            await cache.aclose()


def refused(what: str, registry: str, code: int) -> AppError:
    """A 401/403 of a registry: the package and the registry's host, never the credential."""
    return AppError.upstream(
        f"the registry at {registry_host(registry)} refused access to {what} (HTTP {code});"
        " its credential in ASSETGATE_NPMRC is missing or not accepted"
    )


def _upstream_failure(exc: AppError, what: str) -> AppError:
    if isinstance(exc, NotFound):
        return AppError.not_found(f"{what} not found")
    return AppError.upstream(f"{what}: {exc.message}")


class Packages:
    def __init__(
        self,
        store: Store,
        http: httpx.AsyncClient,
        gate: WorkGate,
        upstreams: Upstreams,
        caches: IngestCaches,
        limits: TarballLimits = DEFAULT_LIMITS,
        max_tarball_bytes: int = MAX_TARBALL_BYTES,
    ) -> None:
        self.store = store
        self.http = http
        self.gate = gate
        self.upstreams = upstreams
        self.limits = limits
        self.max_tarball_bytes = max_tarball_bytes
        self.caches = caches
        self._scans = anyio.CapacityLimiter(SCANS_AT_ONCE)

    # --- single flight ------------------------------------------------------------------------
    async def once(self, key: tuple[str, ...], work: Callable[[], Awaitable[T]]) -> T:
        value, _ = await self.caches.once.get_or_compute("\0".join(key), work)
        return cast(T, value)

    # --- packuments ---------------------------------------------------------------------------
    def _registry(self, name: str) -> str:
        """The registry ``name`` comes from: its scope's, else the default."""
        found = self.upstreams.registries.for_package(name)
        if found is None:
            raise AppError.upstream("no npm registry is configured")
        return found

    async def packument(self, name: str, *, fresh: bool = False) -> Packument:
        """The registry's document (cached ``ALIAS_TTL_S``; ``fresh`` asks the registry again)."""
        packument, _ = await self.caches.packuments.get_or_compute(
            name, lambda: self._fetch_packument(name), refresh=fresh
        )
        return packument

    async def _fetch_packument(self, name: str) -> Packument:
        registry = self._registry(name)
        url = catalogs.packument_url(registry, name)
        try:
            packument = await catalogs.fetch_packument(
                self.http,
                registry,
                name,
                timeout_s=self.upstreams.timeout_s,
                max_bytes=self.upstreams.packument_max_bytes,
                headers=self.upstreams.registries.headers(url),
            )
        except Unpublished:
            raise
        except catalogs.UpstreamRefused as exc:
            # Not an outage: no stale copy hides a token that is missing, revoked or refused.
            raise refused(name, registry, exc.code) from None
        except NotFound as exc:
            raise AppError.not_found("package not found") from exc
        except AppError as exc:
            stale = await self._stale_packument(name)
            if stale is None:
                raise _upstream_failure(exc, "registry") from exc
            log.warning("registry failed (%s); serving a stale packument of %s", exc.message, name)
            return stale
        await anyio.to_thread.run_sync(self._save_packument, name, packument)
        return packument

    def _save_packument(self, name: str, packument: Packument) -> None:
        self.store.save_packument(name, catalogs.packument_text(packument))

    async def _stale_packument(self, name: str) -> Packument | None:
        return await anyio.to_thread.run_sync(self._load_stale_packument, name)

    def _load_stale_packument(self, name: str) -> Packument | None:
        saved = self.store.load_packument(name)
        if saved is None or time.time() - saved[0] > STALE_IF_ERROR_S:
            return None
        try:
            return parse_packument(name, saved[1])
        except AppError:
            return None

    async def resolve(self, name: str, spec: str) -> str:
        """A range, tag or missing version -> the exact version (AppError 404 when none)."""
        packument = await self.packument(name)
        version = await self._resolve(packument, spec)
        if version is None and is_exact(spec):
            packument = await self.packument(name, fresh=True)  # published a moment ago?
            version = await self._resolve(packument, spec)
        if version is None:
            raise AppError.not_found("no matching version")
        return version

    async def _resolve(self, packument: Packument, spec: str) -> str | None:
        """``resolve_version``; a scan over many versions on a worker thread, a few at a time
        (290k versions held the event loop 6-7 s)."""
        settled, version = resolve_without_scan(packument, spec)
        if settled or len(packument.dists) <= INLINE_SCAN_VERSIONS:
            return version if settled else resolve_version(packument, spec)
        return await anyio.to_thread.run_sync(resolve_version, packument, spec, limiter=self._scans)

    # --- npm versions -------------------------------------------------------------------------
    async def ensure_version(self, name: str, version: str) -> VersionRow:
        key: VersionKey = ("npm", name, version)
        row = self.store.version(*key)
        if row is not None:
            return row
        return await self.once(key, lambda: self._ingest(key))

    async def _ingest(self, key: VersionKey) -> VersionRow:
        _, name, version = key
        packument = await self.packument(name)
        if version not in packument.dists:
            packument = await self.packument(name, fresh=True)
        dist = packument.dists.get(version)
        if dist is None:
            raise AppError.not_found("version not found")
        expected = expected_for_dist(dist.integrity, dist.shasum)
        if expected is None:
            raise AppError.upstream("registry gave no integrity hash for the tarball")
        registry = self._registry(name)
        url = catalogs.tarball_url(registry, name, version, dist.tarball)
        lock = self.store.process_lock(key)
        await anyio.to_thread.run_sync(lock.__enter__)
        try:
            row = self.store.version(*key)
            if row is not None:
                return row  # another worker process finished it while we waited
            with temp_file(self.store.tmp_dir) as tmp:
                try:
                    await download_verified(
                        self.http,
                        url,
                        tmp,
                        expected,
                        self.max_tarball_bytes,
                        "tarball",
                        self.upstreams.registries.headers(url),
                    )
                except catalogs.UpstreamRefused as exc:
                    raise refused(f"{name}@{version}", registry, exc.code) from None
                await self._unpack_and_commit(key, tmp)
        finally:
            lock.__exit__(None, None, None)
        row = self.store.version(*key)
        assert row is not None
        return row

    async def _unpack_and_commit(self, key: VersionKey, tarball: Path) -> None:
        sink = self.store.new_sink()
        try:
            unpacked = await self.gate.run(unpack, tarball, sink, self.limits)
        except AppError as exc:
            if not isinstance(exc, Overloaded):  # the archive itself was refused, not the door
                log.warning("refused %s@%s: %s", key[1], key[2], exc.message)
            raise
        manifest: object = {}
        if unpacked.manifest is not None:
            with contextlib.suppress(ValueError):
                manifest = json.loads(unpacked.manifest)
        chosen = choose_default_file(
            manifest if isinstance(manifest, dict) else {}, unpacked.files.keys()
        )
        try:
            await anyio.to_thread.run_sync(
                self.store.commit_version,
                key,
                unpacked.files,
                chosen.path if chosen else None,
                chosen.reason if chosen else None,
            )
        except BaseException:
            sink.discard(set(sink.created))
            raise
        await anyio.to_thread.run_sync(self.store.evict, key)

    # --- library files ------------------------------------------------------------------------
    async def library_version(self, name: str, version: str) -> LibraryVersion:
        async def fetch() -> LibraryVersion:
            try:
                found = await catalogs.fetch_library_version(
                    self.http,
                    self.upstreams.library_api,
                    name,
                    version,
                    timeout_s=self.upstreams.timeout_s,
                )
            except AppError as exc:
                raise _upstream_failure(exc, "library") from exc
            return found

        found, _ = await self.caches.libraries.get_or_compute(f"{name}@{version}", fetch)
        return found

    async def library_sri_known(self, name: str, version: str, path: str) -> bool:
        """Whether the catalog vouches for ``path`` (so its hash may be published as verified)."""
        meta = await self.library_version(name, version)
        return parse_sri(meta.sri.get(path)) is not None

    async def ensure_library_file(self, name: str, version: str, path: str) -> FileRow:
        row = self.store.file("lib", name, version, path)
        if row is not None:
            return row
        return await self.once(
            ("lib", name, version, path), lambda: self._ingest_library_file(name, version, path)
        )

    async def _ingest_library_file(self, name: str, version: str, path: str) -> FileRow:
        meta = await self.library_version(name, version)
        if path not in meta.files:
            raise AppError.not_found()
        given = meta.sri.get(path)
        expected = parse_sri(given)
        if given and expected is None:
            # A hash was promised but cannot be checked: as for tarballs, nothing unverified.
            raise AppError.upstream(f"library catalog: unusable integrity value for {path}")
        if not given and needs_sri(path):
            raise AppError.upstream(
                f"library catalog: no integrity value for {path}; a script or style sheet"
                " is not served unverified"
            )
        url = catalogs.library_file_url(self.upstreams.library_files, name, version, path)
        key: VersionKey = ("lib", name, version)
        with temp_file(self.store.tmp_dir) as tmp:
            await download_verified(
                self.http, url, tmp, expected, self.limits.max_file_bytes, "library file"
            )
            sink = self.store.new_sink()
            stored = await anyio.to_thread.run_sync(put_file, sink, tmp, blob_suffix(path))
            try:
                await anyio.to_thread.run_sync(self.store.add_file, key, path, stored)
            except BaseException:
                sink.discard(set(sink.created))
                raise
        await anyio.to_thread.run_sync(self.store.evict, key)
        row = self.store.file("lib", name, version, path)
        assert row is not None
        return row
