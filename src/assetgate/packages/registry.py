"""Which npm registry serves a package, and with which credentials.

The default registry: ``ASSETGATE_NPM_REGISTRY``, else the ``registry=`` of ``ASSETGATE_NPMRC``,
else ``npm_config_registry``, else what ``npm config get registry`` says. The repository never names
a registry host: the base URL comes from the operator's settings, the file a team already has,
the variable npm itself honours, or what the installed npm client is configured with (so a
machine that already points npm at a mirror needs no extra setting). Only http(s) URLs with a
host are accepted; a base always ends in ``/`` so paths can be joined onto it. Where no npm is
installed (the container image, a host without node), the last resort is what npm said on the
machine that installed the bundler: ``python -m assetgate.packages.esm.install`` records it in
``recorded_file()`` under the Python prefix (npm's own default, the public registry, unless that
npm was configured otherwise). ``Registries.origin`` says which of these gave the default, for
the line logged at start.

A package of a scope with an ``@scope:registry=`` line comes from that registry; every request
carries the credential whose nerf dart (``//host[:port]/path/``) it lies under (``Registries``).
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from assetgate.packages.npmrc import Credential, Npmrc, NpmrcError, credential_for, parse_npmrc

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


def registry_host(base: str) -> str:
    """``host[:port]`` of a registry, for messages (never a path, which may hold a repository
    name an operator considers internal, never credentials)."""
    parts = urlsplit(base)
    return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)


def scope_of(name: str) -> str | None:
    return name.split("/", 1)[0] if name.startswith("@") else None


@dataclass(frozen=True, slots=True)
class Registries:
    """The default registry, the scopes' own registries, and the credentials for their URLs."""

    default: str | None
    scopes: Mapping[str, str] = field(default_factory=dict)
    credentials: tuple[Credential, ...] = field(default=(), repr=False)
    origin: str = ""  # where ``default`` came from (``registry_and_origin``)

    def for_package(self, name: str) -> str | None:
        scope = scope_of(name)
        return self.scopes.get(scope, self.default) if scope else self.default

    def headers(self, url: str) -> dict[str, str]:
        """``Authorization`` for ``url`` when a credential covers it, else nothing."""
        found = credential_for(self.credentials, url)
        return {"Authorization": found.header} if found is not None else {}

    def searched(self) -> list[tuple[str, str | None]]:
        """Every registry to search: (base, the scope its hits must be of; None: any name not
        of a scope with its own registry)."""
        found: list[tuple[str, str | None]] = []
        if self.default is not None:
            found.append((self.default, None))
        found.extend((base, scope) for scope, base in sorted(self.scopes.items()))
        return found

    def owns(self, scope: str | None, name: str) -> bool:
        """Whether a hit named ``name`` from the registry searched for ``scope`` is served from
        it: a scope's registry only for its scope, the default for every other name."""
        of = scope_of(name)
        return of == scope if scope is not None else of not in self.scopes


def read_npmrc(path: Path | None, environ: Mapping[str, str]) -> Npmrc | None:
    """``ASSETGATE_NPMRC`` parsed; an unreadable or wrong file is an NpmrcError naming it."""
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise NpmrcError(f"ASSETGATE_NPMRC cannot be read ({type(exc).__name__})") from None
    return parse_npmrc(text, environ)


def load_registries(
    configured: str | None,
    npmrc: Path | None,
    environ: Mapping[str, str],
    ask_npm: Callable[[], str | None] = npm_config_registry,
) -> Registries:
    """Everything the settings, the npmrc and npm itself say, in that order of precedence."""
    found = read_npmrc(npmrc, environ)
    if found is None:
        default, origin = registry_and_origin(configured, environ, ask_npm)
        return Registries(default, origin=origin)
    if configured:
        default, origin = normalize_base(configured), "ASSETGATE_NPM_REGISTRY"
    elif found.registry is not None:
        default, origin = found.registry, "ASSETGATE_NPMRC"
    else:
        default, origin = registry_and_origin(None, environ, ask_npm)
    return Registries(default, dict(found.scopes), found.credentials, origin)
