"""``min=1``: CSS through rcssmin, JavaScript through rjsmin, keeping licence comments.

Both minifiers only remove whitespace and comments (no renaming), so little can break. Wiring them
up still turned up traps, each handled here and pinned by a test:

- They are given **bytes**, never ``str``: their C extensions crash the process (SIGSEGV) on a
  ``str`` holding a lone surrogate, which is what decoding a non-UTF-8 file with
  ``surrogateescape`` produces. On bytes, non-ASCII bytes are opaque identifier characters, which
  is right for CSS and JavaScript syntax.
- rjsmin reads a template literal as a plain string from backtick to backtick, which breaks a
  ``${…}`` holding a backtick itself: d3's `` `…${a === 1 ? ")" : `, ${a})`}` `` came out as
  ``rgba(1, 2, 3,0.5)``. When a file may hold such a template (a cheap test), the outermost
  templates up to the last suspect one are found by ``jsscan``, swapped for placeholders while
  rjsmin runs, and put back byte for byte.
- rjsmin does not see ``\\u0061`` as an identifier character, so ``var \\u0061bc`` became
  ``var\\u0061bc`` (one identifier, ``varabc``); such escapes are masked while it runs.
- rjsmin ends a line comment only at ``\\n``, not at U+2028/U+2029; such a file is refused.
- Only ``/*!`` comments are kept by the minifiers; ``/** @license */`` and ``@preserve`` comments
  (lodash, React, Vue) are kept too, as esbuild, terser and uglify do.

rcssmin writes an empty custom property as ``--x:;``, which browsers from before the 2022 change to
css-variables-1 drop; the space is put back (``--x: ;``). Anything refused raises `MinifyError`
and the caller serves the original.
"""

from __future__ import annotations

import bisect
import re
from typing import Final

import rcssmin
import rjsmin

from assetgate.minify.jsscan import ScanError, scan

# Noncharacters (never used for interchange, unlike private-use icons in font CSS/JS).
_PLACEHOLDER_BYTES: Final = "`\ufdd0`".encode()  # rjsmin keeps it as it keeps any template
_ESCAPE_MARK: Final = "\ufdd1".encode()
_LICENCE_PLACEHOLDER: Final = "/*!\ufdd2*/".encode()  # a bang comment: both minifiers keep it
# The markers are found and split on with compiled patterns: bytes.find/split with a multi-byte
# needle measured ~1 GB/s here, a literal pattern 2-4× faster. All markers hold the byte 0xEF,
# so an ASCII file (memchr, ~free) cannot contain one.
_MARKER_BYTE: Final = b"\xef"
_LINE_SEPARATOR: Final = re.compile(b"\xe2\x80[\xa8\xa9]")
_SPLITTERS: Final = {
    marker: re.compile(re.escape(marker))
    for marker in (_PLACEHOLDER_BYTES, _ESCAPE_MARK, _LICENCE_PLACEHOLDER)
}
# Literal-prefixed patterns: the regex engine finds them at memory speed, unlike a pattern that
# starts with a character class (measured 20-100× slower on a 1 MB file).
_LICENCE_TAG: Final = re.compile(rb"@(?:license|preserve)")
_DOLLAR_BRACE: Final = re.compile(rb"\$\{")
_ESCAPE_U: Final = re.compile(rb"\\u")
_EMPTY_VALUE: Final = re.compile(rb":[;}]")
# A string up to its closing quote, a line break or the end (the CSS tokenizer's bad-string rule).
_CSS_STRING_AT: Final = re.compile(
    rb""""[^"\\\n]*+(?:\\[\s\S][^"\\\n]*+)*+\"?|'[^'\\\n]*+(?:\\[\s\S][^'\\\n]*+)*+'?"""
)
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
    parts = _SPLITTERS[placeholder].split(out)
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
    for tag in _LICENCE_TAG.finditer(data):
        at = tag.start()
        start = data.rfind(b"/*", 0, at)
        stop = data.find(b"*/", at)
        if (
            start >= 0
            and stop >= 0
            and data.find(b"*/", start + 2, at) < 0
            and data[start + 2 : start + 3] != b"!"
        ):
            spans.add((start, stop + 2))
    if not spans:
        return data, []
    # A placeholder already in the input would be counted by _restore, which then refuses.
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
    wrap = end + 1  # find() % wrap turns "not found" into end
    next_double = next_single = next_comment = -1
    while True:
        # Next of each opener, refreshed only once passed: one scan of the text per kind.
        if next_double < pos:
            next_double = css.find(b'"', pos) % wrap
        if next_single < pos:
            next_single = css.find(b"'", pos) % wrap
        if next_comment < pos:
            next_comment = css.find(b"/*", pos) % wrap
        start = min(next_double, next_single, next_comment)
        if start >= end:
            return spans
        if css[start] == 0x2F:  # a comment
            stop = css.find(b"*/", start + 2)
            stop = end if stop < 0 else stop + 2
        else:
            string = _CSS_STRING_AT.match(css, start)
            assert string is not None  # the quote itself always matches
            stop = string.end()
        spans.append((start, stop))
        pos = stop


def _space_empty_custom_properties(css: bytes) -> bytes:
    """``--x:;`` -> ``--x: ;`` outside strings and comments."""
    hits: list[int] = []
    for pair in _EMPTY_VALUE.finditer(css):
        at = pair.start()
        start = at
        while start > 0 and css[start - 1] in _NAME_BYTES:
            start -= 1
        if css[start : start + 2] == b"--" and start > 0 and css[start - 1] in b"{;":
            hits.append(at + 1)
    if not hits:
        return css
    opaque = _css_opaque_spans(css)
    starts = [start for start, _ in opaque]
    pieces: list[bytes] = []
    cursor = 0
    for hit in hits:
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
    for opening in _DOLLAR_BRACE.finditer(data):
        at = opening.start()
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
    return last


def _escapes_that_may_lose_their_space(data: bytes) -> list[int]:
    """Offsets of each ``\\u`` preceded by blanks (or a comment) after an identifier character.

    Only there can rjsmin glue an escaped identifier to the word before it; in a string such as
    ``"a \\u00e9"`` the same shape is harmless and costs nothing more than a marker.
    """
    found: list[int] = []
    for escape in _ESCAPE_U.finditer(data):
        at = escape.start()
        before = at - 1
        while before >= 0 and data[before] in b" \t\r\n":
            before -= 1
        if (before >= 1 and data[before - 1 : before + 1] == b"*/") or (
            0 <= before < at - 1 and data[before] in _WORD_BYTES
        ):
            found.append(at)
    return found


def _jsmin(data: bytes) -> bytes:
    risky = _escapes_that_may_lose_their_space(data)
    if not risky:
        out: bytes = rjsmin.jsmin(data, keep_bang_comments=True)
        return out
    if _MARKER_BYTE in data and _SPLITTERS[_ESCAPE_MARK].search(data):
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
    return _SPLITTERS[_ESCAPE_MARK].sub(lambda _: b"\\", marked)


def _jsmin_keeping_templates(data: bytes, until: int) -> bytes:
    # Line breaks normalised first (the lexer wants \n; inside a template the spec does the same).
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    # The lexer reads a latin-1 view: one character per byte, so nothing is really decoded or
    # re-encoded. A multi-byte UTF-8 character becomes a run of "letters", which is what it is to
    # the lexer; only U+2028/U+2029 (they end a line comment) need a real UTF-8 decoding.
    exotic = _LINE_SEPARATOR.search(data) is not None
    codec, errors = ("utf-8", "surrogateescape") if exotic else ("latin-1", "strict")
    text = data.decode(codec, errors)
    if _MARKER_BYTE in data and _SPLITTERS[_PLACEHOLDER_BYTES].search(data):
        raise MinifyError("source contains the template placeholder character U+FDD0")
    try:
        # A byte offset is never smaller than the character offset it became: a safe bound.
        templates = scan(text, until=until).templates
    except ScanError as exc:
        raise MinifyError(f"JavaScript did not lex: {exc}") from exc
    pieces: list[bytes] = []
    originals: list[bytes] = []
    cursor = 0
    for start, stop in templates:
        if text.find("`", start + 1, stop - 1) < 0:
            continue  # no backtick inside: rjsmin reads it right
        pieces += (text[cursor:start].encode(codec, errors), _PLACEHOLDER_BYTES)
        originals.append(text[start:stop].encode(codec, errors))
        cursor = stop
    pieces.append(text[cursor:].encode(codec, errors))
    minified = _jsmin(b"".join(pieces))
    return _restore(minified, _PLACEHOLDER_BYTES, originals, "template")


def minify_js(data: bytes) -> bytes:
    """rjsmin keeping licence comments (``/*!``, ``@license``, ``@preserve``) and a ``#!`` line."""
    hashbang = b""
    if data.startswith(b"#!"):
        newline = data.find(b"\n")
        if newline < 0:
            return data
        hashbang, data = data[: newline + 1], data[newline + 1 :]
    for separator in _LINE_SEPARATOR.finditer(data):
        line_start = data.rfind(b"\n", 0, separator.start()) + 1
        if data.find(b"//", line_start, separator.start()) >= 0:
            # U+2028/U+2029 end a line comment, but rjsmin would read on to the next \n and drop
            # the code in between.
            raise MinifyError("a line comment may end at U+2028/U+2029")
    data, licences = _hide_licences(data)
    nesting = _last_nesting(data)
    body = _jsmin(data) if nesting < 0 else _jsmin_keeping_templates(data, nesting)
    return hashbang + _restore(body, _LICENCE_PLACEHOLDER, licences, "licence")
