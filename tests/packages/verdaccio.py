"""A real private npm registry for the tests: Verdaccio, installed pinned and started on loopback.

``python -m tests.packages.verdaccio [DIR]`` installs it (``scripts/test`` does) the way the
bundler is installed (``assetgate.packages.esm.install``): through the machine's own ``npm``, so
npm's configured registry is used and no host is named here. 6.8.0 runs on Node 20 with
``node-fetch`` pinned to 2.7.0 by an ``overrides`` entry (its own range lets npm pick a 3.x that
is ES-module only and fails under its CommonJS ``require``); 6.10 wants Node 22.

``Verdaccio`` runs one on a free port with htpasswd auth: ``@acme/*`` needs a logged-in user to
read or publish, everything else is readable by anyone. ``adduser`` is what ``npm adduser`` does
(and answers the user's token); ``publish`` runs ``npm publish`` against it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

import httpx

PINNED: Final = {"verdaccio": "6.8.0"}
OVERRIDES: Final = {"node-fetch": "2.7.0"}
NPM_TIMEOUT_S: Final = 600.0
START_DEADLINE_S: Final = 60.0

CONFIG: Final = """\
storage: {storage}
auth:
  htpasswd:
    file: {htpasswd}
    max_users: 100
uplinks: {{}}
packages:
  '@acme/*':
    access: $authenticated
    publish: $authenticated
  '**':
    access: $all
    publish: $authenticated
web:
  enable: false
log: {{type: stdout, format: json, level: warn}}
"""


def default_dir() -> Path:
    return Path(sys.prefix) / "share" / "assetgate" / "verdaccio"


def entry(target: Path) -> Path:
    return target / "node_modules" / "verdaccio" / "bin" / "verdaccio"


def installed(target: Path) -> bool:
    try:
        manifest = json.loads((target / "node_modules" / "verdaccio" / "package.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("version") == PINNED["verdaccio"]


def install(target: Path) -> int:
    """``npm install`` of the pinned Verdaccio into ``target`` (nothing when it is there)."""
    if installed(target):
        return 0
    npm = shutil.which("npm")
    if npm is None:
        print("tests: npm is not installed; the private registry tests will say so")
        return 1
    target.mkdir(parents=True, exist_ok=True)
    manifest = {
        "name": "assetgate-test-registry",
        "private": True,
        "dependencies": PINNED,
        "overrides": OVERRIDES,
    }
    (target / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    command = [
        npm,
        "install",
        "--prefix",
        str(target),
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
    ]
    try:
        done = subprocess.run(command, timeout=NPM_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"tests: installing Verdaccio failed: {exc}")
        return 1
    return done.returncode


class Verdaccio:
    """One Verdaccio process on ``127.0.0.1:<port>`` with its storage under ``folder``."""

    def __init__(self, node: str, target: Path, folder: Path, port: int) -> None:
        self.folder = folder
        self.url = f"http://127.0.0.1:{port}/"
        self.nerf = f"//127.0.0.1:{port}/"
        config = folder / "config.yaml"
        config.write_text(CONFIG.format(storage=folder / "storage", htpasswd=folder / "htpasswd"))
        self.log = (folder / "verdaccio.log").open("wb")
        self.process = subprocess.Popen(
            [node, str(entry(target)), "--config", str(config), "--listen", f"127.0.0.1:{port}"],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_DEADLINE_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"Verdaccio exited: {(self.folder / 'verdaccio.log').read_text()}"
                )
            try:
                if httpx.get(self.url + "-/ping", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("Verdaccio did not answer /-/ping in time")
            time.sleep(0.1)

    def adduser(self, name: str, password: str) -> str:
        """Create the user (``npm adduser``'s request); its token."""
        response = httpx.put(
            f"{self.url}-/user/org.couchdb.user:{name}",
            json={"name": name, "password": password, "type": "user"},
            timeout=30,
        )
        response.raise_for_status()
        token = response.json()["token"]
        assert isinstance(token, str)
        return token

    def publish(self, npm: str, token: str, folder: Path) -> None:
        """``npm publish`` of the package in ``folder`` with the user's token."""
        userconfig = folder.parent / f"{folder.name}.npmrc"
        userconfig.write_text(f"{self.nerf}:_authToken={token}\n")
        done = subprocess.run(
            [
                npm,
                "publish",
                "--registry",
                self.url,
                "--userconfig",
                str(userconfig),
                "--ignore-scripts",
                "--loglevel=error",
            ],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**os.environ, "npm_config_registry": self.url},
        )
        userconfig.unlink()
        assert done.returncode == 0, done.stderr

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.close()


if __name__ == "__main__":
    sys.exit(install(Path(sys.argv[1]) if len(sys.argv) > 1 else default_dir()))
