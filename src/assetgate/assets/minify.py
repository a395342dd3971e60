"""``min=1``: CSS through rcssmin, JavaScript through rjsmin, both keeping ``/*!`` licence comments.

Both minifiers only remove whitespace and comments (no renaming), so little can break; the research
corpus (``research/minify.md``) still parsed after both. Three traps found while wiring them, each
handled here:

- Both are given **bytes**, never ``str``: their C extensions crash the process (SIGSEGV) on a
  ``str`` holding a lone surrogate, which is what decoding a non-UTF-8 file with
  ``surrogateescape`` produces. On bytes, non-ASCII bytes are opaque identifier characters, which
  is exactly right for CSS and JavaScript syntax.
- rjsmin reads a template literal as a plain string from backtick to backtick. That breaks
  ``${…}`` substitutions that hold a backtick themselves (a nested template, `` `a ${ `b` } c` ``):
  the text after the inner template would be minified as code. When a file may contain one, the
  outermost templates (found by ``jsscan``) are swapped for placeholders before rjsmin and put
  back after, byte for byte.
- rjsmin does not see ``\\u0061`` as an identifier character, so ``var \\u0061bc`` became
  ``var\\u0061bc`` (one identifier, ``varabc``); escapes are masked while it runs.

rcssmin writes an empty custom property as ``--x:;``, which browsers from before the 2022 change to
css-variables-1 drop; the space is put back (``--x: ;``).
"""

from __future__ import annotations

import re
from typing import Final

import rcssmin
import rjsmin

from assetgate.assets.jsscan import ScanError, scan

# Noncharacters (never used for interchange, unlike private-use icons in font CSS/JS).
_PLACEHOLDER_MARK: Final = "\ufdd0"
_PLACEHOLDER: Final = f"`{_PLACEHOLDER_MARK}`"  # rjsmin keeps it as it keeps any template
_PLACEHOLDER_BYTES: Final = _PLACEHOLDER.encode()
_ESCAPE_MARK: Final = "\ufdd1".encode()
# Inside ${…}: strings are skipped, braces counted, a backtick (even in a string) means trouble.
_SUBSTITUTION_TOKEN: Final = re.compile(
    rb"""'[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|[{}`]"""
)
_EMPTY_CUSTOM_PROPERTY: Final = re.compile(
    rb"""("(?:[^"\\]|\\.)*+"|'(?:[^'\\]|\\.)*+')|([{;]--[^\s:;{}"']+:)(?=[;}])"""
)


class MinifyError(ValueError):
    """The minifier could not be trusted with this input; serve the original."""


def minify_css(data: bytes) -> bytes:
    out: bytes = rcssmin.cssmin(data, keep_bang_comments=True)
    if b"--" in out:
        out = _EMPTY_CUSTOM_PROPERTY.sub(lambda m: m.group(1) or m.group(2) + b" ", out)
    return out


def _last_nesting(data: bytes) -> int:
    """Where the last ``${…}`` holding a backtick starts, or -1: a cheap, conservative test.

    Counts braces from each ``${`` with strings skipped. A ``}`` inside a regex literal or a
    comment within a substitution could end the count early; that is the only blind spot.
    """
    if b"`" not in data:
        return -1
    last = -1
    at = data.find(b"${")
    while at >= 0:
        depth = 0
        pos = at + 2
        while True:
            token = _SUBSTITUTION_TOKEN.search(data, pos)
            if token is None:
                return at  # unbalanced: let the careful path decide
            char = token.group()
            if b"`" in char:  # a nested template, or a backtick in a string inside ${…}
                last = at
                break
            if char == b"{":
                depth += 1
            elif char == b"}":
                if depth == 0:
                    break
                depth -= 1
            pos = token.end()
        at = data.find(b"${", at + 2)
    return last


def _jsmin(data: bytes) -> bytes:
    if b"\\u" not in data:
        out: bytes = rjsmin.jsmin(data, keep_bang_comments=True)
        return out
    if _ESCAPE_MARK in data:
        raise MinifyError("source contains the escape marker character U+FDD1")
    # rjsmin does not count a backslash as part of an identifier, so `var \u0061` would lose its
    # space and become `var\u0061` (the identifier "vara"). Spelled with a marker that rjsmin
    # reads as an identifier character, the space stays; strings keep it as plain content.
    marked = rjsmin.jsmin(data.replace(b"\\u", _ESCAPE_MARK + b"u"), keep_bang_comments=True)
    return bytes(marked).replace(_ESCAPE_MARK + b"u", b"\\u")


def _jsmin_keeping_templates(data: bytes, until: int) -> bytes:
    # Line breaks normalised first (the lexer wants \n; inside a template the spec does the same).
    text = data.decode("utf-8", "surrogateescape").replace("\r\n", "\n").replace("\r", "\n")
    if _PLACEHOLDER_MARK in text:
        raise MinifyError("source contains the template placeholder character U+FDD0")
    try:
        # A byte offset is never smaller than the character offset it became: a safe bound.
        templates = scan(text, until=until).templates
    except ScanError as exc:
        raise MinifyError(f"JavaScript did not lex: {exc}") from exc
    pieces: list[str] = []
    originals: list[bytes] = []
    cursor = 0
    for start, stop in templates:
        if text.find("`", start + 1, stop - 1) < 0:
            continue  # no backtick inside: rjsmin reads it right
        pieces.append(text[cursor:start])
        pieces.append(_PLACEHOLDER)
        originals.append(text[start:stop].encode("utf-8", "surrogateescape"))
        cursor = stop
    pieces.append(text[cursor:])
    parts = _jsmin("".join(pieces).encode("utf-8", "surrogateescape")).split(_PLACEHOLDER_BYTES)
    if len(parts) != len(originals) + 1:
        raise MinifyError("template placeholders did not survive minification")
    restored = [parts[0]]
    for original, part in zip(originals, parts[1:], strict=True):
        restored += (original, part)
    return b"".join(restored)


def minify_js(data: bytes) -> bytes:
    """rjsmin with licence comments kept; a ``#!`` line is kept as is."""
    hashbang = b""
    if data.startswith(b"#!"):
        newline = data.find(b"\n")
        if newline < 0:
            return data
        hashbang, data = data[: newline + 1], data[newline + 1 :]
    nesting = _last_nesting(data)
    body = _jsmin(data) if nesting < 0 else _jsmin_keeping_templates(data, nesting)
    return hashbang + body
