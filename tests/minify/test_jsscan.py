from __future__ import annotations

import pytest

from assetgate.minify.jsscan import ScanError, _slash_starts_regex, scan


def template_texts(source: str) -> list[str]:
    return [source[start:stop] for start, stop in scan(source).templates]


@pytest.mark.parametrize(
    ("source", "templates"),
    [
        ("a = `x`;", ["`x`"]),
        ("a = `x ${y} z`; b = `w`", ["`x ${y} z`", "`w`"]),
        ("`a ${ `b ${ `c` } ` } d`", ["`a ${ `b ${ `c` } ` } d`"]),
        (
            "`${ {a: {b: 1}}.a.b }` + `${'}'}` + `${\"`\"}`",
            ["`${ {a: {b: 1}}.a.b }`", "`${'}'}`", '`${"`"}`'],
        ),
        ("`$ $\\{ \\` ${1}$`", ["`$ $\\{ \\` ${1}$`"]),
        ("'`' + \"`\" + `ok`", ["`ok`"]),
        ("// `not a template\nx = `yes`", ["`yes`"]),
        ("/* `no` */ x = `yes`", ["`yes`"]),
        ("x = /`/.test(s) ? `a` : `b`", ["`a`", "`b`"]),
        ("x = /[/`]/g; y = `t`", ["`t`"]),
        ("x = a / b / `c`.length", ["`c`"]),
        ("x = (a) / 2 + `t` / 1", ["`t`"]),
        ("return /`/.source + `t`", ["`t`"]),
        ("`${ x / 2 }${ /}/.source }`", ["`${ x / 2 }${ /}/.source }`"]),
        ("`${ fn(() => { return `}` }) }` + `z`", ["`${ fn(() => { return `}` }) }`", "`z`"]),
        ("#!/usr/bin/env node `x`\ny = `t`", ["`t`"]),
        ("// a comment\u2028x = `after a U+2028`", ["`after a U+2028`"]),
        ("a = 'line \\\ncontinued `no`'; b = `yes`", ["`yes`"]),
    ],
)
def test_finds_outermost_templates(source: str, templates: list[str]) -> None:
    assert template_texts(source) == templates


@pytest.mark.parametrize(
    ("before", "is_regex"),
    [
        ("", True),
        ("x = ", True),
        ("f(", True),
        ("[1, ", True),
        ("a && ", True),
        ("{ ", True),
        ("}\n", True),
        ("return ", True),
        ("typeof ", True),
        ("case ", True),
        ("x = !", True),
        ("a + ", True),
        ("a ", False),
        ("a1 ", False),
        ("$ ", False),
        ("_ ", False),
        ("10 ", False),
        ("f() ", False),
        ("a[0] ", False),
        ("'s' ", False),
        ("`t` ", False),
        ("i++ ", False),
        ("i-- ", False),
        ("obj.return ", False),
        ("returned ", False),
        ("a /* c */ ", False),
        ("= /* c */ ", True),
        ("caf\u00e9 ", False),
    ],
)
def test_regex_or_division(before: str, is_regex: bool) -> None:
    source = before + "/x/"
    found = scan(source)  # a full scan must also accept it
    assert found is not None
    comments = {before.find("*/") + 2: before.find("/*")} if "/*" in before else {}
    assert _slash_starts_regex(source, len(before), comments) is is_regex


def test_comments_and_multi_line_strings_are_protected() -> None:
    source = "/* a\n b */ x = 1; // ends in blanks  \ny = 'one \\\ntwo'; // clean\nz = `a\nb`"
    spans = [source[a:b] for a, b in scan(source).protected]
    assert spans == ["/* a\n b */", "// ends in blanks  ", "'one \\\ntwo'", "`a\nb`"]


def test_source_map_comments_are_reported() -> None:
    source = "x = 1;\n//# sourceMappingURL=x.js.map\n/*# sourceMappingURL=y.map */"
    maps = [source[a:b] for a, b in scan(source).source_maps]
    assert maps == ["//# sourceMappingURL=x.js.map", "/*# sourceMappingURL=y.map */"]


def test_hashbang_is_protected() -> None:
    source = "#!/usr/bin/env node  \nx = 1"
    assert [source[a:b] for a, b in scan(source).protected] == ["#!/usr/bin/env node  "]


def test_until_stops_after_the_given_position() -> None:
    source = "`a` + `b ${1}` + `c`"
    assert [source[a:b] for a, b in scan(source, until=8).templates] == ["`a`", "`b ${1}`"]


@pytest.mark.parametrize(
    "source",
    [
        "x = 'unterminated\n';",
        'x = "unterminated',
        "x = `never closed",
        "x = `${ open",
        "x = `${ `inner` ",
        "/* never closed",
    ],
)
def test_inconsistent_input_raises(source: str) -> None:
    with pytest.raises(ScanError):
        scan(source)
