"""Where a path's bytes live: the mounts of ``ASSETGATE_ROOT`` and ``ASSETGATE_SOURCES``, parsed.

Pure: text in, frozen values out. A mount maps a path prefix to a directory, an S3 bucket (with an
optional key prefix) or an origin web server (with an optional path prefix); the longest prefix
wins. Every source has a *name* used in answers and logs: the mount's prefix (``/`` for the root,
``/products/``...), never a host, bucket or address, so an error can say which source failed
without telling a client anything about the inside (docs/sources.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit


@dataclass(frozen=True, slots=True)
class Directory:
    path: Path


@dataclass(frozen=True, slots=True)
class Bucket:
    bucket: str
    prefix: str  # "" or "a/b" (no slash at either end)

    @property
    def ident(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"


@dataclass(frozen=True, slots=True)
class Origin:
    scheme: str  # http | https
    host: str  # a name or an address (IPv6 without brackets)
    port: int
    base: str  # "" or "/a/b": what a path is appended to

    @property
    def ident(self) -> str:
        return f"{self.scheme}://{self.authority}{self.base}"

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


Location = Directory | Bucket | Origin


@dataclass(frozen=True, slots=True)
class Mount:
    prefix: str  # "" (everything) or "products/" (relative, ends with "/")
    location: Location

    @property
    def name(self) -> str:
        return "/" + self.prefix


def parse_location(text: str | Path) -> Location:
    """A directory path, ``s3://bucket[/prefix]`` or ``http(s)://host[:port][/prefix]``.

    The settings checked the URL's shape at start; this only takes it apart."""
    if isinstance(text, Path) or "://" not in text:
        return Directory(Path(text))
    parts = urlsplit(text)
    assert parts.hostname is not None
    if parts.scheme == "s3":
        return Bucket(parts.netloc, parts.path.strip("/"))
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return Origin(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))


def parse_mounts(root: str | Path, sources: Mapping[str, str]) -> tuple[Mount, ...]:
    """The mounts, longest prefix first; ``root`` is the mount of ``""`` unless ``sources``
    names one itself."""
    table = {_prefix(prefix): parse_location(text) for prefix, text in sources.items()}
    table.setdefault("", parse_location(root))
    return tuple(
        Mount(prefix, location)
        for prefix, location in sorted(table.items(), key=lambda item: -len(item[0]))
    )


def _prefix(text: str) -> str:
    stripped = text.strip("/")
    return f"{stripped}/" if stripped else ""


def split(mounts: tuple[Mount, ...], cleaned: str) -> tuple[Mount, str] | None:
    """The mount of a cleaned relative path and the path inside it; None when no mount holds
    it (or it names a mount's own folder)."""
    for mount in mounts:
        if cleaned.startswith(mount.prefix):
            rest = cleaned[len(mount.prefix) :]
            return (mount, rest) if rest else None
    return None
