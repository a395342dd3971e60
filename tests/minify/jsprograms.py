"""Real-world-shaped JavaScript programs and a node runner that evaluates them.

Each program ends with an expression whose value is the program's observable result; the runner
evaluates every program in a fresh ``vm`` context of one node process and returns the values as
JSON text (or the error), so a transformation can be checked by running before and after.
"""

from __future__ import annotations

import json
import subprocess

TEMPLATES = r"""
const name = "world";
const list = ["a", "b"];
const html = `<ul>
    ${list.map(item => `<li class="${item}">  ${item.toUpperCase()}   </li>`).join("\n")}

</ul>   `;
const raw = String.raw`a  \n  b
   c`;
const nested = `x ${ `y ${ `z ${ 1 + 1 }  ` }  ` }  w`;
const braces = `${ {a: 1}.a } and ${ (() => { return `}`; })() } and ${ "}" + '`' }`;
const tag = (s, ...v) => s.raw.join("|") + "#" + v.join(",");
const tagged = tag`one ${1}  two ${ `${2}  ` }   three`;
const dollar = `$ ${"$"} $\{not} \` ${'${'}`;
const slashes = `${ 6 / 3 }/${ /\d+/.exec("ab12")[0] }/${ "a/b".split("/").length }`;
const rgb = (r, g, b, a) =>
  `${a === 1 ? "rgb(" : "rgba("}${r}, ${g}, ${b}${a === 1 ? ")" : `, ${a})`}`;
JSON.stringify([html, raw, nested, braces, tagged, dollar, slashes, rgb(1, 2, 3, 0.5), name])
"""

REGEX_AND_DIVISION = r"""
var a = 10, b = 2, g = 5, i = 1;
var r1 = a / b / g;
var r2 = a /b/ g;
var arr = [4, 2];
var r3 = arr[0] / arr[1] / 1;
var r4 = (a) / 2;
var re = /[/`'"]+/g;
var m = "x/`'\"y".replace(re, "_");
var r5 = "a/b/c".split(/\//).length;
function f() { return /ab+c/i.test("ABBC"); }
var r6 = typeof /x/;
var r7 = i++ / 2;
var r8 = [1, 2, 3].map(x => x / 2 / 1);
var r9 = a
/ b;
var obj = { v: 8 };
var r10 = obj.v / 2 /* a comment */ / 2;
var r11 = "//".length + '/*'.length;
var r12 = 7 /
  7;
var r13 = [/]/.test("]"), /[\]/]/.test("/"), /\/\*/.test("/*")];
var r14 = (function () { return typeof void /a/; })();
if (a) /x/.test("x");
var r15 = a /= 2;
var s = "";
switch (1) { case 1: s = /a/.source; }
JSON.stringify([r1, r2, r3, r4, m, r5, f(), r6, r7, r8, r9, r10, r11, r12, r13, r14, r15, s, a])
"""

ASI_TRAPS = r"""
var log = [];
var a = 1
var b = a
++a
log.push(a, b)
function r() {
  return
  42
}
log.push(r())
var c = 2
;[1, 2].forEach(function (x) { log.push(x) })
var d = 3
;(function () { log.push("iife") })()
let e = 5
let f = e
-1
log.push(f)
var i = 0
var g = i
--i
log.push(g, i)
var h = 1
var k = h
/2/1
log.push(k)
var t = (strings) => "tagged " + strings[0]
var u = t
`b`
log.push(u)
const arrow = () =>
  "next line"
log.push(arrow())
JSON.stringify(log)
"""

STRINGS = """
var s1 = "</script><script>alert(1)</script>";
var s2 = 'it\\'s // not a comment /* nor this */';
var s3 = "tab\\there   ";
var s4 = "line \\
continued   \\
end";
var s5 = "\\u0041\\u{1F600}\\x41 \\u2028 \\u2029";
var s6 = "raw separators: \u2028 and \u2029";
var \\u0061bc = 5;
var \u00fcn\u00efc\u00f6d\u00e9 = "ok";
var s7 = '"' + "'" + `\\``;
var s8 = "<!-- not html -->";
JSON.stringify([s1, s2, s3, s4, s5, s6, abc, \u00fcn\u00efc\u00f6d\u00e9, s7, s8])
"""

COMMENTS = """
/*! Licence: keep me
 *  exactly    as   written
 */
/* a "quote" and a 'quote' and a `tick` */
// it's a line comment with `tick` and /regex/ and "quote"
var x = 1; // trailing blanks follow:\x20\x20
/**
 * JSDoc with */ var y = 2;
var z = x /* inline */ + y;
/* multi
   line */ var w = z
// end
JSON.stringify([x, y, z, w])
"""

CLASSES = r"""
class Counter {
  #count = 0;
  static label = `counter`;
  get value() { return this.#count; }
  inc(by = 1) { this.#count += by; return this; }
  toString() { return `${Counter.label}: ${this.#count}`; }
}
const c = new Counter().inc().inc(2);
const { value, ...rest } = { value: c.value, other: 1 };
const spread = [...[1, 2], ...[3]];
const opt = rest?.other ?? "none";
const big = 2n ** 10n;
const label = (() => {
  outer: for (const n of spread) { if (n > 1) break outer; } return "done"; })();
JSON.stringify([String(c), value, spread, opt, big.toString(), label, 0.1 + 0.2, 1_000])
"""

ESCAPED_IDENTIFIERS = r"""
var \u0061bc = 5;
function f() { return \u0061bc; }
var t = typeof \u0061bc;
var o = { \u0062: 1 };
var caf\u00e9 = 2;
let x = caf\u00e9 + o . \u0062;
var s = "a \u0041 " + '\\u0041' + `\u0041 ${ \u0061bc }`;
JSON.stringify([f(), t, x, s, café])
"""

PROGRAMS: dict[str, str] = {
    "templates": TEMPLATES,
    "regex_and_division": REGEX_AND_DIVISION,
    "asi_traps": ASI_TRAPS,
    "strings": STRINGS,
    "comments": COMMENTS,
    "classes": CLASSES,
    "escaped_identifiers": ESCAPED_IDENTIFIERS,
}

_RUNNER = r"""
const vm = require("vm");
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const results = JSON.parse(input).map((source) => {
    try {
      return "ok: " + String(vm.runInNewContext(source, {}, { timeout: 5000 }));
    } catch (error) {
      return "error: " + String(error && error.name) + ": " + String(error && error.message);
    }
  });
  process.stdout.write(JSON.stringify(results));
});
"""


def run_programs(node: str, sources: list[str]) -> list[str]:
    """Evaluate each source in its own vm context of one node process: ``ok: <value>``."""
    done = subprocess.run(
        [node, "-e", _RUNNER],
        input=json.dumps(sources),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    results: list[str] = json.loads(done.stdout)
    return results


def noisy(source: str) -> str:
    """The same program with trailing blanks and an empty line after every line.

    Templates get them too, which makes a *different* program; a correct safe mode must keep that
    program's value exactly. A line continuation (``\\`` at the end) is left alone, as blanks
    after it would be a syntax error.
    """
    out: list[str] = []
    for line in source.split("\n"):
        out.append(line + "\n" if line.endswith("\\") else line + " \t \n\n")
    return "".join(out)


def crlf(source: str) -> str:
    return source.replace("\n", "\r\n")
