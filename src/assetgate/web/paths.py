"""One audited gate from an untrusted URL path to a file under a root (cf. werkzeug safe_join).

Every refusal is ``None``; callers answer 404 with the same text as a missing file, so the gate is
no oracle. The checks are lexical first (cheap, no filesystem access for hostile input), then a
``realpath`` containment check catches symlinks that leave the root. The one ``stat`` the gate needs
to know it found a regular file is handed back, so no caller stats the file again.
"""

from __future__ import annotations

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
    path: Path  # real path, under the root
    stat: os.stat_result  # of that regular file, taken by the gate


def resolve_under(root: Path, untrusted: str, *, reserved: tuple[str, ...] = ()) -> Located | None:
    """The regular file under ``root`` named by ``untrusted``, with its stat, or None."""
    cleaned = clean_relative(untrusted, reserved=reserved)
    if cleaned is None:
        return None
    real_root = os.path.realpath(root)
    candidate = os.path.realpath(os.path.join(real_root, cleaned))
    if os.path.commonpath([real_root, candidate]) != real_root or candidate == real_root:
        return None
    try:
        info = os.stat(candidate)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return Located(Path(candidate), info)
