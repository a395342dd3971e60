"""Subresource-Integrity strings (W3C SRI §3.5) and the registry's ``dist`` hashes, pure.

A registry ``dist.integrity`` may list several hashes; the strongest one we support is checked
(sha512 > sha384 > sha256 > sha1). ``dist.shasum`` (hex sha1) is only used when no integrity
string is given, as npm itself does.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import Final

STRENGTH: Final = ("sha512", "sha384", "sha256", "sha1")


@dataclass(frozen=True, slots=True)
class Expected:
    algorithm: str
    digest: bytes

    def new_hash(self) -> hashlib._Hash:
        return hashlib.new(self.algorithm)

    def matches(self, digest: bytes) -> bool:
        return digest == self.digest


# What a browser loads with ``integrity=`` and a library catalog hashes for every file it lists.
VOUCHED_SUFFIXES: Final = (".js", ".mjs", ".cjs", ".css")


def needs_sri(path: str) -> bool:
    """A library file refused when its catalog gives no hash for it (docs/packages.md)."""
    return path.lower().endswith(VOUCHED_SUFFIXES)


def parse_sri(value: str | None) -> Expected | None:
    """``"sha512-AbC… sha1-…"`` -> the strongest supported hash, or None when none parses."""
    if not value:
        return None
    found: dict[str, bytes] = {}
    for token in value.split():
        algorithm, dash, b64 = token.partition("-")
        algorithm = algorithm.lower()
        if not dash or algorithm not in STRENGTH:
            continue
        b64 = b64.split("?", 1)[0]  # SRI options after "?" are ignored
        try:
            found.setdefault(algorithm, base64.b64decode(b64, validate=True))
        except (binascii.Error, ValueError):
            continue
    for algorithm in STRENGTH:
        digest = found.get(algorithm)
        if digest is not None and len(digest) == hashlib.new(algorithm).digest_size:
            return Expected(algorithm, digest)
    return None


def expected_for_dist(integrity: str | None, shasum: str | None) -> Expected | None:
    expected = parse_sri(integrity)
    if expected is not None:
        return expected
    if shasum and len(shasum) == 40:
        try:
            return Expected("sha1", bytes.fromhex(shasum))
        except ValueError:
            return None
    return None


def make_sri(algorithm: str, digest: bytes) -> str:
    return f"{algorithm}-{base64.b64encode(digest).decode()}"


def make_content_digest(sha256_hex: str) -> str:
    """RFC 9530 ``Content-Digest`` field value for a sha-256 given in hex."""
    return f"sha-256=:{base64.b64encode(bytes.fromhex(sha256_hex)).decode()}:"
