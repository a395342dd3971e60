"""Which npm registry to use: ``ASSETGATE_NPM_REGISTRY``, else ``npm_config_registry``, else npm,
else the registry recorded when the bundler was installed.

The repository never names a registry host: the base URL comes from the operator's settings, the
variable npm itself honours, what the installed npm client is configured with (so a machine
that already points npm at a mirror needs no extra setting), or, where no npm is installed (the
container image, a systemd host without node), what npm said on the machine that installed the
bundler (``python -m assetgate.packages.esm.install`` writes ``RECORDED`` under the Python
prefix: npm's own default, the public registry, unless that machine's npm was configured
otherwise). Only http(s) URLs with a host are accepted; the result always ends in ``/`` so paths
can be joined onto it.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

log = logging.getLogger("assetgate.packages")

NPM_CONFIG_TIMEOUT_S: Final = 10.0
ENV_NAMES: Final = ("npm_config_registry", "NPM_CONFIG_REGISTRY")


def recorded_file() -> Path:
    """Where the bundler's install step records npm's registry (beside the bundler)."""
    return Path(sys.prefix) / "share" / "assetgate" / "npm-registry"


def recorded_registry(path: Path | None = None) -> str | None:
    try:
        return (path or recorded_file()).read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def normalize_base(url: str | None) -> str | None:
    if not url:
        return None
    text = url.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        return None
    return text if text.endswith("/") else text + "/"


def npm_config_registry(npm: str | None = None) -> str | None:
    """``npm config get registry``, or None when npm is missing, slow or says nothing useful."""
    binary = npm or shutil.which("npm")
    if binary is None:
        return None
    try:
        done = subprocess.run(
            [binary, "config", "get", "registry"],
            capture_output=True,
            text=True,
            timeout=NPM_CONFIG_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        log.warning("npm config get registry failed")
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def pick_registry(
    configured: str | None,
    environ: Mapping[str, str],
    ask_npm: Callable[[], str | None] = npm_config_registry,
    recorded: Callable[[], str | None] = recorded_registry,
) -> str | None:
    """The registry base URL in order of precedence; npm is only asked when nothing is set."""
    return registry_and_origin(configured, environ, ask_npm, recorded)[0]


def registry_and_origin(
    configured: str | None,
    environ: Mapping[str, str],
    ask_npm: Callable[[], str | None] = npm_config_registry,
    recorded: Callable[[], str | None] = recorded_registry,
) -> tuple[str | None, str]:
    """``pick_registry`` and where its answer came from, for the line logged at start."""
    if configured:
        return normalize_base(configured), "ASSETGATE_NPM_REGISTRY"
    for name in ENV_NAMES:
        if environ.get(name):
            return normalize_base(environ[name]), name
    asked = normalize_base(ask_npm())
    if asked is not None:
        return asked, "npm config get registry"
    return normalize_base(recorded()), f"recorded at install in {recorded_file()}"
