"""Converted files -> one ZIP archive on disk, entry by entry (never the archive in memory).

Entries are stored, not deflated: WebP is already compressed, so deflate would burn CPU to save
well under one percent. Each entry is copied from its file in chunks, so the peak memory of a
twenty-file archive is one copy buffer.
"""

from __future__ import annotations

import shutil
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

COPY_BUFFER_BYTES: Final = 256 * 1024


def write_zip(entries: Sequence[tuple[str, Path]], destination: Path) -> int:
    """Write ``(entry name, file)`` pairs in order to ``destination``; return its size in bytes."""
    stamp = time.localtime()[:6]
    with zipfile.ZipFile(destination, "x", compression=zipfile.ZIP_STORED) as archive:
        for name, path in entries:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            info.file_size = path.stat().st_size
            with path.open("rb") as source, archive.open(info, "w") as target:
                shutil.copyfileobj(source, target, COPY_BUFFER_BYTES)
    return destination.stat().st_size
