"""Issue 36, item 7: which default files a classic ``<script src>`` can run (pure)."""

from __future__ import annotations

import pytest

from assetgate.packages.moduleformat import module_format

REACT_INDEX = """'use strict';

if (process.env.NODE_ENV === 'production') {
  module.exports = require('./cjs/react.production.min.js');
} else {
  module.exports = require('./cjs/react.development.js');
}
"""
UMD = """/** @license React v18 */
(function (global, factory) {
  typeof exports === 'object' && typeof module !== 'undefined' ? factory(exports) :
  typeof define === 'function' && define.amd ? define(['exports'], factory) :
  (global = global || self, factory(global.React = {}));
}(this, (function (exports) { 'use strict'; exports.version = '18'; })));
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (REACT_INDEX, "commonjs"),
        ("exports.a = 1;", "commonjs"),
        ("var x = require('x');", "commonjs"),
        ("!function(){var e=process.env.X}();", "commonjs"),
        (UMD, "script"),
        ("w()", "script"),
        ("window.jQuery = function () {};", "script"),
        ("// module.exports = x\nwindow.a = 1;", "script"),  # a comment does not count
        ("/* require('x') */ window.a = 1;", "script"),
        ("export function hello(){return'hello'}", "esm"),
        ("import React from 'react';\nexport default React;", "esm"),
        ("import{a}from'./a.js';", "esm"),
        ('var s = "https://example.invalid/x"; exports.s = s;', "commonjs"),
    ],
)
def test_module_format(text: str, expected: str) -> None:
    assert module_format(text) == expected
