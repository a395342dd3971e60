"""The package store's index: which versions and files exist, over the blobs (docs/packages.md).

Layout under ``ASSETGATE_STORE``::

    index.sqlite3          versions, files, blobs (with reference counts), packuments
    blobs/, tmp/           the file bodies (``packages.blobs``)
    locks/                 one lock file per name@version, for single-flight across processes

A version becomes visible only when its whole file list is committed in one transaction, after
the tarball was verified and unpacked, so a reader never sees half a package. Identical files
(LICENSE, unchanged sources) are stored once. The byte budget counts blob bytes on disk and is
kept by evicting the least recently used versions; access times are collected in memory and
written in batches so serving a warm file costs no write.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from cachetools import LRUCache

from assetgate.packages.blobs import Blobs
from assetgate.packages.tarball import StoredBlob

Namespace = Literal["npm", "lib", "esm"]  # esm: built ES modules of an npm version
CHUNK_BYTES: Final = 64 * 1024
FILE_CACHE_ENTRIES: Final = 8192
VERSION_CACHE_ENTRIES: Final = 8192
TOUCH_FLUSH_S: Final = 30.0

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS versions(
    ns TEXT NOT NULL, name TEXT NOT NULL, version TEXT NOT NULL,
    default_path TEXT, default_reason TEXT,
    bytes INTEGER NOT NULL DEFAULT 0, ingested_at REAL NOT NULL, last_access REAL NOT NULL,
    PRIMARY KEY (ns, name, version));
CREATE TABLE IF NOT EXISTS files(
    ns TEXT NOT NULL, name TEXT NOT NULL, version TEXT NOT NULL, path TEXT NOT NULL,
    blob TEXT NOT NULL, sha256 TEXT NOT NULL, sha512 TEXT NOT NULL, size INTEGER NOT NULL,
    PRIMARY KEY (ns, name, version, path));
CREATE TABLE IF NOT EXISTS blobs(
    blob TEXT PRIMARY KEY, size INTEGER NOT NULL, refs INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS packuments(
    name TEXT PRIMARY KEY, body TEXT NOT NULL, fetched_at REAL NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    blob: str
    sha256: str
    sha512: str
    size: int


@dataclass(frozen=True, slots=True)
class VersionRow:
    default_path: str | None
    default_reason: str | None


VersionKey = tuple[Namespace, str, str]


class StoreSink:
    """BlobSink for one ingest: remembers the blobs it created so a failure can take them back."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.created: set[str] = set()

    def put_bytes(self, data: bytes, suffix: str) -> StoredBlob:
        stored, created = self._store.blobs.put_bytes(data, suffix)
        if created:
            self.created.add(stored.blob)
        return stored

    def put(self, chunks: Iterator[bytes], suffix: str) -> StoredBlob:
        stored, created = self._store.blobs.put(chunks, suffix)
        if created:
            self.created.add(stored.blob)
        return stored

    def discard(self, blobs: set[str]) -> None:
        self._store.delete_unreferenced(blobs & self.created)
        self.created -= blobs


class Store:
    """Index + blobs. Reads run on the event loop (microseconds, WAL never blocks them); writes
    run in worker threads, each on its own short-lived connection."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.locks_dir = root / "locks"
        for folder in (root, self.locks_dir):
            folder.mkdir(parents=True, exist_ok=True)
        self.blobs = Blobs(root)
        self.blobs_dir = self.blobs.dir
        self.tmp_dir = self.blobs.tmp_dir
        self._db_path = root / "index.sqlite3"
        with self._writer() as db:
            db.executescript(_SCHEMA)
        self._reader = self._connect()
        # Rows read from the index, least recently used out. An eviction (a worker thread) empties
        # them while the event loop reads: ``cachetools`` is not thread-safe, hence the lock.
        self._memo_lock = threading.Lock()
        self._files: LRUCache[tuple[str, str, str, str], FileRow] = LRUCache(FILE_CACHE_ENTRIES)
        self._versions: LRUCache[VersionKey, VersionRow] = LRUCache(VERSION_CACHE_ENTRIES)
        self._touched: dict[VersionKey, float] = {}
        self._touch_lock = threading.Lock()
        self._last_flush = time.monotonic()

    # --- connections --------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self._db_path, timeout=30.0, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    @contextlib.contextmanager
    def _writer(self) -> Iterator[sqlite3.Connection]:
        db = self._connect()
        try:
            with db:
                yield db
        finally:
            db.close()

    def close(self) -> None:
        self.flush_touches()
        self._reader.close()

    # --- reads (event loop) -------------------------------------------------------------------
    def version(self, ns: Namespace, name: str, version: str) -> VersionRow | None:
        key = (ns, name, version)
        with self._memo_lock:
            cached = self._versions.get(key)
        if cached is not None:
            return cached
        row = self._reader.execute(
            "SELECT default_path, default_reason FROM versions WHERE ns=? AND name=? AND version=?",
            key,
        ).fetchone()
        if row is None:
            return None
        found = VersionRow(row[0], row[1])
        with self._memo_lock:
            self._versions[key] = found
        return found

    def file(self, ns: Namespace, name: str, version: str, path: str) -> FileRow | None:
        key = (ns, name, version, path)
        with self._memo_lock:
            cached = self._files.get(key)
        if cached is not None:
            return cached
        row = self._reader.execute(
            "SELECT path, blob, sha256, sha512, size FROM files"
            " WHERE ns=? AND name=? AND version=? AND path=?",
            key,
        ).fetchone()
        if row is None:
            return None
        found = FileRow(*row)
        with self._memo_lock:
            self._files[key] = found
        return found

    def files(self, ns: Namespace, name: str, version: str) -> list[FileRow]:
        rows = self._reader.execute(
            "SELECT path, blob, sha256, sha512, size FROM files"
            " WHERE ns=? AND name=? AND version=? ORDER BY path",
            (ns, name, version),
        ).fetchall()
        return [FileRow(*row) for row in rows]

    def blob_path(self, blob: str) -> Path | None:
        return self.blobs.path(blob)

    def total_bytes(self) -> int:
        row = self._reader.execute("SELECT COALESCE(SUM(size), 0) FROM blobs").fetchone()
        return int(row[0])

    def load_packument(self, name: str) -> tuple[float, bytes] | None:
        """When the kept document was fetched, and its JSON as saved (parsed by the one
        packument parser, ``packages.packument``, as a registry's answer is)."""
        row = self._reader.execute(
            "SELECT fetched_at, body FROM packuments WHERE name=?", (name,)
        ).fetchone()
        return None if row is None else (float(row[0]), str(row[1]).encode())

    # --- access times -------------------------------------------------------------------------
    def touch(self, key: VersionKey) -> bool:
        """Record an access; True when a batch is due to be written (call flush_touches)."""
        now = time.time()
        with self._touch_lock:
            self._touched[key] = now
        return time.monotonic() - self._last_flush > TOUCH_FLUSH_S

    def flush_touches(self) -> None:
        with self._touch_lock:
            pending, self._touched = self._touched, {}
            self._last_flush = time.monotonic()
        if not pending:
            return
        with self._writer() as db:
            db.executemany(
                "UPDATE versions SET last_access=MAX(last_access, ?)"
                " WHERE ns=? AND name=? AND version=?",
                [(at, *key) for key, at in pending.items()],
            )

    # --- writes (worker threads) --------------------------------------------------------------
    def new_sink(self) -> StoreSink:
        return StoreSink(self)

    def save_packument(self, name: str, body: object) -> None:
        """``body``: the document, or its JSON text (``catalogs.packument_text``)."""
        text = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
        with self._writer() as db:
            db.execute(
                "INSERT OR REPLACE INTO packuments(name, body, fetched_at) VALUES (?, ?, ?)",
                (name, text, time.time()),
            )

    def commit_version(
        self,
        key: VersionKey,
        files: dict[str, StoredBlob],
        default_path: str | None,
        default_reason: str | None,
    ) -> None:
        """Make a whole version visible at once; a version already present is left as it is."""
        now = time.time()
        with self._writer() as db:
            db.execute("BEGIN IMMEDIATE")
            exists = db.execute(
                "SELECT 1 FROM versions WHERE ns=? AND name=? AND version=?", key
            ).fetchone()
            if exists:
                return
            db.execute(
                "INSERT INTO versions(ns, name, version, default_path, default_reason, bytes,"
                " ingested_at, last_access) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, default_path, default_reason, sum(f.size for f in files.values()), now, now),
            )
            self._insert_files(db, key, files)

    def add_file(self, key: VersionKey, path: str, stored: StoredBlob) -> None:
        """Library versions fill in file by file, as each is first asked for."""
        now = time.time()
        with self._writer() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "INSERT OR IGNORE INTO versions(ns, name, version, bytes, ingested_at, last_access)"
                " VALUES (?, ?, ?, 0, ?, ?)",
                (*key, now, now),
            )
            present = db.execute(
                "SELECT 1 FROM files WHERE ns=? AND name=? AND version=? AND path=?", (*key, path)
            ).fetchone()
            if present:
                return
            db.execute(
                "UPDATE versions SET bytes=bytes+?, last_access=?"
                " WHERE ns=? AND name=? AND version=?",
                (stored.size, now, *key),
            )
            self._insert_files(db, key, {path: stored})

    @staticmethod
    def _insert_files(
        db: sqlite3.Connection, key: VersionKey, files: dict[str, StoredBlob]
    ) -> None:
        db.executemany(
            "INSERT INTO files(ns, name, version, path, blob, sha256, sha512, size)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(*key, p, f.blob, f.sha256, f.sha512, f.size) for p, f in files.items()],
        )
        db.executemany(
            "INSERT INTO blobs(blob, size, refs) VALUES (?, ?, 1)"
            " ON CONFLICT(blob) DO UPDATE SET refs=refs+1",
            [(f.blob, f.size) for f in files.values()],
        )

    def delete_unreferenced(self, blobs: set[str]) -> None:
        if not blobs:
            return
        with self._writer() as db:
            referenced = {
                row[0]
                for blob in blobs
                for row in db.execute("SELECT blob FROM blobs WHERE blob=?", (blob,))
            }
        self.blobs.delete(blobs - referenced)

    def evict(self, keep: VersionKey | None = None) -> list[VersionKey]:
        """Drop least recently used versions until the blobs fit the byte budget."""
        self.flush_touches()
        evicted: list[VersionKey] = []
        doomed: list[str] = []
        with self._writer() as db:
            db.execute("BEGIN IMMEDIATE")
            total = int(db.execute("SELECT COALESCE(SUM(size), 0) FROM blobs").fetchone()[0])
            if total <= self.max_bytes:
                return evicted
            victims = db.execute(
                "SELECT ns, name, version FROM versions ORDER BY last_access, ingested_at"
            ).fetchall()
            for ns, name, version in victims:
                if total <= self.max_bytes:
                    break
                key: VersionKey = (ns, name, version)
                if key == keep:
                    continue
                blob_rows = db.execute(
                    "SELECT blob FROM files WHERE ns=? AND name=? AND version=?", key
                ).fetchall()
                db.execute("DELETE FROM files WHERE ns=? AND name=? AND version=?", key)
                db.execute("DELETE FROM versions WHERE ns=? AND name=? AND version=?", key)
                db.executemany(
                    "UPDATE blobs SET refs=refs-1 WHERE blob=?", [(b,) for (b,) in blob_rows]
                )
                for blob, size in db.execute(
                    "SELECT blob, size FROM blobs WHERE refs<=0"
                ).fetchall():
                    total -= int(size)
                    doomed.append(blob)
                db.execute("DELETE FROM blobs WHERE refs<=0")
                evicted.append(key)
        self.blobs.delete(doomed)
        if evicted:
            self.forget_cached()
        return evicted

    def forget_cached(self) -> None:
        with self._memo_lock:  # new maps, not ``clear()``: that pops 8,192 entries one by one
            self._files = LRUCache(FILE_CACHE_ENTRIES)
            self._versions = LRUCache(VERSION_CACHE_ENTRIES)
        self.blobs.forget()

    def forget(self, key: VersionKey) -> None:
        """Remove a version whose blob vanished (another process evicted it) so it is re-fetched."""
        with self._writer() as db:
            blob_rows = db.execute(
                "SELECT blob FROM files WHERE ns=? AND name=? AND version=?", key
            ).fetchall()
            db.execute("DELETE FROM files WHERE ns=? AND name=? AND version=?", key)
            db.execute("DELETE FROM versions WHERE ns=? AND name=? AND version=?", key)
            db.executemany("UPDATE blobs SET refs=refs-1 WHERE blob=?", blob_rows)
            db.execute("DELETE FROM blobs WHERE refs<=0")
        self.forget_cached()

    @contextlib.contextmanager
    def process_lock(self, key: VersionKey) -> Iterator[None]:
        """Blocking, cross-process lock for one version (call from a worker thread)."""
        digest = hashlib.sha1("\x00".join(key).encode(), usedforsecurity=False).hexdigest()
        with open(self.locks_dir / f"{digest}.lock", "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
