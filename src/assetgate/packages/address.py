"""URL path under ``/npm/`` -> what is asked for: a package file, a default file or a library file.

Pure (no I/O). The path is taken *raw* (before percent-decoding) and each segment is decoded once
here, so ``%2f`` or ``%5c`` hidden inside a segment, ``%00`` and dot segments are refused instead
of silently becoming separators. Names follow npm's rule (docs/packages.md); a library is a
cdnjs-style name. The one ambiguity of the URL space, an npm package literally named ``lib``, is
settled as docs/packages.md says: ``lib/<name>@<version>/…`` is the library route, anything else
under ``lib/`` is the package ``lib``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, unquote

PACKAGE_NAME: Final = re.compile(
    r"(?:@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*", flags=re.IGNORECASE
)
LIBRARY_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
EXACT_LIBRARY_VERSION: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")
# What a version, a dist-tag or an npm range may hold (``^3``, ``>=1 <2``, ``1 || 2``, ``beta``).
VERSION_SPEC: Final = re.compile(r"[0-9A-Za-z.^~<>=| *+_-]{1,256}")
MAX_NAME_CHARS: Final = 214
MAX_FILE_PATH_CHARS: Final = 1024
MAX_SEGMENT_CHARS: Final = 255
RESERVED_NAMES: Final = frozenset({".", "..", "node_modules", "favicon.ico"})
_BAD_CHARS: Final = re.compile(r"[\x00-\x1f\x7f\\]")
ESM_SUFFIX: Final = "+esm"  # the last segment of a built ES module's address


@dataclass(frozen=True, slots=True)
class PackageAddress:
    """``/npm/<name>[@<spec>][/<file>]``; ``file`` is None when the default file is asked for."""

    name: str
    spec: str  # version, tag or range as written; "" when the URL names no version
    file: str | None
    directory: bool = False  # the path ended in "/" below the package root (a folder)

    @property
    def module(self) -> str | None:
        """The package subpath of a built ES module's address (``…/+esm``), else None."""
        if self.file is None or self.directory or self.file.split("/")[-1] != ESM_SUFFIX:
            return None
        return self.file.removesuffix(ESM_SUFFIX).rstrip("/")

    def with_version(self, version: str) -> str:
        """The same address pinned to ``version`` (the Location of a range/tag redirect)."""
        file = "" if self.file is None else quote(self.file, safe="/+")
        tail = "/" if self.file is None else "/" + file + ("/" if self.directory else "")
        return f"/npm/{self.name}@{quote(version, safe='')}{tail}"


@dataclass(frozen=True, slots=True)
class LibraryAddress:
    """``/npm/lib/<library>@<version>/<file>``; ``file`` may be empty (no file named)."""

    name: str
    version: str
    file: str


Address = PackageAddress | LibraryAddress


def _decode_segment(raw: str) -> str | None:
    segment = unquote(raw, errors="strict") if "%" in raw else raw
    if (
        "/" in segment
        or "%" in segment
        or _BAD_CHARS.search(segment)
        or segment in ("", ".", "..")
        or len(segment) > MAX_SEGMENT_CHARS
    ):
        return None
    return segment


def parse_file_path(raw_segments: list[str]) -> str | None:
    """Raw URL segments of a file path -> ``a/b/c.js``, or None when any segment is unsafe."""
    decoded: list[str] = []
    for raw in raw_segments:
        try:
            segment = _decode_segment(raw)
        except UnicodeDecodeError:
            return None
        if segment is None:
            return None
        decoded.append(segment)
    path = "/".join(decoded)
    return path if len(path) <= MAX_FILE_PATH_CHARS else None


def is_package_name(name: str) -> bool:
    return (
        len(name) <= MAX_NAME_CHARS
        and name.lower() not in RESERVED_NAMES
        and PACKAGE_NAME.fullmatch(name) is not None
    )


def is_version_spec(spec: str) -> bool:
    return VERSION_SPEC.fullmatch(spec) is not None


def _split_name_spec(segment: str) -> tuple[str, str | None]:
    name, at, spec = segment.partition("@")
    return name, (spec if at else None)


def parse_address(raw_rest: str) -> Address | None:
    """The raw path after ``/npm/`` -> an address, or None (answered 404) when it is not one."""
    raw_segments = raw_rest.split("/")
    trailing_slash = len(raw_segments) > 1 and raw_segments[-1] == ""
    if trailing_slash:
        raw_segments = raw_segments[:-1]
    try:
        head = [unquote(s, errors="strict") for s in raw_segments[:2]]
    except UnicodeDecodeError:
        return None
    if not head or not head[0]:
        return None

    if head[0] == "lib" and len(head) > 1:
        lib_name, lib_version = _split_name_spec(head[1])
        if lib_version is not None:
            return _library(lib_name, lib_version, raw_segments[2:], trailing_slash)

    if head[0].startswith("@"):
        if len(head) < 2:
            return None
        scope = head[0]
        name_part, spec = _split_name_spec(head[1])
        name = f"{scope}/{name_part}"
        rest = raw_segments[2:]
    else:
        name, spec = _split_name_spec(head[0])
        rest = raw_segments[1:]
    if "/" in head[0] or not is_package_name(name):
        return None
    if spec is not None and not is_version_spec(spec):
        return None
    if not rest:
        return PackageAddress(name=name, spec=spec or "", file=None)
    file = parse_file_path(rest)
    if file is None:
        return None
    return PackageAddress(name=name, spec=spec or "", file=file, directory=trailing_slash)


def _library(
    name: str, version: str, raw_file: list[str], trailing_slash: bool
) -> LibraryAddress | None:
    if not LIBRARY_NAME.fullmatch(name) or not EXACT_LIBRARY_VERSION.fullmatch(version):
        return None
    if not raw_file:
        return LibraryAddress(name=name, version=version, file="")
    if trailing_slash:
        return None  # library folders are not listed
    file = parse_file_path(raw_file)
    if file is None:
        return None
    return LibraryAddress(name=name, version=version, file=file)
