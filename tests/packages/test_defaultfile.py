from __future__ import annotations

import pytest

from assetgate.packages.defaultfile import DefaultFile, choose_default_file, normalize_entry


@pytest.mark.parametrize(
    ("manifest", "files", "expected"),
    [
        # jQuery 3: main + a minified sibling.
        (
            {"main": "dist/jquery.js"},
            {"dist/jquery.js", "dist/jquery.min.js"},
            DefaultFile("dist/jquery.min.js", "main+min-sibling"),
        ),
        # jsdelivr beats everything.
        (
            {"jsdelivr": "dist/cdn.js", "main": "index.js"},
            {"dist/cdn.js", "index.js"},
            DefaultFile("dist/cdn.js", "jsdelivr"),
        ),
        # alpinejs: cdn before browser/main.
        (
            {"cdn": "dist/cdn.min.js", "browser": "dist/x.esm.js", "main": "dist/module.cjs.js"},
            {"dist/cdn.min.js", "dist/x.esm.js", "dist/module.cjs.js"},
            DefaultFile("dist/cdn.min.js", "cdn"),
        ),
        # @popperjs/core: unpkg before main.
        (
            {"unpkg": "dist/umd/popper.min.js", "main": "lib/index.js"},
            {"dist/umd/popper.min.js", "lib/index.js"},
            DefaultFile("dist/umd/popper.min.js", "unpkg"),
        ),
        # axios: browser as an object is ignored.
        (
            {"browser": {"./lib/http.js": "./lib/xhr.js"}, "main": "index.js"},
            {"index.js", "lib/http.js", "lib/xhr.js"},
            DefaultFile("index.js", "main"),
        ),
        # "main": "./index" (no extension) -> index.js; "lib/" -> lib/index.js.
        ({"main": "./index"}, {"index.js"}, DefaultFile("index.js", "main+js")),
        ({"main": "lib/"}, {"lib/index.js"}, DefaultFile("lib/index.js", "main+index")),
        ({"main": "./lib"}, {"lib/index.js"}, DefaultFile("lib/index.js", "main+index")),
        # A main that does not exist falls through to the next field.
        (
            {"browser": "missing.js", "main": "./dist//real.js"},
            {"dist/real.js"},
            DefaultFile("dist/real.js", "main"),
        ),
        # CSS-only package: style, with its minified sibling.
        (
            {"style": "dist/bulma.css"},
            {"dist/bulma.css", "dist/bulma.min.css"},
            DefaultFile("dist/bulma.min.css", "style+min-sibling"),
        ),
        # exports: "." with conditions, in object order among browser/import/default/require.
        (
            {
                "exports": {
                    ".": {"types": "./x.d.ts", "import": "./dist/x.mjs", "require": "./dist/x.cjs"}
                }
            },
            {"dist/x.mjs", "dist/x.cjs", "x.d.ts"},
            DefaultFile("dist/x.mjs", "exports"),
        ),
        ({"exports": "./main.js"}, {"main.js"}, DefaultFile("main.js", "exports")),
        (
            {"exports": {"./sub": "./sub.js"}},
            {"sub.js", "index.js"},
            DefaultFile("index.js", "index.js"),
        ),
        # Nothing declared: index.js, with its min sibling.
        ({}, {"index.js", "index.min.js"}, DefaultFile("index.min.js", "index.js+min-sibling")),
        # Not sibling-matched: .mjs, -min.js, other folders.
        ({"main": "a.mjs"}, {"a.mjs", "a.min.mjs"}, DefaultFile("a.mjs", "main")),
        ({"main": "u.js"}, {"u.js", "u-min.js"}, DefaultFile("u.js", "main")),
        (
            {"main": "moment.js"},
            {"moment.js", "min/moment.min.js"},
            DefaultFile("moment.js", "main"),
        ),
        # An already-minified hit stays.
        ({"main": "a.min.js"}, {"a.min.js", "a.min.min.js"}, DefaultFile("a.min.js", "main")),
        # Traversal in a field is discarded, not followed.
        ({"main": "../../etc/passwd"}, {"index.js"}, DefaultFile("index.js", "index.js")),
        ({"main": 42, "browser": None}, {"index.js"}, DefaultFile("index.js", "index.js")),
    ],
)
def test_default_file(manifest: dict[str, object], files: set[str], expected: DefaultFile) -> None:
    assert choose_default_file(manifest, files) == expected


def test_no_default_file() -> None:
    assert choose_default_file({"main": "gone.js"}, {"README.md", "src/a.ts"}) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("./dist/a.js", "dist/a.js"),
        ("/dist/./a.js", "dist/a.js"),
        (" dist//a.js ", "dist/a.js"),
        ("lib/", "lib/"),
        ("../a.js", None),
        ("a\\b.js", None),
        ("a\x00.js", None),
        ("", None),
        ("./", None),
    ],
)
def test_normalize_entry(value: str, expected: str | None) -> None:
    assert normalize_entry(value) == expected
