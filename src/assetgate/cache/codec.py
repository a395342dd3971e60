"""Values <-> bytes for the tiers that leave the process (disk, Redis).

The memory tier keeps the objects themselves; disk and Redis keep bytes. Answers are frozen
dataclasses, so one JSON codec driven by their type hints covers them all; no ``pickle``, because
whatever can write to Redis must not be able to run code in every worker that reads it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class CodecError(ValueError):
    """Stored bytes do not describe a value of the expected type (treated as a miss)."""


@dataclass(frozen=True, slots=True)
class Codec(Generic[T]):
    encode: Callable[[T], bytes]
    decode: Callable[[bytes], T]
    weight: Callable[[T], int]  # bytes the value holds in memory, roughly


def dataclass_codec(cls: type[T]) -> Codec[T]:
    """JSON over the fields of the frozen dataclass ``cls`` (nested dataclasses, tuples, dicts)."""

    def encode(value: T) -> bytes:
        return json.dumps(_plain(value), separators=(",", ":")).encode()

    def decode(data: bytes) -> T:
        try:
            return typing.cast(T, _build(cls, json.loads(data)))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise CodecError(f"not a stored {cls.__name__}: {exc}") from exc

    return Codec(encode, decode, lambda value: len(encode(value)) * 2)


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
        if data not in args:
            raise ValueError(f"{data!r} is not one of {args}")
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
    if hint is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if hint in (str, int, float, bool) and not isinstance(data, hint):
        raise ValueError(f"expected {hint.__name__}, got {type(data).__name__}")
    return data


def join_head(head: Mapping[str, object], body: bytes) -> bytes:
    """A rendered answer's small JSON description, a newline, then its bytes as they are."""
    return json.dumps(head, separators=(",", ":")).encode() + b"\n" + body


def split_head(data: bytes) -> tuple[dict[str, Any], bytes]:
    """The inverse of ``join_head``; CodecError when the description is not a JSON object."""
    head, _, body = data.partition(b"\n")
    try:
        meta = json.loads(head)
    except ValueError as exc:
        raise CodecError(f"no stored description: {exc}") from exc
    if not isinstance(meta, dict):
        raise CodecError("no stored description")
    return meta, body


def memory_codec(weight: int = 1024) -> Codec[Any]:
    """For values that never leave the process (a cache without disk or Redis tier)."""

    def refuse(_data: object) -> Any:
        raise CodecError("this cache keeps its values in process memory only")

    return Codec(refuse, refuse, lambda _value: weight)


def bytes_codec() -> Codec[bytes]:
    return Codec(lambda value: value, lambda data: data, len)
