from __future__ import annotations

import gzip

import pytest

from assetgate.minify.sniff import looks_binary


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b"a { color: red }\n",
        "/* caf\u00e9 \u2603 */".encode(),
        "x = 'caf\xe9'".encode("latin-1"),
        "\ufeffvar a = 1;\r\n\f".encode(),
        b"\x1b[31m colour codes in a log-like comment",
    ],
)
def test_text(head: bytes) -> None:
    assert not looks_binary(head)


@pytest.mark.parametrize(
    "head",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        b"GIF89a\x01\x00",
        b"\xff\xd8\xff\xe0",
        gzip.compress(b"a{b:c}", mtime=0),  # mtime=0: the same test id in every xdist worker
        b"PK\x03\x04 a zip",
        b"\x00asm\x01\x00\x00\x00",
        b"wOF2 font",
        "a { }".encode("utf-16"),
        b"text with a NUL\x00 byte",
        b"abc" + bytes(range(1, 9)) * 5,
    ],
)
def test_binary(head: bytes) -> None:
    assert looks_binary(head)
