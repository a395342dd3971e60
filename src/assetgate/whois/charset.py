"""Whois answers are bytes in the registry's charset; decode them once, whole (pure).

Decoding per ``recv()`` chunk (asyncwhois does) breaks multi-byte characters split across
segments, so the port-43 client accumulates bytes and this module decodes the complete answer.
ISO-2022-JP is 7-bit and therefore also valid UTF-8: it must be recognised by its escape
sequences (RFC 1468) before UTF-8 is tried. After UTF-8 come the server's hints (JPRS: the
Japanese encodings; registro.br, .no, .is …: ISO-8859-1), and ISO-8859-1 last, which cannot
fail. Shift_JIS is only tried when hinted: it would happily "decode" Latin-1 text as kanji.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

JAPANESE: Final = ("iso-2022-jp", "euc-jp", "shift_jis")
LATIN1: Final = ("iso-8859-1",)
_ISO2022_ESCAPES: Final = (b"\x1b$B", b"\x1b$@", b"\x1b(J", b"\x1b(B", b"\x1b$(D")
# C0 controls other than TAB and LF, and DEL: a terminal reading the text endpoint must not be
# driven by escape sequences an attacker put into a registrant field.
_CONTROLS: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def decode(data: bytes, hints: Sequence[str] = ()) -> tuple[str, str]:
    """(text with ``\\n`` line ends and no control characters, charset used)."""
    text, charset = _decode(data, hints)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", text), charset


def _decode(data: bytes, hints: Sequence[str]) -> tuple[str, str]:
    if any(escape in data for escape in _ISO2022_ESCAPES):
        try:
            return data.decode("iso-2022-jp"), "iso-2022-jp"
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    for charset in hints:
        try:
            return data.decode(charset), charset
        except (UnicodeDecodeError, LookupError):
            continue
    return data.decode("iso-8859-1"), "iso-8859-1"
