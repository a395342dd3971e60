"""JavaScript safe mode (``safe=1``): tidy line breaks and trailing whitespace, nothing else.

The output is the input with exactly these changes, all outside comments, strings, regex literals
and template literals (``jsscan`` finds those):

1. CRLF and lone CR become LF (everywhere: the spec normalises them inside templates too, and a
   string can only hold one as a line continuation, where the two are equivalent);
2. spaces and tabs before a line break (or at the end of the file) are removed;
3. runs of empty lines collapse, so no empty line is left.

At least one line break always stays where there was one, so automatic semicolon insertion sees
the same tokens and line breaks: the program's meaning is unchanged by construction, and the result
is never larger than the input. When empty lines were removed, lines moved, so a
``sourceMappingURL`` comment would point a debugger at the wrong lines: it is dropped.

If the lexer cannot make sense of the file, `ScanError` is raised and the caller serves the file
unchanged (never a guess).
"""

from __future__ import annotations

import re
from typing import Final

from assetgate.minify.jsscan import Scan, Span, scan

# Cheap pre-check: with none of these present there is nothing to tidy.
_WORK: Final = re.compile(r"[ \t]\n|\n[ \t]*\n|\r|[ \t]\Z")


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _tidy_gap(gap: str, *, at_end: bool) -> str:
    """Strip spaces and tabs before each line break and drop lines left empty.

    Line by line rather than one regex: a pattern starting with ``[ \\t]*`` is retried at every
    space of every indentation run, which is quadratic in the indentation.
    """
    if "\n" not in gap:
        return gap.rstrip(" \t") if at_end else gap
    first, *middle, last = gap.split("\n")
    kept = [first.rstrip(" \t")]
    for line in middle:
        stripped = line.rstrip(" \t")
        if stripped:
            kept.append(stripped)
    kept.append(last.rstrip(" \t") if at_end else last)
    return "\n".join(kept)


def _rebuild(text: str, found: Scan, drop: frozenset[Span]) -> str:
    """Tidy the gaps between protected spans; dropped spans vanish and their gaps merge."""
    out: list[str] = []
    gap: list[str] = []
    cursor = 0
    for span in found.protected:
        start, stop = span
        gap.append(text[cursor:start])
        cursor = stop
        if span in drop:
            continue
        out.append(_tidy_gap("".join(gap), at_end=False))
        gap.clear()
        out.append(text[start:stop])
    gap.append(text[cursor:])
    out.append(_tidy_gap("".join(gap), at_end=True))
    return "".join(out)


def tidy_js(text: str) -> str:
    """Safe-mode output for ``text`` (itself when there is nothing to do); `ScanError` if unsure."""
    if not _WORK.search(text):
        return text
    normalised = _normalise_newlines(text)
    found = scan(normalised)
    result = _rebuild(normalised, found, frozenset())
    if found.source_maps and result.count("\n") != normalised.count("\n"):
        result = _rebuild(normalised, found, frozenset(found.source_maps))
    return text if result == text else result
