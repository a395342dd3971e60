"""Cache tags: the names a CDN (and ``/admin/purge``) can forget a file answer by.

Every file answer (an image variant, an original, a CSS/JS variant, a package file) carries its
tags in the headers CDNs read (``ASSETGATE_CACHE_TAG_HEADERS``): ``Cache-Tag`` (Cloudflare,
comma-separated) and ``Surrogate-Key`` (Fastly, space-separated). The tags of one answer:

- ``path:/img/a.jpg``: the source file, as its public URL names it (the same for ``/?file=``);
- ``dir:/img/``, ``dir:/``: every folder above it, deepest first;
- ``part:optimizer``: the part that answered; ``preset:thumb``: the preset asked for;
- ``npm:<name>`` and ``npm:<name>@<version>`` for a package file.

Pure: one function (``tag``) makes a tag from a kind and a value, for the answer and the purge
alike, so a purge of a path names exactly the tag its answers carried. A character a tag cannot
hold (a comma, a space, a quote, ``%``, a control or non-ASCII character) is percent-encoded; a tag
longer than CloudFront's 256 characters becomes ``<kind>:~<hash>``; at most 50 tags are sent
(CloudFront's limit per object), folders nearest the root dropped first, which keeps the header
under Cloudflare's 16 KB.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

CACHE_TAG: Final = "Cache-Tag"
SURROGATE_KEY: Final = "Surrogate-Key"
EDGE_EXPIRES: Final = "X-Accel-Expires"
#: Header name (lower case, as the setting spells it) -> (header, separator).
HEADERS: Final = {"cache-tag": (CACHE_TAG, ","), "surrogate-key": (SURROGATE_KEY, " ")}
MAX_TAGS: Final = 50  # CloudFront: tags per object
MAX_TAG_CHARS: Final = 256  # CloudFront: characters per tag
# Kept as they are: unreserved characters and the few that read well in a path or a package name.
_SAFE: Final = "/:@+=!$&'()*;~"


def edge_seconds(revalidate_s: int, cache_control: str) -> int:
    """``ASSETGATE_EDGE_REVALIDATE_S`` for answers a shared cache may keep at all (X-Accel-Expires
    would make nginx keep a ``no-store`` or ``private`` answer)."""
    lowered = cache_control.lower()
    if any(word in lowered for word in ("no-store", "private", "no-cache")):
        return 0
    return revalidate_s


def tag(kind: str, value: str) -> str:
    """``kind:value`` with what a header list cannot hold percent-encoded (UTF-8 first), hashed
    when longer than ``MAX_TAG_CHARS``."""
    made = f"{kind}:{quote(value, safe=_SAFE)}"
    if len(made) <= MAX_TAG_CHARS:
        return made
    digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return f"{kind}:~{digest}"


def path_tag(path: str) -> str:
    return tag("path", path)


def dir_tag(prefix: str) -> str:
    return tag("dir", prefix)


def folders(path: str) -> tuple[str, ...]:
    """The folders above ``/a/b/c.jpg``, deepest first: ``/a/b/``, ``/a/``, ``/``."""
    parts = path.strip("/").split("/")[:-1]
    found = ["/" + "/".join(parts[:end]) + "/" for end in range(len(parts), 0, -1)]
    return (*found, "/")


@dataclass(frozen=True, slots=True)
class Tags:
    """What an answer is tagged with; hashable, so it keys the answer's prepared header block."""

    path: str  # the source file's public path, with its leading "/"
    part: str
    preset: str | None = None
    package: tuple[str, str] | None = None  # (name, version) of a package file
    headers: tuple[str, ...] = ("cache-tag", "surrogate-key")  # ASSETGATE_CACHE_TAG_HEADERS
    # How long nginx in front keeps the answer before it asks again (``X-Accel-Expires``, which
    # nginx obeys over Cache-Control and never passes on): how soon a purge reaches it. 0: unsaid.
    edge_s: int = 0

    def values(self) -> tuple[str, ...]:
        """The tags, at most ``MAX_TAGS``: the file's own first, folders nearest the root last."""
        own = [path_tag(self.path), tag("part", self.part)]
        if self.preset is not None:
            own.append(tag("preset", self.preset))
        if self.package is not None:
            name, version = self.package
            own += [tag("npm", name), tag("npm", f"{name}@{version}")]
        own += [dir_tag(folder) for folder in folders(self.path)]
        return tuple(own[:MAX_TAGS])

    def fields(self) -> dict[str, str]:
        """The header fields that carry the tags (none when the setting names none), and the
        edge's lifetime when one is set."""
        values = self.values()
        found: dict[str, str] = {EDGE_EXPIRES: str(self.edge_s)} if self.edge_s else {}
        for name in self.headers:
            header, separator = HEADERS[name]
            found[header] = separator.join(values)
        return found
