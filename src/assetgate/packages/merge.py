"""Search hits of several catalogs -> one ranked list (docs/packages.md), pure.

1. ``.js`` merge: two hits of the same version whose names differ only by a trailing ``.js``
   (suffix compared case-insensitively, the rest exactly) become one entry under the plain name;
   the survivor keeps its kind and URL and borrows the other's description when its own is empty.
   ``lodash@4.17.21`` (npm) + ``lodash.js@4.17.21`` (catalog) -> ``lodash``. Different versions
   (``three@0.160.0`` vs ``three.js@r160``) stay apart, and no name is ever invented.
2. Same name up to case, same version, different catalogs (``chart.js`` vs ``Chart.js``): one entry,
   the package kept.
3. Rank: exact name (also without ``.js``) -> name prefix -> the rest; inside a tier each catalog
   keeps its own order and the catalogs interleave, package first on ties. Deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal

Kind = Literal["package", "library"]
_KIND_ORDER: Final[dict[str, int]] = {"package": 0, "library": 1}


@dataclass(frozen=True, slots=True)
class Hit:
    name: str
    version: str
    description: str
    kind: Kind
    url: str
    rank: int  # position in its own catalog's answer, 0 first


def _strip_js(name: str) -> str | None:
    return name[:-3] if len(name) > 3 and name[-3:].lower() == ".js" else None


def merge_hits(hits: Iterable[Hit]) -> list[Hit]:
    """Apply the ``.js`` merge and the cross-catalog same-name merge; order is kept."""
    entries: list[Hit | None] = list(hits)
    by_key: dict[tuple[str, str], int] = {}
    for index, hit in enumerate(entries):
        assert hit is not None
        by_key.setdefault((hit.name, hit.version), index)

    def absorb(keep: int, drop: int) -> None:
        survivor, other = entries[keep], entries[drop]
        assert survivor is not None
        assert other is not None
        entries[keep] = replace(
            survivor,
            description=survivor.description or other.description,
            rank=min(survivor.rank, other.rank),
        )
        entries[drop] = None

    for index, hit in enumerate(entries):
        if hit is None:
            continue
        plain = _strip_js(hit.name)
        if plain is None:
            continue
        target = by_key.get((plain, hit.version))
        if target is not None and entries[target] is not None and target != index:
            absorb(target, index)

    folded: dict[tuple[str, str], int] = {}
    for index, hit in enumerate(entries):
        if hit is None:
            continue
        key = (hit.name.casefold(), hit.version)
        first = folded.get(key)
        other = entries[first] if first is not None else None
        if first is None or other is None:
            folded[key] = index
        elif other.kind != hit.kind:
            keep, drop = (first, index) if other.kind == "package" else (index, first)
            absorb(keep, drop)
            folded[key] = keep
    return [hit for hit in entries if hit is not None]


def _tier(name: str, q: str) -> int:
    folded = name.casefold()
    plain = _strip_js(folded) or folded
    query = q.casefold()
    query_plain = _strip_js(query) or query
    if query in (folded, plain) or query_plain in (folded, plain):
        return 0
    if folded.startswith(query) or folded.startswith(query_plain):
        return 1
    return 2


def rank_hits(hits: Sequence[Hit], q: str) -> list[Hit]:
    return sorted(hits, key=lambda h: (_tier(h.name, q), h.rank, _KIND_ORDER[h.kind], h.name))
