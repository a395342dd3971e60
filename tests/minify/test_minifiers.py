from __future__ import annotations

import pytest

from assetgate.minify.minifiers import MinifyError, _last_nesting, minify_css, minify_js

CSS_CASES = [
    # hacks for old IE survive as written
    ("a { *zoom: 1; _height: 1px; color: red\\9; }", "a{*zoom:1;_height:1px;color:red\\9}"),
    # binary + and - inside calc() keep their spaces; nested calc() stays intact
    (
        "a { width: calc( 100% - ( 2 * var(--gap) ) ); "
        "height: calc(1.5em + .5rem + calc(1px * 2)) }",
        "a{width:calc(100% - (2 * var(--gap)));height:calc(1.5em + .5rem + calc(1px * 2))}",
    ),
    ("a { margin: clamp(1rem, 2vw + 1rem, 3rem) }", "a{margin:clamp(1rem,2vw + 1rem,3rem)}"),
    # "not (" / "and (" must not become a function token
    (
        "@supports not (display: grid) { a { float: left } }",
        "@supports not (display:grid){a{float:left}}",
    ),
    (
        "@media screen and (min-width: 1px) and (max-width: 2px) { a { b: c } }",
        "@media screen and (min-width:1px) and (max-width:2px){a{b:c}}",
    ),
    ("@supports (a: b) or (c: d) { x { y: z } }", "@supports (a:b) or (c:d){x{y:z}}"),
    # custom properties: the empty value keeps one space for older browsers
    (":root { --x: 1px; --empty: ; --last: ; }", ":root{--x:1px;--empty: ;--last: }"),
    (":root{--a:;--b:}", ":root{--a: ;--b: }"),
    ("a::after { content: '--not:;' }", "a::after{content:'--not:;'}"),
    ('a{content:"x\\";--no:;";--yes:;b:c}', 'a{content:"x\\";--no:;";--yes: ;b:c}'),
    ("/*! {--no:; } */ a{--yes:}", "/*! {--no:; } */a{--yes: }"),
    # strings and data URIs keep their inner whitespace
    ("a::before { content: '  two  spaces  ' }", "a::before{content:'  two  spaces  '}"),
    (
        "a { background: url(\"data:image/svg+xml,<svg  xmlns='x'  a='b  c'/>\") }",
        "a{background:url(\"data:image/svg+xml,<svg  xmlns='x'  a='b  c'/>\")}",
    ),
    # @charset first, licence comments kept, other comments and source maps dropped
    (
        '@charset "utf-8";\n/*! licence */\n/* note */\na { color : red ; }\n'
        "/*# sourceMappingURL=a.css.map */",
        '@charset "utf-8";/*! licence */a{color:red}',
    ),
    # modern at-rules and nesting pass through
    ("@layer base { a { b: c } }", "@layer base{a{b:c}}"),
    (
        "@container card (min-width: 400px) { a { b: c } }",
        "@container card (min-width:400px){a{b:c}}",
    ),
    (
        "@property --p { syntax: '<length>'; inherits: false; initial-value: 0px; }",
        "@property --p{syntax:'<length>';inherits:false;initial-value:0px}",
    ),
    (".card { color: red; &:hover { color: blue } }", ".card{color:red;&:hover{color:blue}}"),
    # escapes: the space after a hex escape belongs to it
    (".\\31 23 { color: red }", ".\\31 23{color:red}"),
    # selectors: descendant spaces stay, combinator spaces go
    ("ul  li  >  a , b ~ c + d { x: y }", "ul li>a,b ~ c + d{x:y}"),
]


@pytest.mark.parametrize(("source", "expected"), CSS_CASES)
def test_css(source: str, expected: str) -> None:
    assert minify_css(source.encode()) == expected.encode()


def test_css_is_bytes_in_bytes_out_for_any_encoding() -> None:
    latin1 = "a::before { content: 'caf\xe9' }".encode("latin-1")
    assert minify_css(latin1) == b"a::before{content:'caf\xe9'}"


def test_js_keeps_licence_comments_and_drops_the_rest() -> None:
    source = b"/*! MIT licence */\nvar a = 1; // note\n/* block */\n//# sourceMappingURL=a.map\n"
    assert minify_js(source) == b"/*! MIT licence */var a=1;"


def test_license_and_preserve_comments_are_kept_too() -> None:
    licence = b"/**\n * @license MIT\n */"
    source = licence + b"\nvar a = 1; /* x */ /** @preserve keep */ var s = '@license';"
    assert minify_js(source) == licence + b"var a=1;/** @preserve keep */var s='@license';"
    css = b"/* @license Apache-2.0 */\na { color : red } /* drop */"
    assert minify_css(css) == b"/* @license Apache-2.0 */a{color:red}"


def test_js_keeps_a_hashbang_line() -> None:
    assert minify_js(b"#!/usr/bin/env node\nlet a = '#!x'\n") == b"#!/usr/bin/env node\nlet a='#!x'"


def test_js_nested_template_is_kept_byte_for_byte() -> None:
    template = b'`${a === 1 ? ")" : `, ${a})`}  and  ${ `x  y` }`'
    source = b"function f ( a ) {\n  return " + template + b" ;\n}\nvar  s = `plain  one` ;\n"
    assert minify_js(source) == b"function f(a){return" + template + b";}\nvar s=`plain  one`;"


def test_js_escaped_identifier_keeps_its_space() -> None:
    assert minify_js(b"var \\u0061bc = 1; return \\u0061bc") == b"var \\u0061bc=1;return \\u0061bc"


def test_js_strings_with_escapes_are_untouched() -> None:
    source = b"x = '\\\\u0041  \\u0041' + \"\\\\\" + y"
    assert minify_js(source) == b"x='\\\\u0041  \\u0041'+\"\\\\\"+y"


@pytest.mark.parametrize(
    "raw",
    [
        b"var s = 'caf\xe9';  // latin-1 byte\n",  # not UTF-8
        b"var s = '\xed\xa0\x80';\n",  # an encoded lone surrogate
        b"var s = `caf\xe9 ${ `x` }`;\n",  # not UTF-8, on the template path
    ],
)
def test_js_non_utf8_bytes_pass_through(raw: bytes) -> None:
    out = minify_js(raw)
    assert out.startswith(b"var s=")
    assert raw.split(b"=", 1)[1].strip().split(b";")[0] in out


def test_js_crlf_on_the_template_path() -> None:
    source = b"var a = `x ${ `y` }\r\nz`;\r\nvar b = 1;\r\n"
    assert minify_js(source) == b"var a=`x ${ `y` }\nz`;var b=1;"


def test_js_marker_characters_refuse_the_template_path() -> None:
    with pytest.raises(MinifyError):
        minify_js("x = `${ `a` }` + `\ufdd0`".encode())
    assert minify_js("x = `${ `a` }` + '\ufdd0'".encode()) == "x=`${ `a` }`+'\ufdd0'".encode()
    with pytest.raises(MinifyError):
        minify_js("x = a \\u0062 + '\ufdd1'".encode())
    assert minify_js("x = '\\u0041\ufdd1'".encode()) == "x='\\u0041\ufdd1'".encode()


def test_js_line_separator_after_a_line_comment_is_refused() -> None:
    with pytest.raises(MinifyError):
        minify_js("// note\u2028var kept = 1;\nvar  u = 2;".encode())
    # in a string it is plain content
    assert minify_js("var s = '\u2028' ;".encode()) == "var s='\u2028';".encode()


def test_js_unlexable_template_path_refuses() -> None:
    with pytest.raises(MinifyError):
        minify_js(b"y = 'unterminated\n'; x = `${ `a` }`")


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (b"no templates here", False),
        (b"`plain ${x} template`", False),
        (b"`${ {a: 1}.a }`", False),
        (b"'${' + `x`", True),  # conservative: decided by the careful path
        (b"`a ${ `b` }`", True),
        (b"`a ${ f({x: 1}) + `b` }`", True),
        (b"`a ${ '`' }`", True),
        (b"`a ${ '}' } ` + `b`", False),
    ],
)
def test_nesting_detector(source: bytes, found: bool) -> None:
    assert (_last_nesting(source) >= 0) is found
