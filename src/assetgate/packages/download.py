"""A verified download: an upstream object streamed to a temporary file while it is hashed, and
refused before anything is kept when the hash is not the one the registry or catalog promised.

The body is read by ``web.upstream_body`` (one content coding at most, capped on decoded bytes).
Statuses: 404 upstream -> 404 ``<what> not found upstream``; 401/403 -> ``UpstreamRefused`` (the
caller names the registry and the credential); another status, a bad body or no connection ->
502; over ``max_bytes`` -> 413; over ``DOWNLOAD_DEADLINE_S`` -> 504; a hash mismatch -> 502 and an
error line naming the URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

import httpx

from assetgate.errors import AppError, TimedOut
from assetgate.packages.catalogs import UpstreamRefused
from assetgate.packages.integrity import Expected
from assetgate.packages.store import StoreSink
from assetgate.packages.tarball import CHUNK_BYTES, StoredBlob
from assetgate.web.upstream_body import BadBody, BodyOverCap, decoded_chunks

log = logging.getLogger("assetgate.packages")

DOWNLOAD_DEADLINE_S: Final = 60.0


@contextlib.contextmanager
def temp_file(directory: Path) -> Iterator[Path]:
    """A new empty file in ``directory`` (the store's, so a rename never crosses a disk),
    removed on the way out."""
    fd, name = tempfile.mkstemp(dir=directory, prefix="dl-")
    os.close(fd)
    try:
        yield Path(name)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


async def download_verified(
    http: httpx.AsyncClient,
    url: str,
    target: Path,
    expected: Expected | None,
    max_bytes: int,
    what: str,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Stream ``url`` into ``target`` while hashing; verify before returning. ``headers``:
    the registry's credential, when one covers ``url``."""
    digest = expected.new_hash() if expected is not None else None
    try:
        async with asyncio.timeout(DOWNLOAD_DEADLINE_S):
            async with http.stream("GET", url, headers=headers) as response:
                if response.status_code == 404:
                    raise AppError.not_found(f"{what} not found upstream")
                if response.status_code in (401, 403):
                    raise UpstreamRefused(response.status_code)
                if response.status_code != 200:
                    raise AppError.upstream(f"{what}: upstream answered {response.status_code}")
                with target.open("wb") as out:
                    async for chunk in decoded_chunks(response, max_bytes):
                        if digest is not None:
                            digest.update(chunk)
                        out.write(chunk)
    except BodyOverCap as exc:
        raise AppError.too_large(f"{what} exceeds the configured size limit") from exc
    except BadBody as exc:
        raise AppError.upstream(f"{what}: upstream {exc.reason}") from exc
    except TimeoutError as exc:
        raise TimedOut(f"{what}: download timed out") from exc
    except httpx.HTTPError as exc:
        raise AppError.upstream(f"{what}: upstream unreachable") from exc
    if expected is not None and digest is not None and not expected.matches(digest.digest()):
        log.error("integrity mismatch for %s (%s)", url, expected.algorithm)
        raise AppError.upstream(f"{what} failed its integrity check; nothing was stored")


def put_file(sink: StoreSink, path: Path, suffix: str) -> StoredBlob:
    """The downloaded file at ``path`` into the store's blobs (a worker thread's job)."""

    def chunks() -> Iterator[bytes]:
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                yield chunk

    return sink.put(chunks(), suffix)
