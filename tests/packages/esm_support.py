"""Helpers of the ES module tests: the installed bundler, and running built modules in node."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from assetgate.packages.esm.bundler import Bundler, default_bundler_dir, locate
from tests.conftest import require, require_binary

MODULE_URL = re.compile(r'"(/npm/[^"]+/\+esm)"')


def installed_bundler() -> Bundler:
    """The bundler ``scripts/test`` installs (``python -m assetgate.packages.esm.install``)."""
    found = locate(None, "node", 20.0, 2 * 1024 * 1024 * 1024)
    require(not isinstance(found, str), f"bundler missing in {default_bundler_dir()}: {found}")
    assert isinstance(found, Bundler)
    return found


def run_modules(folder: Path, modules: dict[str, bytes], script: str) -> object:
    """Write each module (its ``/npm/…/+esm`` imports pointed at the sibling files) and run
    ``script`` (an ES module printing JSON) in node: the built output executed for real."""
    node = require_binary("node")
    names = {url: f"./m{i}.mjs" for i, url in enumerate(modules)}
    for url, body in modules.items():
        text = MODULE_URL.sub(lambda m: json.dumps(names.get(m[1], m[1])), body.decode())
        (folder / names[url].removeprefix("./")).write_text(text)
    for url, name in names.items():
        script = script.replace(url, name)
    (folder / "main.mjs").write_text(script)
    done = subprocess.run(
        [node, str(folder / "main.mjs")], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
