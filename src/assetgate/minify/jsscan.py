"""A small JavaScript lexer that finds what whitespace tidying must never touch.

It does not tokenize everything: it jumps from one interesting character to the next with compiled
patterns (quotes, backticks, slashes; braces only inside ``${…}``), so the regex engine does the
bulk of the work. What it reports is the spans that must be kept byte for byte: comments, template
literals (outermost, with their nested ``${…}`` code), strings that continue over a line break and
a hashbang line. Both the safe mode (``safejs``) and the minifier's template guard (``minify``) use
it.

Regex literal versus division is decided from the previous significant character, skipping
whitespace and comments (the classic rule: after ``)``, ``]``, an identifier, a number, a string or
a template it is division; after an operator, ``(``, ``,``, ``{``, ``}``, ``;`` or a keyword such as
``return``/``typeof`` it is a regex). A regex literal cannot span lines, so a wrong guess stays on
its line; if it still leaves the scan in an impossible state (an unterminated string, comment or
template, unbalanced ``${``) the scan raises `ScanError` and callers leave the file alone.

Input is expected with line breaks already normalised to ``\\n``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

Span = tuple[int, int]

# Strings are read by an anchored pattern from their opening quote; the code between interesting
# characters is skipped with str.find (memchr), which is far faster than any pattern.
_STRING_AT: Final = re.compile(
    r"""'[^'\\\n]*+(?:\\[\s\S][^'\\\n]*+)*+'|"[^"\\\n]*+(?:\\[\s\S][^"\\\n]*+)*+\""""
)
_LINE_COMMENT_AT: Final = re.compile(r"//[^\n\u2028\u2029]*+")
_LINE_COMMENT_RUN: Final = re.compile(r"//[^\n]*+(?:\n[ \t]*+//[^\n]*+)*+")
# Template text up to the closing backtick or the next ${ (escapes and lone $ included).
_TEMPLATE_TEXT: Final = re.compile(r"[^`\\$]*(?:(?:\\[\s\S]|\$(?!\{))[^`\\$]*)*(`|\$\{)?")
_REGEX: Final = re.compile(
    r"/(?:[^\\/\[\n\u2028\u2029]|\\[^\n\u2028\u2029]"
    r"|\[(?:[^\]\\\n\u2028\u2029]|\\[^\n\u2028\u2029])*\])+/[A-Za-z]*"
)
_SOURCE_MAP: Final = re.compile(r"(?://|/\*)[#@]\s*sourceMappingURL=")

_SPACE: Final = frozenset(" \t\n\v\f\r\xa0\ufeff\u2028\u2029\u1680\u3000\u202f\u205f") | frozenset(
    chr(c) for c in range(0x2000, 0x200B)
)
# After these words an expression starts, so a slash opens a regex literal.
_REGEX_AFTER_WORDS: Final = frozenset(
    {
        "return",
        "typeof",
        "instanceof",
        "in",
        "of",
        "new",
        "delete",
        "void",
        "throw",
        "case",
        "do",
        "else",
        "yield",
        "await",
    }
)
_LONGEST_WORD: Final = max(map(len, _REGEX_AFTER_WORDS))
# After these the slash divides: the end of an operand.
_DIVISION_AFTER: Final = frozenset(")]'\"`")


class ScanError(ValueError):
    """The file did not lex consistently; leave it alone."""


@dataclass(frozen=True, slots=True)
class Scan:
    # Sorted, disjoint spans whose whitespace is content, as far as line tidying can reach it:
    # multi-line comments, templates and strings, line comments ending in blanks, the hashbang.
    protected: list[Span]
    templates: list[Span]  # outermost template literals, backticks included
    source_maps: list[Span]  # ``//# sourceMappingURL=…`` comments (also in ``protected``)


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$" or ord(ch) > 0x7F


def _slash_starts_regex(text: str, pos: int, comment_starts: dict[int, int]) -> bool:
    """Decide from what precedes ``pos`` (skipping whitespace and comments)."""
    j = pos - 1
    while j >= 0:
        ch = text[j]
        if ch in _SPACE:
            j -= 1
        elif j + 1 in comment_starts:
            j = comment_starts[j + 1] - 1
        else:
            break
    if j < 0:
        return True
    ch = text[j]
    if ch in _DIVISION_AFTER:
        return False
    if ch in "+-":
        # a++ / b: a postfix operator ends an operand.
        return not (j > 0 and text[j - 1] == ch)
    if not _is_word_char(ch):
        return True
    start = j
    while start > 0 and _is_word_char(text[start - 1]) and j - start < _LONGEST_WORD:
        start -= 1
    word = text[start : j + 1]
    if word not in _REGEX_AFTER_WORDS or (start > 0 and _is_word_char(text[start - 1])):
        return False
    # obj.return / 2 is a property, not the keyword.
    return not (start > 0 and text[start - 1] == "." and text[start - 2 : start] != "..")


def scan(text: str, *, until: int | None = None) -> Scan:
    """Find comments, templates and multi-line strings in ``text`` (``\\n`` line breaks).

    With ``until``, stop at the first top-level token past it (the minifier only needs the
    templates up to its last suspicious ``${``).
    """
    protected: list[Span] = []
    templates: list[Span] = []
    source_maps: list[Span] = []
    comment_starts: dict[int, int] = {}  # end -> start, for the regex look-back
    depths: list[int] = []  # brace depth of each open ${…}, innermost last
    template_start = -1
    pos = 0
    end = len(text)
    wrap = end + 1  # find() % wrap turns "not found" (-1) into end
    stop_at = end if until is None else until
    odd_breaks = "\u2028" in text or "\u2029" in text  # they end a line comment too
    find = text.find
    if text.startswith("#!"):
        newline = find("\n")
        pos = end if newline < 0 else newline
        protected.append((0, pos))

    # Next occurrence of each character that can change state, refreshed only once passed.
    next_single = next_double = next_tick = next_slash = next_open = next_close = -1
    while True:
        if next_single < pos:
            next_single = find("'", pos) % wrap
        if next_double < pos:
            next_double = find('"', pos) % wrap
        if next_tick < pos:
            next_tick = find("`", pos) % wrap
        if next_slash < pos:
            next_slash = find("/", pos) % wrap
        if not depths:
            # Strings on the lines before the next backtick or slash cannot hide one (there is
            # none in between) nor span a line (unless continued with a backslash), so those lines
            # are skipped whole instead of string by string.
            nearest = next_tick if next_tick < next_slash else next_slash
            if next_single < nearest or next_double < nearest:
                line_start = text.rfind("\n", pos, nearest) + 1
                if line_start > pos and find("\\\n", pos, line_start) < 0:
                    pos = line_start
                    if next_single < pos:
                        next_single = find("'", pos) % wrap
                    if next_double < pos:
                        next_double = find('"', pos) % wrap
        # The smallest of them, by hand: min() costs more than the rest of this block.
        start = next_single if next_single < next_double else next_double
        if next_tick < start:
            start = next_tick
        if next_slash < start:
            start = next_slash
        if depths:
            if next_open < pos:
                next_open = find("{", pos) % wrap
            if next_close < pos:
                next_close = find("}", pos) % wrap
            if next_open < start:
                start = next_open
            if next_close < start:
                start = next_close
        elif start > stop_at:
            break
        if start >= end:
            break
        first = text[start]
        if first == "/":
            second = text[start + 1 : start + 2]
            if second == "/":
                # A block of line comments (only indentation between them) in one step.
                comment = (_LINE_COMMENT_AT if odd_breaks else _LINE_COMMENT_RUN).match(text, start)
                assert comment is not None
                stop = comment.end()
                if find("sourceMappingURL", start, stop) >= 0:
                    stop = find("\n", start) % wrap  # alone, so that it can be dropped
            elif second == "*":
                stop = find("*/", start + 2) + 2
                if stop < 2:
                    raise ScanError(f"unterminated comment at {start}")
            else:
                regex = (
                    _REGEX.match(text, start)
                    if _slash_starts_regex(text, start, comment_starts)
                    else None
                )
                pos = regex.end() if regex else start + 1
                continue
            comment_starts[stop] = start
            if not depths:
                if text[start + 2 : start + 3] in ("#", "@") and _SOURCE_MAP.match(text, start):
                    source_maps.append((start, stop))
                    protected.append((start, stop))
                elif text[stop - 1] in " \t" or find("\n", start, stop) >= 0:
                    protected.append((start, stop))  # its whitespace is comment text
            pos = stop
        elif first == "'" or first == '"':
            string = _STRING_AT.match(text, start)
            if string is None:
                raise ScanError(f"unterminated string at {start}")
            pos = string.end()
            if not depths and find("\n", start, pos) >= 0:
                protected.append((start, pos))
        elif first == "{":
            depths[-1] += 1
            pos = start + 1
        elif first == "}" and depths[-1] > 0:
            depths[-1] -= 1
            pos = start + 1
        else:  # a backtick opens a template, or a } closes a ${…}: read template text
            if first == "`":
                if not depths:
                    template_start = start
            else:
                depths.pop()
            text_match = _TEMPLATE_TEXT.match(text, start + 1)
            assert text_match is not None  # every part of the pattern is optional
            closer = text_match.group(1)
            if closer is None:
                raise ScanError(f"unterminated template at {start}")
            pos = text_match.end()
            if closer == "${":
                depths.append(0)
            elif not depths:
                templates.append((template_start, pos))
                if find("\n", template_start, pos) >= 0:
                    protected.append((template_start, pos))
    if depths:
        raise ScanError("unterminated template substitution")
    return Scan(protected, templates, source_maps)
