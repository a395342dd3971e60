"""Shared fingerprints (``sources.fingerprints``) against a real SeaweedFS: a node shares the
fingerprint of the copy a request found, read back by another node as a version with no file;
a copy replaced or purged after the request found it shares nothing (its fingerprint may no
longer be the object's)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assetgate.cache import ObjectTier
from assetgate.cache.objects import mac_key
from assetgate.serving.versions import FileVersion, fingerprint_bytes, stat_key
from assetgate.sources.copies import Copies, RemoteCopy
from assetgate.sources.fingerprints import SharedFingerprints
from assetgate.sources.s3 import BucketSource
from assetgate.web.caching import http_date
from tests.sources.servers import Seaweed

pytestmark = pytest.mark.anyio

KEY = mac_key("the secret every node of this test shares, 32+")
SIZE = 4096


def version_of(copy: RemoteCopy) -> FileVersion:
    """The version a request identified from the copy it found (hashed while it was written)."""
    assert copy.entry.fingerprint is not None
    info = copy.stat
    return FileVersion(
        stat_key(info), info.st_size, info.st_mtime, copy.entry.fingerprint, http_date(0), None
    )


@pytest.fixture
def parts(weed: Seaweed, bucket: str, tmp_path: Path) -> tuple[BucketSource, Copies, ObjectTier]:
    remote = BucketSource("/", weed.store(bucket), f"s3:{bucket}", read_timeout_s=10.0)
    copies = Copies(tmp_path / "copies", 1 << 30, ttl_s=0.0)  # every request asks the source
    index = ObjectTier(weed.store(bucket), key=KEY, max_entry_bytes=1 << 20)
    return remote, copies, index


async def test_a_found_copy_is_shared_and_read_back_without_its_file(
    parts: tuple[BucketSource, Copies, ObjectTier], weed: Seaweed, bucket: str
) -> None:
    remote, copies, index = parts
    data = os.urandom(SIZE)
    weed.put(bucket, "img/a.bin", data)
    copy = await copies.locate(remote, "img/a.bin", 1 << 20, "/a.bin")
    assert copy.ident == copies.ident(remote, "img/a.bin")
    assert copy.entry.fingerprint == fingerprint_bytes(data)
    fingerprints = SharedFingerprints(index, None, ttl_s=60.0)
    fingerprints.share(copy, version_of(copy))
    await index.aclose()  # the background write is done
    shared = await fingerprints.read(copy.ident)
    assert shared is not None
    assert (shared.fingerprint, shared.size) == (fingerprint_bytes(data), SIZE)
    assert shared.body is None


async def test_a_copy_replaced_or_purged_since_it_was_found_shares_nothing(
    parts: tuple[BucketSource, Copies, ObjectTier], weed: Seaweed, bucket: str
) -> None:
    remote, copies, index = parts
    fingerprints = SharedFingerprints(index, None, ttl_s=60.0)
    weed.put(bucket, "img/a.bin", os.urandom(SIZE))
    first = await copies.locate(remote, "img/a.bin", 1 << 20, "/a.bin")
    newer = os.urandom(SIZE)  # a rewrite of the same size: only the fingerprint tells them apart
    weed.put(bucket, "img/a.bin", newer)
    second = await copies.locate(remote, "img/a.bin", 1 << 20, "/a.bin")
    assert second.real == first.real  # the same file name, renamed over: a path names both
    assert second.entry.fingerprint == fingerprint_bytes(newer)
    fingerprints.share(first, version_of(first))  # the request that found the old bytes
    await index.aclose()
    assert await fingerprints.read(first.ident) is None
    copies.purge({second.ident}, ())
    fingerprints.share(second, version_of(second))  # a request that found it before the purge
    await index.aclose()
    assert await fingerprints.read(second.ident) is None
