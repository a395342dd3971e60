"""Which file ``/npm/<pkg>@<version>/`` means (docs/packages.md), pure over package.json + files.

jsDelivr's chain (``jsdelivr``, ``browser`` string, ``main``, minified sibling preferred) with the
``cdn`` and ``unpkg`` fields placed before ``browser`` because they name the ``<script>`` build
(alpinejs, @popperjs/core). Everything after that chain is additive: it is only reached where
jsDelivr finds nothing (``"main": "./index"``, ``"main": "lib/"``, ``style``, ``exports``, a bare
``index.js``). The reason string travels to the client in ``X-Default-File-Reason`` so a surprising
choice can be explained instead of guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Set
from dataclasses import dataclass
from typing import Final

ENTRY_FIELDS: Final = ("jsdelivr", "cdn", "unpkg", "browser", "main")
EXPORT_CONDITIONS: Final = ("browser", "import", "default", "require")
_MINIFIABLE: Final = re.compile(r"^(?P<stem>.+)\.(?P<ext>js|css)$", flags=re.IGNORECASE)
_MINIFIED: Final = re.compile(r"\.min\.(js|css)$", flags=re.IGNORECASE)
_MAX_EXPORT_DEPTH: Final = 8


@dataclass(frozen=True, slots=True)
class DefaultFile:
    path: str
    reason: str  # e.g. "main+min-sibling", "exports", "index.js"


def normalize_entry(value: str) -> str | None:
    """``./dist//a.js`` -> ``dist/a.js``; None for ``..``, backslashes, NUL or an empty value."""
    text = value.strip()
    if not text or "\\" in text or "\x00" in text:
        return None
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None
    path = "/".join(parts)
    if text.endswith("/") and path:
        path += "/"
    return path or None


def _lookup(entry: str, files: Set[str]) -> tuple[str, str] | None:
    """Exact path, then the assetgate extensions ``+.js`` and ``/index.js``; (hit, how)."""
    bare = entry.rstrip("/")
    if not entry.endswith("/") and bare in files:
        return bare, ""
    if not entry.endswith("/") and bare + ".js" in files:
        return bare + ".js", "+js"
    if bare and bare + "/index.js" in files:
        return bare + "/index.js", "+index"
    return None


def _prefer_min(hit: str, files: Set[str]) -> tuple[str, bool]:
    match = _MINIFIABLE.match(hit)
    if match is None or _MINIFIED.search(hit):
        return hit, False
    sibling = f"{match['stem']}.min.{match['ext']}"
    return (sibling, True) if sibling in files else (hit, False)


def _resolve(field: str, value: object, files: Set[str]) -> DefaultFile | None:
    if not isinstance(value, str):
        return None
    entry = normalize_entry(value)
    if entry is None:
        return None
    found = _lookup(entry, files)
    if found is None:
        return None
    hit, how = found
    path, minified = _prefer_min(hit, files)
    return DefaultFile(path, field + how + ("+min-sibling" if minified else ""))


def _export_targets(node: object, depth: int = 0) -> Iterator[str]:
    """String targets of an ``exports`` value in condition order (browser, import, default, …)."""
    if depth > _MAX_EXPORT_DEPTH:
        return
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from _export_targets(item, depth + 1)
    elif isinstance(node, Mapping):
        if "." in node:
            yield from _export_targets(node["."], depth + 1)
            return
        if any(isinstance(k, str) and k.startswith("./") for k in node):
            return  # a subpath map without ".": no root entry
        for condition, target in node.items():
            if condition in EXPORT_CONDITIONS:
                yield from _export_targets(target, depth + 1)


def choose_default_file(manifest: Mapping[str, object], files: Set[str]) -> DefaultFile | None:
    """The default file of a package, or None (answered 404 "no default file")."""
    for field in ENTRY_FIELDS:
        chosen = _resolve(field, manifest.get(field), files)
        if chosen is not None:
            return chosen
    chosen = _resolve("style", manifest.get("style"), files)
    if chosen is not None:
        return chosen
    for target in _export_targets(manifest.get("exports")):
        chosen = _resolve("exports", target, files)
        if chosen is not None:
            return chosen
    return _resolve("index.js", "index.js", files)
