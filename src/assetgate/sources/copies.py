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
``/readyz`` lists the cache as full until a copy is written again.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import shutil
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Final

import anyio.to_thread

from assetgate.breaker import Breaker
from assetgate.errors import AppError, NotFound, TimedOut, Unavailable, UpstreamFailed
from assetgate.operations.metrics import Metrics
from assetgate.serving.versions import Fingerprint
from assetgate.sources.remote import Remote, Validators, WriteFailed
from assetgate.web.paths import Located

log = logging.getLogger("assetgate.sources")

_SUFFIX: Final = re.compile(r"[a-z0-9]{1,8}")
WRITES_AHEAD: Final = 4  # chunks a copy's writer may fall behind the stream: the memory it holds
RETRY_S: Final = 5.0  # a failing source is asked again after this long while a copy is served
#: A partial download older than this belongs to no running fetch (each has a read deadline).
STALE_PART_S: Final = 3600.0
#: On ENOSPC, evict until the disk has this many times the bytes the fetch had written free.
ROOM_FACTOR: Final = 2
MIN_ROOM_BYTES: Final = 16 * 1024 * 1024
FULL_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EDQUOT})
OK: Final = "ok"


class _DiskFull(Exception):
    """The copy could not be written: no space left (carries the bytes written until then)."""

    def __init__(self, written: int) -> None:
        super().__init__(written)
        self.written = written


@dataclass(slots=True)
class Entry:
    path: str
    validators: Validators
    size: int
    checked: float  # monotonic time of the last answer from the source; -inf: never (restart)
    indexed: float = -float("inf")  # ``checked`` when its fingerprint was last shared (mounts)
    fingerprint: str | None = None  # hashed while written (None: a copy a previous run left)
    public: str | None = None  # the public path it answers ("/img/a.jpg"), for a purge


class _HashingFile:
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
        self._flights: dict[str, asyncio.Task[Located]] = {}
        self._failing: dict[str, Breaker] = {}  # per source name: logged once while it fails
        self._by_path: dict[str, str] = {}
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

    def entry_at(self, path: str) -> tuple[str, Entry] | None:
        """The copy stored at ``path`` (a ``Located.real`` this cache handed out)."""
        ident = self._by_path.get(path)
        entry = None if ident is None else self._entries.get(ident)
        return None if ident is None or entry is None else (ident, entry)

    async def locate(
        self, remote: Remote, key: str, max_bytes: int, public: str | None = None
    ) -> Located:
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
                return Located(entry.path, info, fresh_until=entry.checked + self.ttl_s)
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
    ) -> Located:
        entry = self._entries.get(ident) or self._recall(ident)  # a miss: one failed open
        if entry is not None and not os.path.exists(entry.path):
            self._forget(ident)  # gone (another process evicted it): no validators to send
            entry = None
        try:
            return await self._fetch(remote, key, ident, max_bytes, entry, public)
        except _DiskFull as full:
            freed = self._make_room(full.written, keep=ident)
            if freed:
                try:
                    return await self._fetch(remote, key, ident, max_bytes, entry, public)
                except _DiskFull:
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
    ) -> Located:
        """One fetch into a new copy (conditional when ``entry`` is held), or the held copy on a
        304; a 304 whose copy vanished meanwhile fetches again, unconditionally."""
        final = self._path(ident)
        tmp = self.root / "tmp" / f"{os.getpid()}.{uuid.uuid4().hex}.part"
        started = time.perf_counter()
        sink: _HashingFile | None = None
        try:
            tmp.parent.mkdir(parents=True, exist_ok=True)
            sink = _HashingFile(tmp)
            try:
                got = await remote.fetch(key, entry.validators if entry else None, sink, max_bytes)
            finally:
                await sink.close()
            if got is not None:
                _date_from(tmp, got.last_modified)
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
                raise _DiskFull(sink.size if sink is not None else 0) from None
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
        entry = Entry(
            str(final), got, size, now, fingerprint=sink.digest.hexdigest(), public=public
        )
        self._entries[ident] = entry
        self._by_path[entry.path] = ident
        self.used_bytes += size
        self._evict(keep=ident)
        return self._held(ident, entry)

    def _make_room(self, written: int, keep: str) -> bool:
        """Evict the least recently used copies until the disk has room for ``written`` bytes
        ``ROOM_FACTOR`` times over (at least ``MIN_ROOM_BYTES``); whether any was evicted."""
        wanted = max(written * ROOM_FACTOR, MIN_ROOM_BYTES)
        evicted = 0
        for ident in list(self._entries):
            if _free_bytes(self.root) >= wanted:
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

    def _held(self, ident: str, entry: Entry) -> Located:
        self._entries.move_to_end(ident)
        try:
            info = os.stat(entry.path)
        except OSError:
            self._forget(ident)
            raise AppError.not_found() from None
        return Located(entry.path, info, fresh_until=entry.checked + self.ttl_s)

    def _stale(self, remote: Remote, ident: str, entry: Entry) -> Located:
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
        self._by_path[entry.path] = ident
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
            self._by_path.pop(entry.path, None)
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


def _free_bytes(path: Path) -> int:
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


def _date_from(path: Path, last_modified: str | None) -> None:
    """The copy's mtime is the object's Last-Modified: every node sends the same one."""
    if not last_modified:
        return
    try:
        stamp = parsedate_to_datetime(last_modified).timestamp()
        os.utime(path, (stamp, stamp))
    except (TypeError, ValueError, OverflowError, OSError):
        return
