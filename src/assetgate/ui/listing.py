"""Paths of the document root the optimizer can serve (images, CSS, JS) that match a typed text.

Feeds the playground's path completion. The walk is bounded (``MAX_SCANNED`` entries) and skips
what the optimizer refuses anyway: hidden names, the reserved ``cache/`` folder and symbolic links
(a link could lead out of the root), so the listing never shows a path that would answer 404.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from assetgate.imaging.formats import IMAGE_EXTENSIONS
from assetgate.minify.spec import KINDS

MAX_SCANNED: Final = 20_000
#: Longest ``q`` of ``/ui/files`` (the parser and /openapi.json read it here).
QUERY_MAX: Final = 256
SERVABLE: Final = frozenset({*(f".{ext}" for ext in IMAGE_EXTENSIONS), *KINDS})
RESERVED_TOP: Final = "cache"


@dataclass(frozen=True, slots=True)
class Listing:
    files: list[str]
    truncated: bool  # more matches than shown, or the walk stopped at MAX_SCANNED


def is_servable(name: str) -> bool:
    return os.path.splitext(name)[1].lower() in SERVABLE


def list_files(root: Path, query: str, limit: int) -> Listing:
    """Up to ``limit`` relative POSIX paths containing ``query`` (case-insensitive), sorted."""
    needle = query.lower()
    found: list[str] = []
    scanned = 0
    stack = [""]
    while stack:
        relative = stack.pop()
        try:
            entries = sorted(os.scandir(root / relative), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            scanned += 1
            if scanned > MAX_SCANNED:
                return Listing(sorted(found)[:limit], truncated=True)
            if entry.name.startswith(".") or entry.is_symlink():
                continue
            path = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_dir(follow_symlinks=False):
                if path.lower() != RESERVED_TOP:
                    stack.append(path)
            elif is_servable(entry.name) and needle in path.lower():
                found.append(path)
    found.sort()
    return Listing(found[:limit], truncated=len(found) > limit)
