from __future__ import annotations

import gzip

from assetgate.minify.compress import gzip_bytes


def test_round_trip_and_deterministic_header() -> None:
    data = b"a{color:red}" * 100
    first = gzip_bytes(data)
    assert gzip_bytes(data) == first
    assert gzip.decompress(first) == data
    assert first[4:8] == b"\x00\x00\x00\x00"  # MTIME: no clock in the bytes
    assert first[3] == 0  # FLG: no file name, no comment
    assert len(first) < len(data)
