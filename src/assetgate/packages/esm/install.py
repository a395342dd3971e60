"""Install the pinned ES-module bundler: ``python -m assetgate.packages.esm.install [DIR]``.

esbuild (the npm package, whose ``@esbuild/<platform>`` dependency carries the native binary)
and cjs-module-lexer go into ``DIR/node_modules`` through the machine's own ``npm``, so npm's
configuration (registry, proxy, cache) applies and no host is named here. ``--ignore-scripts``:
esbuild's install script only checks and relinks the binary; the build locates the platform
package itself. ``scripts/serve`` and ``scripts/test`` run this; docs/packages.md says why esbuild.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

from assetgate.packages.esm.bundler import default_bundler_dir
from assetgate.packages.registry import normalize_base, npm_config_registry, recorded_file

PINNED: Final = ("esbuild@0.28.2", "cjs-module-lexer@2.3.0")
NPM_TIMEOUT_S: Final = 300.0


def installed(target: Path) -> bool:
    """The pinned versions are there already (nothing to ask the registry)."""
    for pin in PINNED:
        name, _, version = pin.rpartition("@")
        try:
            manifest = json.loads((target / "node_modules" / name / "package.json").read_text())
        except (OSError, ValueError):
            return False
        if not isinstance(manifest, dict) or manifest.get("version") != version:
            return False
    return True


def install(target: Path) -> int:
    npm = shutil.which("npm")
    if installed(target):
        if npm is not None and not recorded_file().exists():
            record_registry(npm)
        return 0
    if npm is None:
        print("assetgate: npm is not installed; /npm/...+esm will answer 501 naming esbuild")
        return 1
    target.mkdir(parents=True, exist_ok=True)
    command = [
        npm,
        "install",
        "--prefix",
        str(target),
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--save-exact",
        "--loglevel=error",
        *PINNED,
    ]
    try:
        done = subprocess.run(command, timeout=NPM_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"assetgate: installing the bundler failed: {exc}")
        return 1
    if done.returncode == 0:
        record_registry(npm)
    return done.returncode


def record_registry(npm: str) -> None:
    """What this machine's npm uses, for a service that runs where no npm is (the image)."""
    registry = normalize_base(npm_config_registry(npm))
    if registry is not None:
        recorded_file().parent.mkdir(parents=True, exist_ok=True)
        recorded_file().write_text(registry + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else default_bundler_dir()
    return install(target)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
