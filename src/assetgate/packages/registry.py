"""Which npm registry to use: ``ASSETGATE_NPM_REGISTRY``, else ``npm_config_registry``, else npm.

The repository never names a registry host: the base URL comes from the operator's settings, the
variable npm itself honours, or what the installed npm client is configured with (so a machine
that already points npm at a mirror needs no extra setting). Only http(s) URLs with a host are
accepted; the result always ends in ``/`` so paths can be joined onto it.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from collections.abc import Callable, Mapping
from typing import Final
from urllib.parse import urlsplit

log = logging.getLogger("assetgate.packages")

NPM_CONFIG_TIMEOUT_S: Final = 10.0
ENV_NAMES: Final = ("npm_config_registry", "NPM_CONFIG_REGISTRY")


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
) -> str | None:
    """The registry base URL in order of precedence; npm is only asked when nothing is set."""
    if configured:
        return normalize_base(configured)
    for name in ENV_NAMES:
        if environ.get(name):
            return normalize_base(environ[name])
    return normalize_base(ask_npm())
