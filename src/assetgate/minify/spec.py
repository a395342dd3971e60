"""Query string -> what to do with a CSS or JavaScript file (pure: no Starlette, no I/O).

``min``, ``compress`` and ``safe`` accept only ``0`` or ``1``; anything else is a 400 naming the
parameter. Image parameters are not looked at here: they have no effect on assets, as the spec
says (the optimizer route still validates them, so a typo such as ``width=abc`` is a 400 on
every optimizer URL). ``safe=1`` wins over ``min=1`` for JavaScript; for CSS, safe mode does not
exist and ``safe`` is accepted and ignored.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Final, Literal

from assetgate.web.mediatypes import CSS, JAVASCRIPT
from assetgate.web.negotiation import accepts_encoding
from assetgate.web.params import read_flag

AssetKind = Literal["css", "js"]
Transform = Literal["none", "minify", "safe"]
Encoding = Literal["identity", "gzip"]

KINDS: Final[Mapping[str, AssetKind]] = {".css": "css", ".js": "js", ".mjs": "js"}
MEDIA_TYPES: Final[Mapping[AssetKind, str]] = {"css": CSS, "js": JAVASCRIPT}


def kind_of(path: PurePath | str) -> AssetKind | None:
    return KINDS.get(os.path.splitext(path)[1].lower())


@dataclass(frozen=True, slots=True)
class AssetSpec:
    minify: bool = False
    compress: bool = False
    safe: bool = False


def parse_asset_spec(query: Mapping[str, str]) -> AssetSpec:
    return AssetSpec(
        minify=read_flag(query, "min"),
        compress=read_flag(query, "compress"),
        safe=read_flag(query, "safe"),
    )


@dataclass(frozen=True, slots=True)
class AssetPlan:
    kind: AssetKind
    transform: Transform
    encoding: Encoding
    vary: bool  # compress=1 was asked: the answer depends on Accept-Encoding
    oversize: bool = False  # a transformation was asked but the file is over the size cap

    @property
    def is_passthrough(self) -> bool:
        return self.transform == "none" and self.encoding == "identity"


def make_asset_plan(
    spec: AssetSpec,
    kind: AssetKind,
    *,
    accept_encoding: str | None,
    size: int,
    max_bytes: int,
) -> AssetPlan:
    transform: Transform = "none"
    if kind == "js" and spec.safe:
        transform = "safe"
    elif spec.minify:
        transform = "minify"
    gzip = spec.compress and accepts_encoding(accept_encoding, "gzip")
    wanted = transform != "none" or gzip
    if wanted and size > max_bytes:
        return AssetPlan(kind, "none", "identity", vary=spec.compress, oversize=True)
    return AssetPlan(kind, transform, "gzip" if gzip else "identity", vary=spec.compress)
