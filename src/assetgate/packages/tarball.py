"""Streaming, distrustful unpacking of an npm tarball into content-addressed blobs.

Never ``extractall``: the archive is read once as a stream (``r|``) through a counting gzip reader,
and only regular files are kept. An entry name never becomes a filesystem path: it is validated as
a *logical* path (first segment stripped, as npm does whatever it is called) and each file body
goes to a sink that names it by its sha256. Links, devices, FIFOs and directories are skipped.
Caps (docs/packages.md): per-file size, total unpacked size, entry count and the
decompressed/compressed ratio, checked on the declared sizes *before* a body is read and on the
bytes actually decompressed, so a gzip bomb is stopped within one read of the cap.
"""

from __future__ import annotations

import gzip
import io
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO, Final, Protocol

from assetgate.errors import AppError

CHUNK_BYTES: Final = 64 * 1024
IN_MEMORY_MAX_BYTES: Final = 1024 * 1024  # bodies up to this are hashed and written in one go
_BAD_CHARS: Final = re.compile(r"[\x00-\x1f\x7f\\]")
_DRIVE: Final = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True, slots=True)
class TarballLimits:
    max_files: int = 20_000
    max_file_bytes: int = 32 * 1024 * 1024
    max_unpacked_bytes: int = 256 * 1024 * 1024
    max_ratio: int = 100
    ratio_floor_bytes: int = 8 * 1024 * 1024  # small archives may legitimately exceed the ratio


@dataclass(frozen=True, slots=True)
class StoredBlob:
    sha256: str
    sha512: str  # hex
    size: int
    blob: str  # the blob's file name in the store


class BlobSink(Protocol):
    def put(self, chunks: Iterator[bytes], suffix: str) -> StoredBlob: ...

    def put_bytes(self, data: bytes, suffix: str) -> StoredBlob: ...

    def discard(self, blobs: set[str]) -> None: ...


@dataclass(frozen=True, slots=True)
class Unpacked:
    files: dict[str, StoredBlob]
    manifest: bytes | None  # package.json at the package root, when present and <= 1 MiB
    unpacked_bytes: int


def clean_member_name(name: str) -> str | None:
    """``package/dist/a.js`` -> ``dist/a.js``; None for anything unsafe or outside a root folder."""
    if not name or len(name) > 1024 or _BAD_CHARS.search(name) or name.startswith("/"):
        return None
    parts = name.split("/")
    if len(parts) < 2:
        return None  # entries with no folder are ignored, like npm
    rest = [p for p in parts[1:] if p not in ("", ".")]
    if not rest or any(p == ".." or len(p) > 255 for p in rest) or ".." in parts[:1]:
        return None
    if _DRIVE.match(parts[0]) or _DRIVE.match(rest[0]):
        return None
    return "/".join(rest)


def blob_suffix(path: str) -> str:
    """Blobs of CSS/JS keep their type in the name: the asset minifier keys on the suffix."""
    suffix = Path(path).suffix.lower()
    return suffix if suffix in (".js", ".mjs", ".cjs", ".css") else ""


class _CountingReader(io.RawIOBase):
    """Decompressed bytes with a hard ceiling: raising here stops a bomb inside gzip itself."""

    def __init__(self, inner: BinaryIO, ceiling: int) -> None:
        self._inner = inner
        self._ceiling = ceiling
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        data = self._inner.read(len(buffer))
        self.count += len(data)
        if self.count > self._ceiling:
            raise AppError.too_large("package exceeds the unpacked size or compression ratio limit")
        buffer[: len(data)] = data
        return len(data)


def _body(reader: IO[bytes], size: int) -> Iterator[bytes]:
    remaining = size
    while remaining > 0:
        chunk = reader.read(min(CHUNK_BYTES, remaining))
        if not chunk:
            raise AppError.upstream("truncated package archive")
        remaining -= len(chunk)
        yield chunk


def unpack(tarball: Path, sink: BlobSink, limits: TarballLimits = TarballLimits()) -> Unpacked:
    """Read ``tarball`` (gzip'd tar) once; every kept regular file goes to ``sink``.

    The last duplicate of a path wins (npm's behaviour); blobs written for an overwritten entry
    and not used by another path are discarded before returning. On any error every blob written
    by this call is handed back to ``sink.discard`` so nothing half-ingested stays behind.
    """
    compressed = tarball.stat().st_size
    ceiling = min(
        limits.max_unpacked_bytes + 1024 * 1024,  # tar headers and padding on top of the bodies
        max(limits.ratio_floor_bytes, compressed * limits.max_ratio),
    )
    files: dict[str, StoredBlob] = {}
    written: set[str] = set()
    manifest: bytes | None = None
    total = 0
    entries = 0
    try:
        with (
            tarball.open("rb") as raw,
            gzip.GzipFile(fileobj=raw, mode="rb") as gz,
        ):
            counting = _CountingReader(gz, ceiling)  # type: ignore[arg-type]
            stream = io.BufferedReader(counting, buffer_size=CHUNK_BYTES)
            with tarfile.open(fileobj=stream, mode="r|") as archive:
                for member in archive:
                    entries += 1
                    if entries > limits.max_files:
                        raise AppError.too_large("package has too many files")
                    if not member.isreg():
                        continue
                    path = clean_member_name(member.name)
                    if path is None:
                        continue
                    if member.size > limits.max_file_bytes:
                        raise AppError.too_large("a file of the package exceeds the size limit")
                    total += member.size
                    if total > limits.max_unpacked_bytes:
                        raise AppError.too_large("package exceeds the unpacked size limit")
                    reader = archive.extractfile(member)
                    if reader is None:
                        continue
                    if member.size <= IN_MEMORY_MAX_BYTES:
                        data = reader.read(member.size)
                        if len(data) != member.size:
                            raise AppError.upstream("truncated package archive")
                        if path == "package.json":
                            manifest = data
                        stored = sink.put_bytes(data, blob_suffix(path))
                    else:
                        stored = sink.put(_body(reader, member.size), blob_suffix(path))
                    written.add(stored.blob)
                    files[path] = stored
    except AppError:
        sink.discard(written)
        raise
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile, ValueError) as exc:
        sink.discard(written)
        raise AppError.upstream("package archive is not a valid gzip'd tar") from exc
    sink.discard(written - {f.blob for f in files.values()})
    return Unpacked(files=files, manifest=manifest, unpacked_bytes=total)
