"""The disk/Redis codec on a large package document: pydantic ``TypeAdapter`` against the
hand-written type-hint codec it replaced (kept below as the reference, as it was).

    .venv/bin/python bench/codec.py     # a few seconds

The cache layer encodes a value on the event loop when it keeps it (and once more for its memory
weight), and decodes a disk or Redis hit there too, so this is time no other request is served.
The document is generated: a package with ``--versions`` versions (5,000 by default; the largest
real ones have a few thousand), each with a tarball URL, an integrity string and a shasum, plus
dist-tags and a few hundred deprecated versions. CPU time, best of the rounds.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import time
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from assetgate.cache import dataclass_codec
from assetgate.packages.versions import Dist, Packument


def packument(versions: int) -> Packument:
    dists = {
        f"{n // 100}.{n % 100}.0": Dist(
            f"https://registry.invalid/big/-/big-{n // 100}.{n % 100}.0.tgz",
            "sha512-" + f"{n:08d}" * 11,
            f"{n:040x}",
        )
        for n in range(versions)
    }
    deprecated = frozenset(list(dists)[: versions // 10])
    tags = {"latest": list(dists)[-1], "next": list(dists)[-2]}
    return Packument("big", tags, dists, deprecated, "a package with many versions")


# --- the reference: cache/codec.py's hand-written codec before the TypeAdapter -----------------


def _plain(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | list | frozenset | set):
        items = [_plain(item) for item in value]
        return sorted(items, key=repr) if isinstance(value, frozenset | set) else items
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _build(hint: Any, data: Any) -> Any:
    if hint is Any:
        return data
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        options = [arg for arg in args if arg is not type(None)]
        return _build(options[0], data)
    if origin is typing.Literal:
        return data
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], item) for item in data)
        return tuple(_build(arg, item) for arg, item in zip(args, data, strict=True))
    if origin is frozenset:
        return frozenset(_build(args[0], item) for item in data)
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        value_hint = args[1] if args else Any
        return {str(key): _build(value_hint, item) for key, item in data.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = _hints(hint)
        fields = {f.name for f in dataclasses.fields(hint)}
        return hint(**{name: _build(hints[name], data[name]) for name in fields if name in data})
    if hint is datetime:
        return datetime.fromisoformat(data)
    if hint in (str, int, float, bool) and not isinstance(data, hint):
        raise ValueError(f"expected {hint.__name__}, got {type(data).__name__}")
    return data


def old_encode(value: Packument) -> bytes:
    return json.dumps(_plain(value), separators=(",", ":")).encode()


def old_decode(data: bytes) -> Packument:
    return typing.cast(Packument, _build(Packument, json.loads(data)))


# ------------------------------------------------------------------------------------------------


def best_ms(call: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        call()
        best = min(best, time.process_time() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    value = packument(args.versions)
    codec = dataclass_codec(Packument)
    stored = codec.encode(value)
    assert old_decode(stored) == value
    assert codec.decode(old_encode(value)) == value
    print(f"packument: {args.versions} versions, {len(stored):,} bytes stored")
    rows = [
        ("encode", best_ms(lambda: old_encode(value), args.rounds)),
        ("encode", best_ms(lambda: codec.encode(value), args.rounds)),
        ("decode", best_ms(lambda: old_decode(stored), args.rounds)),
        ("decode", best_ms(lambda: codec.decode(stored), args.rounds)),
    ]
    print("| step | hand-written ms | TypeAdapter ms | ratio (new / old) |")
    print("|---|---:|---:|---:|")
    for (step, old), (_, new) in zip(rows[::2], rows[1::2], strict=True):
        print(f"| {step} | {old:.2f} | {new:.2f} | {new / old:.2f} |")


if __name__ == "__main__":
    main()
