"""A listed package's exported subpaths (its ``exports`` map), for import maps (pure).

``/npm/importmap?pkg=react-dom@18`` must map ``react-dom/client`` too, the entry pages import,
though nothing in the graph imports it. So each ``exports`` key of a listed package that names
one JavaScript module (``./client``, ``./hooks``) is offered to the map: not ``.`` (the entry is
there already), not patterns (``./*``, ``./``: a folder is no module), not ``package.json``, style
sheets or JSON, not a key whose browser target is ``null`` (hidden from browsers). The names come
from the package's author: only plain path segments are kept, and at most ``MAX_SUBPATHS``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

MAX_SUBPATHS: Final = 32
CONDITIONS: Final = ("browser", "import", "module", "default", "require")
SUBPATH: Final = re.compile(
    r"[A-Za-z0-9_@~-][A-Za-z0-9._@~-]*(?:/[A-Za-z0-9_@~-][A-Za-z0-9._@~-]*)*"
)
NOT_MODULES: Final = (".json", ".css", ".d.ts", ".map", ".wasm", ".node")


def browser_target(value: object, depth: int = 0) -> str | None:
    """The file a browser build picks for an ``exports`` value (esbuild's conditions, in the
    order the map lists them), or None when it hides the key from browsers."""
    if depth > 8:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for item in value:
            found = browser_target(item, depth + 1)
            if found is not None:
                return found
        return None
    if isinstance(value, Mapping):
        for condition, target in value.items():
            if condition in CONDITIONS:
                return browser_target(target, depth + 1)
    return None


def exported_subpaths(manifest: Mapping[str, object], limit: int = MAX_SUBPATHS) -> list[str]:
    """The subpaths (``client``, ``jsx-runtime``) of ``manifest["exports"]`` a page may import."""
    exports = manifest.get("exports")
    if not isinstance(exports, Mapping) or not all(
        isinstance(key, str) and key.startswith(".") for key in exports
    ):
        return []  # a string, a list or conditions only: the package exports "." alone
    found: list[str] = []
    for key, value in exports.items():
        subpath = str(key).removeprefix("./")
        if key == "." or "*" in key or key.endswith("/") or not SUBPATH.fullmatch(subpath):
            continue
        if ".." in subpath.split("/") or subpath.endswith(NOT_MODULES) or subpath == "package":
            continue
        target = browser_target(value)
        if target is None or target.endswith(NOT_MODULES):
            continue
        found.append(subpath)
        if len(found) == limit:
            break
    return found
