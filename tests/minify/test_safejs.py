from __future__ import annotations

import re

import pytest

from assetgate.minify.jsscan import ScanError, scan
from assetgate.minify.safejs import tidy_js
from tests.minify.jsprograms import PROGRAMS, crlf, noisy

WHITESPACE = re.compile(r"\s+")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("a = 1;   \nb = 2;\t\n", "a = 1;\nb = 2;\n"),
        ("a = 1;\n\n\n\nb = 2;", "a = 1;\nb = 2;"),
        ("a = 1;\n  \t\n    b = 2;", "a = 1;\n    b = 2;"),
        ("a = 1;\r\nb = 2;\rc = 3;", "a = 1;\nb = 2;\nc = 3;"),
        ("a = 1;   ", "a = 1;"),
        ("\n\n\na = 1;", "\na = 1;"),
        ("x = `keep   \n\n\n  all of it   `;  \n", "x = `keep   \n\n\n  all of it   `;\n"),
        ("x = `a ${ `b   \n\n c` }   \n\n`;\n\n", "x = `a ${ `b   \n\n c` }   \n\n`;\n"),
        ("/* keep   \n\n\n   this */\n\n\nx", "/* keep   \n\n\n   this */\nx"),
        ("x = 1; // comment blanks stay   \n\ny", "x = 1; // comment blanks stay   \ny"),
        ("s = 'a  \\\n  b';  \n", "s = 'a  \\\n  b';\n"),
        ("r = /[ ]  /g;   \n", "r = /[ ]  /g;\n"),
        ("a\n\n++b", "a\n++b"),
        ("return\n\n\nx", "return\nx"),
        ("#!/usr/bin/env node   \n\n\nx", "#!/usr/bin/env node   \nx"),
        ("\ufeffx = 1;  \n", "\ufeffx = 1;\n"),
        ("s = 'a\u2028b';   \u2028  \n", "s = 'a\u2028b';   \u2028\n"),
        ("<!-- html comment   \nx", "<!-- html comment\nx"),
    ],
)
def test_tidies_only_line_breaks_and_trailing_blanks(source: str, expected: str) -> None:
    assert tidy_js(source) == expected


@pytest.mark.parametrize("source", ["x = 1;\ny = 2;\n", "  indented();\n\tx = `a  \n\n`\n", ""])
def test_clean_input_is_returned_byte_for_byte(source: str) -> None:
    assert tidy_js(source) is source


def test_source_map_is_dropped_when_lines_move() -> None:
    source = "x = 1;\n\n\ny = 2;\n//# sourceMappingURL=app.js.map\n"
    assert tidy_js(source) == "x = 1;\ny = 2;\n"


def test_source_map_stays_when_lines_do_not_move() -> None:
    source = "x = 1;   \ny = 2;\n//# sourceMappingURL=app.js.map"
    assert tidy_js(source) == "x = 1;\ny = 2;\n//# sourceMappingURL=app.js.map"


def test_crlf_only_moves_no_line() -> None:
    source = "x = 1;\r\n//# sourceMappingURL=app.js.map"
    assert tidy_js(source) == "x = 1;\n//# sourceMappingURL=app.js.map"


def test_a_file_that_does_not_lex_raises() -> None:
    with pytest.raises(ScanError):
        tidy_js("x = `never closed   \n\n")


SOURCES = [
    pytest.param(transform(source), id=f"{name}-{label}")
    for name, source in PROGRAMS.items()
    for label, transform in (("plain", str), ("noisy", noisy), ("crlf", crlf))
]


@pytest.mark.parametrize("source", SOURCES)
def test_invariants(source: str) -> None:
    out = tidy_js(source)
    normalised = source.replace("\r\n", "\n")
    # Only whitespace changed, nothing grew, and the result is already tidy.
    assert WHITESPACE.sub("", out) == WHITESPACE.sub("", source)
    assert len(out) <= len(source)
    assert tidy_js(out) == out
    # Every template literal is byte-identical (after the spec's own CRLF normalisation).
    before = [normalised[a:b] for a, b in scan(normalised).templates]
    assert [out[a:b] for a, b in scan(out).templates] == before
    # At least one line break remains wherever there was one: lines never join.
    assert out.count("\n") >= 1 if "\n" in normalised else True
    assert not re.search(r"[ \t]\n", _outside_protected(out))
    assert "\n\n" not in _outside_protected(out)


def _outside_protected(text: str) -> str:
    """The text with protected spans (templates, comments, ...) replaced by one letter."""
    out: list[str] = []
    cursor = 0
    for start, stop in scan(text).protected:
        out += (text[cursor:start], "P")
        cursor = stop
    out.append(text[cursor:])
    return "".join(out)


def test_lines_never_join() -> None:
    source = "a = b  \n\n\n  ++c  \n\n(d)\n\n`t`"
    out = tidy_js(source)
    assert [line.strip() for line in out.split("\n")] == ["a = b", "++c", "(d)", "`t`"]
