"""What a ``<script>`` can run: a JavaScript file's module format, read from its text (pure).

The search page's copy-ready tag for a package's default file is a classic ``<script src>``; for
CommonJS (react's ``index.js``: ``process.env``, ``require``, ``module.exports``) that tag throws
``process is not defined`` in a browser, and for an ES module it is a syntax error. The page asks
the ``?sri`` answer for ``module`` and offers ``<script type="module">`` importing ``+esm`` for
those two instead (docs/packages.md). A heuristic over the text, not a parse: a UMD or browser
build guards its CommonJS branch with ``typeof exports`` / ``typeof module`` / ``typeof define``
/ ``typeof process``, so any such guard keeps the classic tag.
"""

from __future__ import annotations

import re
from typing import Final, Literal

ModuleFormat = Literal["script", "commonjs", "esm"]

#: How much of a file is read: the shape of a module shows at its top or its exports.
READ_BYTES: Final = 256 * 1024
_COMMENTS: Final = re.compile(r"/\*.*?\*/|(?<![:\"'\\])//[^\n]*", flags=re.DOTALL)
_ESM: Final = re.compile(r"^\s*(?:import\s*[\w{*'\"]|export\s+[\w{*])", flags=re.MULTILINE)
_CJS: Final = re.compile(r"\brequire\s*\(|\bmodule\.exports\b|\bexports\.\w|\bprocess\.env\b")
_GUARD: Final = re.compile(r"typeof\s*\(?\s*(?:exports|module|define|process|require)\b")


def module_format(text: str) -> ModuleFormat:
    """``esm`` (import/export statements), ``commonjs`` (unguarded require/exports/process.env),
    else ``script``: what a classic ``<script src>`` runs."""
    code = _COMMENTS.sub("", text)
    if _ESM.search(code):
        return "esm"
    if _CJS.search(code) and not _GUARD.search(code):
        return "commonjs"
    return "script"
