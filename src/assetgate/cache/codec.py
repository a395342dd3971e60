"""Values <-> bytes for the tiers that leave the process (disk, Redis).

The memory tier keeps the objects themselves; disk and Redis keep bytes. Answers are frozen
dataclasses, so one JSON codec driven by their type hints covers them all: pydantic's
``TypeAdapter`` (already the settings' library), which checks the stored JSON against the hints on
the way back. No ``pickle``, because whatever can write to Redis must not be able to run code in
every worker that reads it.

The stored JSON is the one the hand-written codec before it wrote (field names as keys, tuples and
frozensets as arrays, datetimes in ISO 8601), so entries written by the previous release still
read (``tests/cache/test_codec.py`` holds one such entry).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

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
    adapter = TypeAdapter(cls)

    def encode(value: T) -> bytes:
        return adapter.dump_json(value)

    def decode(data: bytes) -> T:
        try:
            return adapter.validate_json(data)
        except ValidationError as exc:
            first = exc.errors()[0] if exc.error_count() else {"msg": "invalid"}
            where = ".".join(str(part) for part in first.get("loc", ()))
            raise CodecError(f"not a stored {cls.__name__}: {where} {first['msg']}") from None

    return Codec(encode, decode, lambda value: len(encode(value)) * 2)


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
