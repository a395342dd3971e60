from __future__ import annotations

import base64
import hashlib

from assetgate.packages.integrity import expected_for_dist, make_content_digest, make_sri, parse_sri


def b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode()


def test_strongest_supported_hash_is_chosen() -> None:
    data = b"tarball"
    value = f"sha1-{b64(hashlib.sha1(data).digest())} sha512-{b64(hashlib.sha512(data).digest())}"
    expected = parse_sri(value)
    assert expected is not None
    assert expected.algorithm == "sha512"
    assert expected.matches(hashlib.sha512(data).digest())


def test_unknown_or_broken_tokens_are_ignored() -> None:
    assert parse_sri("md5-AAAA sha512-!!!notbase64") is None
    assert parse_sri("sha256-" + b64(b"short")) is None  # wrong digest length
    assert parse_sri("") is None


def test_shasum_only_when_no_integrity() -> None:
    sha1 = hashlib.sha1(b"x").hexdigest()
    only_shasum = expected_for_dist(None, sha1)
    assert only_shasum is not None
    assert only_shasum.algorithm == "sha1"
    both = expected_for_dist(make_sri("sha512", hashlib.sha512(b"x").digest()), sha1)
    assert both is not None
    assert both.algorithm == "sha512"
    assert expected_for_dist(None, None) is None
    assert expected_for_dist(None, "zz" * 20) is None


def test_content_digest_is_rfc9530_shaped() -> None:
    digest = hashlib.sha256(b"abc").hexdigest()
    assert make_content_digest(digest) == f"sha-256=:{b64(bytes.fromhex(digest))}:"
