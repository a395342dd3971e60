"""What a remote source (a bucket, an origin) offers the source cache: one conditional fetch.

``fetch`` streams one object into a file the caller opened, stops at ``max_bytes`` (413 without
reading the rest) and answers the object's validators, or ``None`` when the caller's copy is
still current (a 304 / ``NotModified``). Every failure is an ``AppError`` that names the source by
its configured name (the mount, ``/products/``) and nothing else: never a host, address, bucket
key, signature or credential. Statuses: the object is missing -> 404, too large -> 413, the
source refused or failed -> 502, it did not answer in time -> 504.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from dataclasses import dataclass
from typing import Protocol

from assetgate.errors import AppError, TimedOut


@dataclass(frozen=True, slots=True)
class Validators:
    etag: str | None
    last_modified: str | None  # an HTTP-date


class Sink(Protocol):
    async def write(self, chunk: bytes | memoryview) -> None:
        """Keep ``chunk``; ``WriteFailed`` when the local disk cannot (a backend lets it pass)."""
        ...


class WriteFailed(Exception):
    """The sink could not keep a chunk (the local disk, not the source): the ``OSError`` is in
    ``error``. Backends let it through untouched, so a full disk is not read as a 502."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


class Remote(Protocol):
    name: str  # the mount's name: "/" or "/products/"
    kind: str  # "s3" or "http": the metrics label beside the name
    ident: str  # what the source cache keys files by (never shown)

    async def fetch(
        self, key: str, known: Validators | None, sink: Sink, max_bytes: int
    ) -> Validators | None: ...

    async def check(self) -> str: ...

    async def aclose(self) -> None: ...


def too_large(max_bytes: int) -> AppError:
    return AppError.too_large(f"source file is over the limit of {max_bytes} bytes")


async def copy_capped(
    chunks: AsyncIterable[bytes | memoryview], sink: Sink, max_bytes: int
) -> None:
    """Every backend's body into ``sink``, counted as it streams: one byte over ``max_bytes`` is
    the 413 at once, the rest never read (the declared size is not trusted)."""
    total = 0
    async for chunk in chunks:
        total += len(chunk)
        if total > max_bytes:
            raise too_large(max_bytes)
        await sink.write(chunk)


def failed(name: str, why: str) -> AppError:
    return AppError.upstream(f"source {name}: {why}")


def timed_out(name: str, seconds: float) -> AppError:
    return TimedOut(f"source {name}: no answer within {seconds:g} s")
