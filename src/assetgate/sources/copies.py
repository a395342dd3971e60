"""The source cache: remote objects as files on this machine's disk, revalidated after a TTL.

A remote source's object is fetched once into ``ASSETGATE_SOURCE_CACHE_DIR`` and from there it is
an ordinary file: the path check's rules were applied before, and the render, the content
fingerprint (the ETag's source part), ``sendfile`` and the hot lane work on it unchanged. After
``ASSETGATE_SOURCE_TTL_S`` the next request asks the source with its ETag / Last-Modified (a
conditional GET): "not modified" only restarts the clock; a new object is written to a new file
and renamed over the old one, so it has a new stat identity and is fingerprinted again (a
same-size rewrite gets a new ETag). Concurrent misses of one object share one fetch.

When the source fails (5xx, refused, timeout) and a copy is held, the copy is served (stale) and
asked about again after ``RETRY_S``; a 404 drops the copy. ``ASSETGATE_SOURCE_CACHE_BYTES`` bounds
what this process keeps (least recently used goes first). A small ``.meta`` file beside each copy
holds its validators, so a restarted node revalidates instead of fetching again.

Several processes may share one directory (``--workers N``): a copy another one evicted or
replaced is fetched again, never answered 404 on a 304. A partial download is
``tmp/<pid>.<random>.part``; at start the ones whose process is gone (a crash) or older than any
fetch may run are removed and counted. A full disk (ENOSPC) evicts the least recently used copies
this process holds and tries once more; still full, the answer is a 503 with ``Retry-After`` and
``/readyz`` lists the cache as full until a copy is written again. One copy's bytes are written
(hashed on the way) by ``sources.copy_writer``.

A copy is handed out as a ``RemoteCopy``: the file the path check found together with its record,
so nothing after the path check looks a copy up by its path again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import re
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from assetgate.breaker import Breaker
from assetgate.errors import AppError, NotFound, TimedOut, Unavailable, UpstreamFailed
from assetgate.operations.metrics import Metrics
from assetgate.sources.copy_writer import (
    FULL_ERRNOS,
    DiskFull,
    HashingFile,
    date_from,
    free_bytes,
    sweep_partials,
)
from assetgate.sources.remote import Remote, Validators, WriteFailed
from assetgate.web.paths import Located

log = logging.getLogger("assetgate.sources")

_SUFFIX: Final = re.compile(r"[a-z0-9]{1,8}")
RETRY_S: Final = 5.0  # a failing source is asked again after this long while a copy is served
#: On ENOSPC, evict until the disk has this many times the bytes the fetch had written free.
ROOM_FACTOR: Final = 2
MIN_ROOM_BYTES: Final = 16 * 1024 * 1024
OK: Final = "ok"


@dataclass(slots=True)
class Entry:
    """One copy's record in the index: where it is, what the source said, what it was hashed to."""

    path: str
    validators: Validators
    size: int
    checked: float  # monotonic time of the last answer from the source; -inf: never (restart)
    indexed: float = -float("inf")  # ``checked`` when its fingerprint was last shared
    fingerprint: str | None = None  # hashed while written (None: a copy a previous run left)
    public: str | None = None  # the public path it answers ("/img/a.jpg"), for a purge
    held: bool = True  # False once dropped or replaced: a request still holding it shares nothing


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteCopy(Located):
    """A remote object's copy as the source cache hands it out: the file the path check found
    (a ``Located``, so every later step works on it unchanged) and the copy's own record. The
    steps after the path check read the record from here (the fingerprint it was hashed to, the
    ident its variants' alias and shared fingerprint are named by) instead of looking the copy
    up by path again; and it stays the record of the bytes this request answers, even when a
    newer copy replaces them meanwhile."""

    ident: str  # its file name: every node names an object alike (``Copies.ident``)
    entry: Entry


def _failing(source: str) -> None:
    log.warning("source %s failing; serving the copies held here", source)


class Copies:
    def __init__(
        self, root: Path, budget_bytes: int, ttl_s: float, metrics: Metrics | None = None
    ) -> None:
        self.root = root
        self.budget_bytes = budget_bytes
        self.ttl_s = ttl_s
        self.metrics = metrics
        self.used_bytes = 0
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._flights: dict[str, asyncio.Task[RemoteCopy]] = {}
        self._failing: dict[str, Breaker] = {}  # per source name: logged once while it fails
        self.full = False  # the last copy could not be written for lack of space
        self.swept = sweep_partials(root / "tmp")
        if self.swept:
            log.warning("source cache: removed %d partial downloads a stopped run left", self.swept)
            if metrics is not None:
                metrics.source_cache_events.labels(event="partial_removed").inc(self.swept)

    def ident(self, remote: Remote, key: str) -> str:
        """The copy's file name: a hash of source and key, with the key's extension kept (media
        types and the CSS/JS floor go by the file's name)."""
        digest = hashlib.blake2b(f"{remote.ident}\0{key}".encode(), digest_size=20).hexdigest()
        suffix = key.rpartition("/")[2].rpartition(".")[2].lower() if "." in key else ""
        return f"{digest}.{suffix}" if _SUFFIX.fullmatch(suffix) else digest

    def fresh(self, ident: str) -> bool:
        """Whether a copy is held that needs no word from its source yet."""
        entry = self._entries.get(ident)
        return entry is not None and time.monotonic() < entry.checked + self.ttl_s

    async def locate(
        self, remote: Remote, key: str, max_bytes: int, public: str | None = None
    ) -> RemoteCopy:
        """The local copy of ``key`` from ``remote``, fetched or revalidated when due;
        ``public``: the path it answers, kept beside the copy so a purge of a folder finds it."""
        ident = self.ident(remote, key)
        entry = self._entries.get(ident)
        if entry is not None and time.monotonic() < entry.checked + self.ttl_s:
            try:
                info = os.stat(entry.path)
            except OSError:
                self._forget(ident)
            else:
                self._entries.move_to_end(ident)
                self._count(remote, "hit")
                return self._copy(ident, entry, info)
        flight = self._flights.get(ident)
        if flight is None:
            flight = asyncio.get_running_loop().create_task(
                self._refresh(remote, key, ident, max_bytes, public)
            )
            self._flights[ident] = flight
            flight.add_done_callback(lambda _done: self._flights.pop(ident, None))
        return await asyncio.shield(flight)

    async def _refresh(
        self, remote: Remote, key: str, ident: str, max_bytes: int, public: str | None
    ) -> RemoteCopy:
        entry = self._entries.get(ident) or self._recall(ident)  # a miss: one failed open
        if entry is not None and not os.path.exists(entry.path):
            self._forget(ident)  # gone (another process evicted it): no validators to send
            entry = None
        try:
            return await self._fetch(remote, key, ident, max_bytes, entry, public)
        except DiskFull as full:
            freed = self._make_room(full.written, keep=ident)
            if freed:
                try:
                    return await self._fetch(remote, key, ident, max_bytes, entry, public)
                except DiskFull:
                    pass
            if not self.full:
                log.warning("source cache disk is full; new objects are answered 503")
            self.full = True
            self._event("disk_full")
            raise Unavailable(
                "source cache is full, retry later", headers={"Retry-After": "5"}
            ) from None

    async def _fetch(
        self,
        remote: Remote,
        key: str,
        ident: str,
        max_bytes: int,
        entry: Entry | None,
        public: str | None,
    ) -> RemoteCopy:
        """One fetch into a new copy (conditional when ``entry`` is held), or the held copy on a
        304; a 304 whose copy vanished meanwhile fetches again, unconditionally."""
        final = self._path(ident)
        tmp = self.root / "tmp" / f"{os.getpid()}.{uuid.uuid4().hex}.part"
        started = time.perf_counter()
        sink: HashingFile | None = None
        try:
            tmp.parent.mkdir(parents=True, exist_ok=True)
            sink = HashingFile(tmp)
            try:
                got = await remote.fetch(key, entry.validators if entry else None, sink, max_bytes)
            finally:
                await sink.close()
            if got is not None:
                date_from(tmp, got.last_modified)
                final.parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp, final)
        except AppError as exc:
            tmp.unlink(missing_ok=True)
            self._fetched(remote, started, 0, error=str(exc.status))
            if isinstance(exc, NotFound):
                self._forget(ident)
            elif isinstance(exc, (UpstreamFailed, TimedOut)) and entry is not None:
                return self._stale(remote, ident, entry)
            raise
        except (OSError, WriteFailed) as exc:
            tmp.unlink(missing_ok=True)
            error = exc.error if isinstance(exc, WriteFailed) else exc
            if error.errno in FULL_ERRNOS:
                raise DiskFull(sink.size if sink is not None else 0) from None
            raise error from None
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        now = time.monotonic()
        if remote.name in self._failing:
            self._failing[remote.name].succeeded()
        if got is None and entry is not None:  # not modified: the copy is current
            tmp.unlink(missing_ok=True)
            self._fetched(remote, started, 0, result="revalidated")
            entry.checked = now
            try:
                return self._held(ident, entry)
            except AppError:  # the copy vanished after the check above: fetch it whole
                return await self._fetch(remote, key, ident, max_bytes, None, public)
        assert got is not None
        assert sink is not None
        size = sink.size
        self._write_meta(final, got, public)
        self._fetched(remote, started, size, result="miss")
        self.full = False
        old = self._entries.pop(ident, None)
        if old is not None:
            self.used_bytes -= old.size
            old.held = False
        entry = Entry(
            str(final), got, size, now, fingerprint=sink.digest.hexdigest(), public=public
        )
        self._entries[ident] = entry
        self.used_bytes += size
        self._evict(keep=ident)
        return self._held(ident, entry)

    def _make_room(self, written: int, keep: str) -> bool:
        """Evict the least recently used copies until the disk has room for ``written`` bytes
        ``ROOM_FACTOR`` times over (at least ``MIN_ROOM_BYTES``); whether any was evicted."""
        wanted = max(written * ROOM_FACTOR, MIN_ROOM_BYTES)
        evicted = 0
        for ident in list(self._entries):
            if free_bytes(self.root) >= wanted:
                break
            if ident != keep:
                self._forget(ident)
                evicted += 1
        if evicted:
            self._event("evicted_for_space", evicted)
        return evicted > 0

    async def check(self) -> str:
        """``/readyz``: whether new copies can be written."""
        return "full (new objects answered 503)" if self.full else OK

    def _event(self, event: str, count: int = 1) -> None:
        if self.metrics is not None:
            self.metrics.source_cache_events.labels(event=event).inc(count)

    def _held(self, ident: str, entry: Entry) -> RemoteCopy:
        self._entries.move_to_end(ident)
        try:
            info = os.stat(entry.path)
        except OSError:
            self._forget(ident)
            raise AppError.not_found() from None
        return self._copy(ident, entry, info)

    def _copy(self, ident: str, entry: Entry, info: os.stat_result) -> RemoteCopy:
        fresh_until = entry.checked + self.ttl_s
        return RemoteCopy(entry.path, info, fresh_until=fresh_until, ident=ident, entry=entry)

    def _stale(self, remote: Remote, ident: str, entry: Entry) -> RemoteCopy:
        """The source failed: serve the copy, ask again after ``RETRY_S``."""
        breaker = self._failing.get(remote.name)
        if breaker is None:
            breaker = self._failing[remote.name] = Breaker(
                cooldown_s=RETRY_S, on_open=lambda _exc: _failing(remote.name)
            )
        breaker.failed()
        entry.checked = time.monotonic() - self.ttl_s + min(RETRY_S, self.ttl_s)
        self._entries[ident] = entry
        self._count(remote, "stale")
        return self._held(ident, entry)

    def _path(self, ident: str) -> Path:
        return self.root / ident[:2] / ident

    def _recall(self, ident: str) -> Entry | None:
        """A copy a previous run left, with its validators: revalidated, not fetched again. On the
        event loop: a small ``.meta`` file, and for a copy never fetched one failed ``open``,
        cost less than a worker thread's round trip (which waits when renders hold the threads)."""
        path = self._path(ident)
        try:
            meta = json.loads(path.with_suffix(".meta").read_text())
            size = path.stat().st_size
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict):
            return None
        validators = Validators(meta.get("etag"), meta.get("last_modified"))
        self.used_bytes += size
        public = meta.get("path")
        entry = Entry(str(path), validators, size, -float("inf"))
        entry.public = public if isinstance(public, str) else None
        self._entries[ident] = entry
        return entry

    def _write_meta(self, final: Path, got: Validators, public: str | None) -> None:
        meta = {"etag": got.etag, "last_modified": got.last_modified, "path": public}
        tmp = final.with_suffix(f".{uuid.uuid4().hex}.tmp")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(meta))
            os.replace(tmp, final.with_suffix(".meta"))

    def purge(self, idents: set[str], prefixes: tuple[str, ...]) -> list[str]:
        """Delete the copies ``idents`` and every copy whose public path starts with one of
        ``prefixes`` (also those a previous run left, found by their ``.meta``); the files
        deleted. Blocks on the disk: a purge is rare."""
        named = set(idents)
        if prefixes:
            named |= {
                ident
                for ident, entry in self._entries.items()
                if entry.public is not None and entry.public.startswith(prefixes)
            }
            named |= set(self._left_under(prefixes))
        deleted: list[str] = []
        for ident in sorted(named):
            path = self._path(ident)
            if path.exists():
                deleted.append(str(path))
            self._forget(ident)
        return deleted

    def _left_under(self, prefixes: tuple[str, ...]) -> list[str]:
        """Idents of the copies on disk whose ``.meta`` names a path under ``prefixes``."""
        found: list[str] = []
        with contextlib.suppress(OSError):
            for folder in self.root.iterdir():
                if not folder.is_dir() or folder.name == "tmp":
                    continue
                for meta in folder.glob("*.meta"):
                    with contextlib.suppress(OSError, ValueError):
                        public = json.loads(meta.read_text()).get("path")
                        if isinstance(public, str) and public.startswith(prefixes):
                            found.append(meta.name.removesuffix(".meta"))
        return found

    def _forget(self, ident: str) -> None:
        entry = self._entries.pop(ident, None)
        if entry is not None:
            self.used_bytes -= entry.size
            entry.held = False
        path = self._path(ident)
        for stale in (path, path.with_suffix(".meta")):
            with contextlib.suppress(OSError):
                stale.unlink()

    def _evict(self, keep: str) -> None:
        while self.used_bytes > self.budget_bytes and len(self._entries) > 1:
            oldest = next(iter(self._entries))
            if oldest == keep:
                self._entries.move_to_end(keep)
                continue
            self._forget(oldest)

    def _count(self, remote: Remote, result: str) -> None:
        if self.metrics is not None:
            self.metrics.source_cache.labels(source=remote.name, result=result).inc()

    def _fetched(
        self,
        remote: Remote,
        started: float,
        size: int,
        *,
        result: str | None = None,
        error: str | None = None,
    ) -> None:
        metrics = self.metrics
        if metrics is None:
            return
        labels = {"source": remote.name, "kind": remote.kind}
        metrics.source_fetch_seconds.labels(**labels).observe(time.perf_counter() - started)
        if size:
            metrics.source_fetch_bytes.labels(**labels).inc(size)
        if error is not None:
            metrics.source_fetch_errors.labels(**labels, status=error).inc()
        if result is not None:
            self._count(remote, result)
