"""docs/deploying.md, "One Debian machine, top to bottom": its commands run as written, in order.

On a copy of Debian's stock /etc/nginx (``test_debian_nginx.copy_stock_layout``), with the
absolute paths ``/etc``, ``/opt`` and ``/var`` moved into the test's directory and the ports moved
to free ones. Every line runs with bash from the repository root, except the ``systemctl`` lines:
this machine runs no systemd, so they start what they would start: ``enable --now assetgate`` the
unit's ``ExecStart`` with its ``Environment=`` and ``EnvironmentFile=`` (and its State/Cache
directories), ``reload nginx`` nginx with the configuration the steps made. The last line must
answer assetgate's health through nginx."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.conftest import require_binary
from tests.deploy.test_debian_nginx import copy_stock_layout
from tests.serve_process import pick_port, stop, wait_healthy

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # it builds a venv and installs esbuild

REPO = Path(__file__).resolve().parents[2]
HEADING = "### One Debian machine, top to bottom"


def walkthrough() -> list[str]:
    """The first ```sh block after the heading, one command a line."""
    text = (REPO / "docs" / "deploying.md").read_text()
    section = text.split(HEADING, 1)[1]
    block = section.split("```sh\n", 1)[1].split("\n```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def unit_settings(unit: Path, moved: Callable[[str], str]) -> tuple[list[str], dict[str, str]]:
    """ExecStart and the environment systemd would give it (EnvironmentFile read like systemd:
    KEY=value lines, comments and blank lines skipped)."""
    command: list[str] = []
    env: dict[str, str] = {}
    for line in unit.read_text().splitlines():
        key, _, value = line.partition("=")
        if key == "ExecStart":
            command = moved(value).split()
        elif key == "Environment":
            name, _, setting = value.partition("=")
            env[name] = moved(setting)
        elif key == "EnvironmentFile":
            for entry in Path(moved(value)).read_text().splitlines():
                if entry.strip() and not entry.startswith("#"):
                    name, _, setting = entry.partition("=")
                    env[name.strip()] = setting.strip()
        elif key in ("StateDirectory", "CacheDirectory"):
            base = "/var/lib" if key == "StateDirectory" else "/var/cache"
            Path(moved(f"{base}/{value}")).mkdir(parents=True, exist_ok=True)
    return command, env


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as running:
        yield running


def test_the_debian_walkthrough_runs_top_to_bottom(tmp_path: Path, stack: ExitStack) -> None:
    nginx = require_binary("nginx")
    require_binary("envsubst")
    require_binary("npm")
    edge, backend = pick_port(), pick_port()
    config = copy_stock_layout(tmp_path, edge)  # tmp/etc/nginx, Debian's default site enabled
    (tmp_path / "etc" / "systemd" / "system").mkdir(parents=True)  # there on every Debian

    def moved(text: str) -> str:
        text = re.sub(r"(?<![\w.])/(etc|opt|var)/", lambda m: f"{tmp_path}/{m[1]}/", text)
        text = text.replace("EDGE_LISTEN=80 ", f"EDGE_LISTEN=127.0.0.1:{edge} ")
        text = text.replace("http://127.0.0.1/", f"http://127.0.0.1:{edge}/")
        return text.replace("8081", str(backend))

    said = ""
    for line in walkthrough():
        command = moved(line)
        if line == "systemctl daemon-reload":
            continue
        if line == "systemctl enable --now assetgate":
            unit = tmp_path / "etc" / "systemd" / "system" / "assetgate.service"
            argv, env = unit_settings(unit, moved)
            log = tmp_path / "assetgate.log"
            with log.open("wb") as out:
                process = subprocess.Popen(
                    argv, env={"PATH": "/usr/bin:/bin", **env}, stdout=out,
                    stderr=subprocess.STDOUT, start_new_session=True,
                )  # fmt: skip
            stack.callback(stop, process)
            wait_healthy(f"http://127.0.0.1:{backend}", process, log, timeout=120)
            assert "npm registry " in log.read_text()  # the registry in force, said at start
            continue
        if line == "nginx -t && systemctl reload nginx":
            error_log = str(tmp_path / "log" / "error.log")
            checked = subprocess.run([nginx, "-t", "-c", str(config), "-e", error_log],
                                     capture_output=True, text=True, timeout=30)  # fmt: skip
            assert checked.returncode == 0, checked.stderr
            log = tmp_path / "nginx.log"
            with log.open("wb") as out:
                process = subprocess.Popen(
                    [nginx, "-c", str(config), "-e", error_log, "-g", "daemon off;"],
                    stdout=out, stderr=subprocess.STDOUT,
                )  # fmt: skip
            stack.callback(stop, process)
            wait_healthy(f"http://127.0.0.1:{edge}", process, log)
            continue
        done = subprocess.run(["bash", "-c", command], cwd=REPO, capture_output=True,
                              text=True, timeout=900)  # fmt: skip
        assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        said = done.stdout
    assert json.loads(said)["status"] == "ok"  # the last line: assetgate, through nginx
    installed = tmp_path / "opt" / "assetgate" / ".venv" / "share" / "assetgate"
    assert (installed / "npm-registry").read_text().startswith("http")
    assert (installed / "bundler" / "node_modules" / "esbuild" / "package.json").is_file()
