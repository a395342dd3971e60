"""deploy/assetgate.service: hardened, and accepted by ``systemd-analyze verify`` word for word."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_binary

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "deploy" / "assetgate.service"
INSTALLED = "/opt/assetgate/.venv/bin/assetgate"


def directives(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            found.setdefault(key.strip(), []).append(value.strip())
    return found


def verify(unit: Path) -> subprocess.CompletedProcess[str]:
    binary = require_binary("systemd-analyze")
    return subprocess.run([binary, "verify", str(unit)], capture_output=True, text=True, timeout=60)


def installed_copy(tmp_path: Path, text: str) -> Path:
    """The unit with ExecStart pointing at this checkout's ``assetgate`` (verify checks it runs)."""
    assert INSTALLED in text
    here = Path(sys.executable).parent / "assetgate"
    assert here.is_file()
    unit = tmp_path / "assetgate.service"
    unit.write_text(text.replace(INSTALLED, str(here)))
    return unit


def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    result = verify(installed_copy(tmp_path, UNIT.read_text()))
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == ""


def test_verify_catches_a_mistyped_directive(tmp_path: Path) -> None:
    """The check above can fail: a typo in a hardening line is reported on this machine."""
    broken = UNIT.read_text().replace("ProtectSystem=strict", "ProtectSystem=strickt")
    result = verify(installed_copy(tmp_path, broken))
    assert "strickt" in result.stderr


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("ReadWritePaths", "/var/lib/assetgate /var/cache/assetgate"),
        ("MemoryMax", "2G"),
        ("EnvironmentFile", "/etc/assetgate/assetgate.env"),
        ("CapabilityBoundingSet", ""),
    ],
)
def test_the_unit_is_hardened(key: str, value: str) -> None:
    assert directives(UNIT.read_text()).get(key) == [value]


def test_writable_paths_are_the_store_and_cache_only() -> None:
    found = directives(UNIT.read_text())
    store = next(v for v in found["Environment"] if v.startswith("ASSETGATE_STORE="))
    assert store.removeprefix("ASSETGATE_STORE=").startswith("/var/lib/assetgate/")
    assert found["ReadWritePaths"] == ["/var/lib/assetgate /var/cache/assetgate"]
