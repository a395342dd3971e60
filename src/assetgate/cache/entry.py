"""The bytes of a stored entry: a header (magic, expiry, length, BLAKE2b digest) and the payload.

Disk and Redis keep the same form, so a truncated file, a torn write or a foreign value under our
key is recognised and treated as a miss, never served. An alias (``Cache.share_as``) is an entry
too: its payload is the content key it stands for, then that key's payload (``with_key``).
"""

from __future__ import annotations

import hashlib
import struct
from typing import Final

MAGIC: Final = b"AGC1"
HEADER: Final = struct.Struct("<4sdQ16s")  # magic, expires_at (epoch s, 0 = never), length, digest
KEY_LENGTH: Final = struct.Struct("<H")


def pack(payload: bytes, expires_at: float) -> bytes:
    digest = hashlib.blake2b(payload, digest_size=16).digest()
    return HEADER.pack(MAGIC, expires_at, len(payload), digest) + payload


def unpack(data: bytes, now: float) -> tuple[float, bytes] | None:
    """(expires_at, payload), or None when ``data`` is not a whole, intact, unexpired entry."""
    if len(data) < HEADER.size:
        return None
    magic, expires_at, length, digest = HEADER.unpack_from(data)
    payload = data[HEADER.size :]
    if magic != MAGIC or length != len(payload):
        return None
    if hashlib.blake2b(payload, digest_size=16).digest() != digest:
        return None
    if expires_at and expires_at <= now:
        return None
    return expires_at, payload


def with_key(key: str, payload: bytes) -> bytes:
    """An alias's payload: the content key it stands for (length-prefixed), then its payload."""
    named = key.encode()
    return KEY_LENGTH.pack(len(named)) + named + payload


def split_key(payload: bytes) -> tuple[str, bytes] | None:
    """(content key, its payload) of an alias's payload; None when it is not one."""
    if len(payload) < KEY_LENGTH.size:
        return None
    (length,) = KEY_LENGTH.unpack_from(payload)
    end = KEY_LENGTH.size + length
    if len(payload) < end:
        return None
    try:
        key = payload[KEY_LENGTH.size : end].decode()
    except UnicodeDecodeError:
        return None
    return key, payload[end:]
