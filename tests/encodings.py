"""Compressed bodies as a hostile upstream sends them: stacked codings and small bombs.

Built once per test session (compressing 64 MiB of zeros takes a moment); a bomb is ~65 KB once
gzipped and ~200 bytes twice (the ~1.8 KB, 1 GiB one of issue 35 is the same thing, larger).
"""

from __future__ import annotations

import functools
import gzip
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager

BOMB_BYTES = 64 * 1024 * 1024


@functools.cache
def gzip_bomb() -> bytes:
    """``BOMB_BYTES`` of zeros, gzipped once."""
    return gzip.compress(bytes(BOMB_BYTES), compresslevel=9, mtime=0)


@functools.cache
def stacked_bomb() -> bytes:
    """The same, gzipped twice: sent as ``Content-Encoding: gzip, gzip``."""
    return gzip.compress(gzip_bomb(), compresslevel=9, mtime=0)


def stacked(body: bytes) -> bytes:
    """A harmless body under ``gzip, gzip``: what a stack looks like when it is no bomb."""
    return gzip.compress(gzip.compress(body, mtime=0), mtime=0)


@contextmanager
def peak_memory() -> Iterator[list[int]]:
    """The peak of Python's allocations (zlib's output buffers included) inside the block."""
    found: list[int] = []
    tracemalloc.start()
    try:
        yield found
    finally:
        found.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
