"""One audited gate from an untrusted URL path to a file under a root (cf. werkzeug safe_join).

Every refusal is ``None``; callers answer 404 with the same text as a missing file, so the gate is
no oracle. The checks are lexical first (cheap, no filesystem access for hostile input), then the
path is walked with ``lstat`` and a symlink anywhere on it goes through a ``realpath`` containment
check, which catches symlinks that leave the root. The one ``stat`` the gate needs to know it found
a regular file is handed back, so no caller stats the file again.
"""

from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

MAX_PATH_CHARS = 1024
_FORBIDDEN_CHARS = re.compile(r"[\x00-\x1f\x7f\\:]")


def clean_relative(untrusted: str, *, reserved: tuple[str, ...] = ()) -> str | None:
    """Return a normalised relative POSIX path, or None when the input is unsafe.

    The value is decoded once more so that ``%2e%2e`` that survived URL decoding (double
    encoding) cannot slip through; a path that still contains ``%`` after that is refused.
    """
    if not untrusted or len(untrusted) > MAX_PATH_CHARS:
        return None
    decoded = unquote(untrusted)
    if "%" in decoded or _FORBIDDEN_CHARS.search(decoded):
        return None
    if decoded.startswith("/") or decoded.startswith("~"):
        return None
    parts = decoded.split("/")
    if parts and parts[-1] == "":
        return None  # a directory, never a file
    for part in parts:
        if part in ("", ".", "..") or part.startswith("."):
            return None
    cleaned = "/".join(parts)
    lowered = cleaned.lower()
    for prefix in reserved:
        if lowered == prefix.rstrip("/") or lowered.startswith(prefix):
            return None
    return cleaned


@dataclass(frozen=True, slots=True)
class Located:
    real: str  # real path, under the root (a str: building a Path costs more than the lstat)
    stat: os.stat_result  # of that regular file, taken by the gate
    direct: bool = True  # no symlink on the way: ``real`` is the path the URL named
    depth: int = 0  # directories between the root and the file (a replay re-checks each)
    # monotonic time until which the file may be answered without asking its source again (a
    # remote source's local copy: sources.copies); a directory's file is always current
    fresh_until: float = math.inf

    @property
    def path(self) -> Path:
        return Path(self.real)


def resolve_under(root: Path, untrusted: str, *, reserved: tuple[str, ...] = ()) -> Located | None:
    """The regular file under ``root`` named by ``untrusted``, with its stat, or None."""
    return locate(os.path.realpath(root), untrusted, reserved=reserved)


def locate(real_root: str, untrusted: str, *, reserved: tuple[str, ...] = ()) -> Located | None:
    """``resolve_under`` for a root already made real (once, by the caller's lifespan).

    The components are walked with ``lstat`` (one call for a file at the top): with no symlink on
    the way the file is beneath the root by construction, since ``..`` never passes
    ``clean_relative``; with one, ``realpath`` and a containment check decide.
    """
    cleaned = clean_relative(untrusted, reserved=reserved)
    if cleaned is None:
        return None
    candidate = f"{real_root.rstrip('/')}/{cleaned}"
    try:
        info = os.lstat(candidate)
        linked = stat.S_ISLNK(info.st_mode) or _through_symlink(candidate, cleaned.count("/"))
    except OSError:
        return None
    if linked:
        return _locate_linked(real_root, candidate)
    depth = cleaned.count("/")
    return Located(candidate, info, depth=depth) if stat.S_ISREG(info.st_mode) else None


def still_direct(real: str, depth: int) -> os.stat_result | None:
    """The ``lstat`` of a file the gate found with no symlink on its way, or None when the file
    or one of the ``depth`` directories above it is now a symlink (or gone): a directory
    swapped for a link leaving the root must not keep the old answer."""
    try:
        info = os.lstat(real)
        if stat.S_ISLNK(info.st_mode) or _through_symlink(real, depth):
            return None
    except OSError:
        return None
    return info


def _through_symlink(candidate: str, depth: int) -> bool:
    """Whether one of the ``depth`` directories above ``candidate`` (below the root) is a symlink;
    OSError when one is missing."""
    path = candidate
    for _ in range(depth):
        path = os.path.dirname(path)
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return True
    return False


def _locate_linked(real_root: str, candidate: str) -> Located | None:
    real = os.path.realpath(candidate)
    if os.path.commonpath([real_root, real]) != real_root or real == real_root:
        return None
    try:
        info = os.stat(real)
    except OSError:
        return None
    return Located(real, info, direct=False) if stat.S_ISREG(info.st_mode) else None
