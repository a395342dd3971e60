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

import bisect
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
_LICENCE_PLACEHOLDER: Final = "/*!\ufdd2*/".encode()  # a bang comment: both minifiers keep it
_LICENCE_TAGS: Final = (b"@license", b"@preserve")
_WORD_BYTES: Final = frozenset(
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$"
) | frozenset(range(0x80, 0x100))
# Inside ${…}: strings are skipped, braces counted, a backtick (even in a string) means trouble.
_SUBSTITUTION_TOKEN: Final = re.compile(
    rb"""'[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|[{}`]"""
)
_NAME_BYTES: Final = frozenset(
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
) | frozenset(range(0x80, 0x100))


class MinifyError(ValueError):
    """The minifier could not be trusted with this input; serve the original."""


def _restore(out: bytes, placeholder: bytes, originals: list[bytes], what: str) -> bytes:
    """Put ``originals`` back, in order, where the minifier kept ``placeholder``."""
    if not originals:
        return out
    parts = out.split(placeholder)
    if len(parts) != len(originals) + 1:
        raise MinifyError(f"{what} placeholders did not survive minification")
    pieces = [parts[0]]
    for original, part in zip(originals, parts[1:], strict=True):
        pieces += (original, part)
    return b"".join(pieces)


def _hide_licences(data: bytes) -> tuple[bytes, list[bytes]]:
    """Swap ``/* … @license … */`` and ``@preserve`` comments for a kept ``/*!`` placeholder.

    Both minifiers keep only ``/*!`` comments, but the convention (esbuild, terser, uglify) also
    keeps these, which is how lodash, React and Vue mark their licence. The comment is found from
    the tag outwards; if the tag was in a string instead, the placeholder stays inside that
    string and is put back all the same.
    """
    spans: set[tuple[int, int]] = set()
    for tag in _LICENCE_TAGS:
        at = data.find(tag)
        while at >= 0:
            start = data.rfind(b"/*", 0, at)
            stop = data.find(b"*/", at)
            if (
                start >= 0
                and stop >= 0
                and data.find(b"*/", start + 2, at) < 0
                and data[start + 2 : start + 3] != b"!"
            ):
                spans.add((start, stop + 2))
            at = data.find(tag, at + 1)
    if not spans:
        return data, []
    if _LICENCE_PLACEHOLDER in data:
        raise MinifyError("source contains the licence placeholder character U+FDD2")
    pieces: list[bytes] = []
    originals: list[bytes] = []
    cursor = 0
    for start, stop in sorted(spans):
        if start < cursor:
            continue
        pieces += (data[cursor:start], _LICENCE_PLACEHOLDER)
        originals.append(data[start:stop])
        cursor = stop
    pieces.append(data[cursor:])
    return b"".join(pieces), originals


def _css_opaque_spans(css: bytes) -> list[tuple[int, int]]:
    """Strings and comments of minified CSS, found by jumping between quotes and ``/*``."""
    spans: list[tuple[int, int]] = []
    pos = 0
    end = len(css)
    while True:
        starts = [at for at in (css.find(b'"', pos), css.find(b"'", pos), css.find(b"/*", pos))]
        start = min((at for at in starts if at >= 0), default=-1)
        if start < 0:
            return spans
        if css[start] == 0x2F:  # a comment
            stop = css.find(b"*/", start + 2)
            stop = end if stop < 0 else stop + 2
        else:
            stop = start + 1
            while stop < end and css[stop] != css[start] and css[stop] != 0x0A:
                stop += 2 if css[stop] == 0x5C else 1  # a backslash escapes the next byte
            stop = min(stop + 1, end)
        spans.append((start, stop))
        pos = stop


def _space_empty_custom_properties(css: bytes) -> bytes:
    """``--x:;`` -> ``--x: ;`` outside strings and comments."""
    hits: list[int] = []
    for pair in (b":;", b":}"):
        at = css.find(pair)
        while at >= 0:
            start = at
            while start > 0 and css[start - 1] in _NAME_BYTES:
                start -= 1
            if css[start : start + 2] == b"--" and start > 0 and css[start - 1] in b"{;":
                hits.append(at + 1)
            at = css.find(pair, at + 1)
    if not hits:
        return css
    opaque = _css_opaque_spans(css)
    starts = [start for start, _ in opaque]
    pieces: list[bytes] = []
    cursor = 0
    for hit in sorted(hits):
        index = bisect.bisect_right(starts, hit) - 1
        if index >= 0 and opaque[index][1] > hit:
            continue  # inside a string or a comment
        pieces += (css[cursor:hit], b" ")
        cursor = hit
    pieces.append(css[cursor:])
    return b"".join(pieces)


def minify_css(data: bytes) -> bytes:
    data, licences = _hide_licences(data)
    out: bytes = rcssmin.cssmin(data, keep_bang_comments=True)
    return _space_empty_custom_properties(_restore(out, _LICENCE_PLACEHOLDER, licences, "licence"))


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


def _escapes_that_may_lose_their_space(data: bytes) -> list[int]:
    """Offsets of each ``\\u`` preceded by blanks (or a comment) after an identifier character.

    Only there can rjsmin glue an escaped identifier to the word before it; in a string such as
    ``"a \\u00e9"`` the same shape is harmless and costs nothing more than a marker.
    """
    found: list[int] = []
    at = data.find(b"\\u")
    while at >= 0:
        before = at - 1
        while before >= 0 and data[before] in b" \t\r\n":
            before -= 1
        if (before >= 1 and data[before - 1 : before + 1] == b"*/") or (
            0 <= before < at - 1 and data[before] in _WORD_BYTES
        ):
            found.append(at)
        at = data.find(b"\\u", at + 2)
    return found


def _jsmin(data: bytes) -> bytes:
    risky = _escapes_that_may_lose_their_space(data)
    if not risky:
        out: bytes = rjsmin.jsmin(data, keep_bang_comments=True)
        return out
    if _ESCAPE_MARK in data:
        raise MinifyError("source contains the escape marker character U+FDD1")
    # rjsmin does not count a backslash as part of an identifier, so `var \u0061` would lose its
    # space and become `var\u0061` (the identifier "vara"). With a marker that rjsmin reads as an
    # identifier character in place of the backslash, the space stays.
    pieces: list[bytes] = []
    cursor = 0
    for at in risky:
        pieces += (data[cursor:at], _ESCAPE_MARK)
        cursor = at + 1
    pieces.append(data[cursor:])
    marked: bytes = rjsmin.jsmin(b"".join(pieces), keep_bang_comments=True)
    return marked.replace(_ESCAPE_MARK, b"\\")


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
    minified = _jsmin("".join(pieces).encode("utf-8", "surrogateescape"))
    return _restore(minified, _PLACEHOLDER_BYTES, originals, "template")


def minify_js(data: bytes) -> bytes:
    """rjsmin keeping licence comments (``/*!``, ``@license``, ``@preserve``) and a ``#!`` line."""
    hashbang = b""
    if data.startswith(b"#!"):
        newline = data.find(b"\n")
        if newline < 0:
            return data
        hashbang, data = data[: newline + 1], data[newline + 1 :]
    data, licences = _hide_licences(data)
    nesting = _last_nesting(data)
    body = _jsmin(data) if nesting < 0 else _jsmin_keeping_templates(data, nesting)
    return hashbang + _restore(body, _LICENCE_PLACEHOLDER, licences, "licence")
