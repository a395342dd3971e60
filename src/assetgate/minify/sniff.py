"""Is this "CSS or JavaScript" file really text? (an extension is only a claim).

A renamed image or archive must be answered 415, not minified or served as a script. Text never
holds NUL bytes or many C0 control characters; the common binary formats are also recognised by
their first bytes, in case they start with a run of printable bytes.
"""

from __future__ import annotations

from typing import Final

SNIFF_BYTES: Final = 8192
_MAGIC: Final = (
    b"\x1f\x8b",  # gzip
    b"\x89PNG",
    b"\xff\xd8\xff",  # JPEG
    b"GIF8",
    b"PK\x03\x04",  # zip
    b"%PDF-",
    b"\x00asm",  # WebAssembly
    b"\x7fELF",
    b"RIFF",  # WebP, WAV, AVI
    b"wOFF",  # WOFF font
    b"wOF2",
)
_CONTROL: Final = bytes(c for c in range(32) if chr(c) not in "\t\n\v\f\r\x1b")


def looks_binary(head: bytes) -> bool:
    """True when the first bytes of a file cannot be CSS or JavaScript text."""
    if not head:
        return False
    if b"\x00" in head:
        return True
    if any(head.startswith(magic) for magic in _MAGIC):
        return True
    controls = len(head) - len(head.translate(None, _CONTROL))
    return controls * 100 > len(head)
