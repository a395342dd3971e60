"""Upload file names -> safe output names, and the extension gate of spec §4.3.

Pure: no I/O. A client-supplied file name is untrusted text: it may carry directories (``../x``,
``C:\\x``), control characters, or collide with another upload's name. Only its last path
segment survives, reduced to a conservative character set, and duplicates are numbered in upload
order (``a.webp``, ``a-1.webp``) the way browsers number downloads.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Final
from urllib.parse import quote

from assetgate.imaging.formats import IMAGE_EXTENSIONS

OUTPUT_SUFFIX: Final = ".webp"
FALLBACK_STEM: Final = "image"
MAX_STEM_CHARS: Final = 100
MAX_SHOWN_NAME_CHARS: Final = 80

_UNSAFE: Final = re.compile(r"[^\w.\- ()\[\]+,=@~]")
# Windows opens the device, not a file, for these names whatever follows the first dot
# (``con.webp``, ``LPT1.tar.webp``), so extracting such an entry fails or writes to a port.
_DEVICE: Final = re.compile(
    r"(?:con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])"
    r"[ .]*(?:\..*)?",
    re.IGNORECASE,
)


def base_name(filename: str) -> str:
    """The last segment of a client path; both separators, as Windows browsers send ``C:\\x``."""
    return re.split(r"[/\\]", filename)[-1]


def extension(filename: str) -> str:
    name = base_name(filename)
    stem, dot, ext = name.rpartition(".")
    return ext.lower() if dot and stem.strip(". ") else ""


def has_image_extension(filename: str) -> bool:
    return extension(filename) in IMAGE_EXTENSIONS


def shown_name(filename: str) -> str:
    """The file name as an error message may repeat it: one line, printable, bounded."""
    cleaned = "".join(ch if ch.isprintable() else "?" for ch in base_name(filename))
    if len(cleaned) > MAX_SHOWN_NAME_CHARS:
        cleaned = cleaned[: MAX_SHOWN_NAME_CHARS - 1] + "…"
    return cleaned or "(unnamed)"


def safe_stem(filename: str) -> str:
    """A stem fit for a ZIP entry and a Content-Disposition: no directories, no ``..``."""
    name = unicodedata.normalize("NFC", base_name(filename))
    stem = name.rpartition(".")[0] if extension(filename) else name
    stem = re.sub(" +", " ", _UNSAFE.sub("_", stem))
    # Leading dots would make hidden files or ``..``; trailing dots and spaces are dropped by
    # Windows when extracting, which would make two distinct entries collide.
    stem = stem.strip(" .")
    stem = stem[:MAX_STEM_CHARS].rstrip(" .")
    if _DEVICE.fullmatch(stem):
        stem = "_" + stem
    return stem or FALLBACK_STEM


def make_entry_names(filenames: Sequence[str]) -> list[str]:
    """``<stem>.webp`` per upload, in upload order, unique without regard to case.

    Case-insensitive uniqueness because the archive is usually extracted onto a filesystem that
    folds case (macOS, Windows), where ``A.webp`` and ``a.webp`` would overwrite each other.
    """
    stems = [safe_stem(name) for name in filenames]
    taken = {stem.casefold() for stem in stems}
    used: set[str] = set()
    names: list[str] = []
    for stem in stems:
        candidate = stem
        number = 0
        # A numbered name that another upload carries as its own (``a-1.png``) is left to it.
        while candidate.casefold() in used or (number and candidate.casefold() in taken):
            number += 1
            candidate = f"{stem}-{number}"
        used.add(candidate.casefold())
        names.append(candidate + OUTPUT_SUFFIX)
    return names


def make_content_disposition(name: str) -> str:
    """``attachment`` with an ASCII ``filename`` and, when needed, RFC 6266/8187 ``filename*``."""
    ascii_name = name.encode("ascii", "replace").decode("ascii").replace("?", "_")
    ascii_name = ascii_name.replace("\\", "_").replace('"', "_")
    if ascii_name == name:
        return f'attachment; filename="{name}"'
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"
