"""deploy/compose.yaml read as Compose reads it, and its services moved onto loopback.

``load`` interpolates ``${VAR:-default}`` the way Compose does (the value from ``environ`` when
set and not empty, else the default), then parses the YAML with its anchors and ``<<`` merges.
``Loopback`` is the one translation from the containers' world to processes on this machine: a
service name and its container port become 127.0.0.1 and a free port, a container path becomes
the directory a volume of the test stands for. Nothing else of a service's environment or
command is changed, so the test runs what the file says.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
CONTAINERFILE = DEPLOY / "Containerfile"
_VARIABLE = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def interpolate(text: str, environ: Mapping[str, str]) -> str:
    """Compose's ``${VAR}`` / ``${VAR:-default}`` interpolation (``$$`` is a literal ``$``)."""
    text = _VARIABLE.sub(lambda m: environ.get(m[1]) or (m[2] or ""), text)
    return text.replace("$$", "$")


def load(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(interpolate(COMPOSE.read_text(), environ or {}))
    return loaded


def image_config() -> dict[str, Any]:
    """ENV, VOLUME, EXPOSE, ENTRYPOINT and CMD of the Containerfile's final stage."""
    text = CONTAINERFILE.read_text().replace("\\\n", " ")
    final = text.rsplit("\nFROM ", 1)[1]
    env_line = re.search(r"^ENV (.+)$", final, re.M)
    assert env_line is not None
    env = dict(re.findall(r"(\w+)=(\S+)", env_line[1]))

    def json_of(instruction: str) -> Any:
        found = re.search(rf"^{instruction} (.+)$", final, re.M)
        assert found is not None, instruction
        return json.loads(found[1])

    exposed = re.search(r"^EXPOSE (\d+)$", final, re.M)
    assert exposed is not None
    return {
        "env": env,
        "volumes": set(json_of("VOLUME")),
        "expose": exposed[1],
        "command": [*json_of("ENTRYPOINT"), *json_of("CMD")],
    }


@dataclass
class Loopback:
    """Where each service's ``name:port`` and each container path live on this machine."""

    addresses: dict[str, str] = field(default_factory=dict)  # "redis:6379" -> "127.0.0.1:41234"
    paths: dict[str, Path] = field(default_factory=dict)  # "/var/lib/assetgate" -> tmp/...

    def address(self, text: str) -> str:
        for inside, outside in self.addresses.items():
            text = re.sub(rf"(?<![\w.-]){re.escape(inside)}(?![\w])", outside, text)
        return text

    def path(self, text: str) -> str:
        for inside in sorted(self.paths, key=len, reverse=True):
            if text == inside or text.startswith(f"{inside}/"):
                return str(self.paths[inside]) + text[len(inside) :]
        return text

    def value(self, text: str) -> str:
        return self.path(self.address(text))
