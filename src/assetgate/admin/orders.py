"""A purge, read from its request and handed to every node: pure, no I/O.

``POST /admin/purge`` takes ``{"paths": [...], "prefixes": [...], "tags": [...]}``. A path is a
source file's public path (``/img/a.jpg``; the leading "/" may be left out), a prefix every path
under it (``/img/`` or ``/img/2024-``), a tag any cache tag (``serving.tags``): ``path:`` and
``dir:`` tags also purge here, every tag goes to the CDN. What every node applies is an
``Order``: the paths (those named and those the purge index found under the prefixes), the
prefixes, and the tier keys the index held for them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import unquote

from assetgate.errors import AppError
from assetgate.serving.tags import MAX_TAG_CHARS

MAX_ITEMS: Final = 1000  # paths + prefixes + tags in one request
MAX_CHARS: Final = 1024  # one path or prefix (the optimizer's file parameter's limit)


@dataclass(frozen=True, slots=True)
class PurgeRequest:
    paths: tuple[str, ...]
    prefixes: tuple[str, ...]
    tags: tuple[str, ...]

    def local_paths(self) -> list[str]:
        """The paths named, directly or by a ``path:`` tag."""
        from_tags = [unquote(tag[5:]) for tag in self.tags if tag.startswith("path:")]
        return sorted(set(self.paths) | set(from_tags))

    def local_prefixes(self) -> list[str]:
        """The prefixes named, directly or by a ``dir:`` tag."""
        from_tags = [unquote(tag[4:]) for tag in self.tags if tag.startswith("dir:")]
        return sorted(set(self.prefixes) | set(from_tags))


def _strings(body: dict[str, object], name: str, limit: int) -> list[str]:
    value = body.get(name, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise AppError(400, f"{name}: expected a list of strings", param=name)
    items = [str(item) for item in value]
    for item in items:
        if not item or len(item) > limit or any(ord(char) < 32 for char in item):
            raise AppError(400, f"{name}: an item is empty, too long or holds a control character",
                           param=name)  # fmt: skip
    return items


def _public(path: str) -> str:
    return path if path.startswith("/") else "/" + path


def parse_request(raw: bytes) -> PurgeRequest:
    """The request body, checked: 400 naming the field for anything else."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise AppError(400, "body: expected a JSON object", param="body") from None
    if not isinstance(body, dict):
        raise AppError(400, "body: expected a JSON object", param="body")
    unknown = sorted(set(body) - {"paths", "prefixes", "tags"})
    if unknown:
        raise AppError(400, f"{unknown[0]}: not a field of a purge", param=unknown[0])
    paths = [_public(path) for path in _strings(body, "paths", MAX_CHARS)]
    prefixes = [_public(prefix) for prefix in _strings(body, "prefixes", MAX_CHARS)]
    tags = _strings(body, "tags", MAX_TAG_CHARS)
    if not (paths or prefixes or tags):
        raise AppError(400, "body: name at least one path, prefix or tag", param="body")
    if len(paths) + len(prefixes) + len(tags) > MAX_ITEMS:
        raise AppError(400, f"body: at most {MAX_ITEMS} paths, prefixes and tags", param="body")
    return PurgeRequest(tuple(paths), tuple(prefixes), tuple(tags))


@dataclass(frozen=True, slots=True)
class Order:
    """One purge as every node applies it to its own tiers (memory, disk, source copies)."""

    paths: tuple[str, ...]
    prefixes: tuple[str, ...]
    keys: tuple[str, ...] = field(default=())  # tier keys the purge index held for them

    def encode(self) -> str:
        return json.dumps({"paths": self.paths, "prefixes": self.prefixes, "keys": self.keys})

    @classmethod
    def decode(cls, text: str | bytes) -> Order | None:
        """None for an entry this version cannot read (never an error in the follower)."""
        try:
            data = json.loads(text)
            return cls(
                tuple(str(item) for item in data["paths"]),
                tuple(str(item) for item in data["prefixes"]),
                tuple(str(item) for item in data["keys"]),
            )
        except (ValueError, KeyError, TypeError):
            return None
