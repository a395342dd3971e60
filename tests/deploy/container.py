"""Build deploy/Containerfile and run the image with buildah, daemonless, on this machine.

No container registry is reachable and ``podman run`` cannot get cgroups here, so: the Debian
base comes from Debian's own packages (``mmdebstrap --variant=minbase bookworm``, with the path
exclusions the official slim images use, imported with ``podman import``) and is passed as
``BASE``; the image is built with ``buildah bud`` (the CA bundle of this machine as the ``ca``
build secret, used only by the download step); a container of it runs with
``buildah run --isolation chroot --network host`` on a loopback port."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CONTAINERFILE = REPO / "deploy" / "Containerfile"
BASE_IMAGE = "localhost/assetgate-test-base:bookworm"
IMAGE = "localhost/assetgate-test:latest"
TOOLS = ("buildah", "podman", "mmdebstrap")
# What the official debian:bookworm-slim leaves out (its /etc/dpkg/dpkg.cfg.d/docker).
SLIM = (
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/locale/*",
    "path-include=/usr/share/locale/locale.alias",
)


def require_tools() -> None:
    """Fail (never skip) naming what is missing: CI must build the image."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if os.geteuid() != 0:
        missing.append("root (buildah's chroot isolation and the volumes need it)")
    if missing:
        pytest.fail(
            f"the container test needs {', '.join(missing)}; as root, scripts/test installs "
            "podman, buildah and mmdebstrap from Debian",
            pytrace=False,
        )


def run(command: Sequence[str], log: Path, timeout: float) -> None:
    with log.open("ab") as out:
        out.write(f"\n$ {' '.join(command)}\n".encode())
        out.flush()
        result = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, timeout=timeout)
    if result.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
        pytest.fail(f"{command[0]} {command[1]} failed ({result.returncode}):\n{tail}")


def image_exists(name: str) -> bool:
    found = subprocess.run(["podman", "image", "exists", name], capture_output=True, timeout=60)
    return found.returncode == 0


def build_base(work: Path, log: Path) -> str:
    """The Debian bookworm base, once per machine (a minute; reused by later runs)."""
    if not image_exists(BASE_IMAGE):
        tar = work / "bookworm.tar"
        options = [f"--dpkgopt={option}" for option in SLIM]
        run(["mmdebstrap", "--variant=minbase", *options, "bookworm", str(tar)], log, 900)
        run(["podman", "import", str(tar), BASE_IMAGE], log, 300)
        tar.unlink()
    return BASE_IMAGE


def ca_bundle() -> str:
    bundle = os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt"
    assert Path(bundle).is_file(), f"no CA bundle at {bundle} to pass as the build secret"
    return bundle


def npm_registry() -> str:
    """This machine's npm registry, handed to the build as NPM_REGISTRY (never written here)."""
    npm = shutil.which("npm")
    assert npm is not None, "npm is needed to name the registry the build installs esbuild from"
    done = subprocess.run([npm, "config", "get", "registry"], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    return done.stdout.strip()


def build_image(base: str, log: Path) -> str:
    run(
        ["buildah", "bud", "--isolation", "chroot", "--format", "docker", "--layers",
         "--secret", f"id=ca,src={ca_bundle()}", "--build-arg", f"BASE={base}",
         "--build-arg", f"NPM_REGISTRY={npm_registry()}",
         "-f", str(CONTAINERFILE), "-t", IMAGE, str(REPO)],
        log,
        1500,
    )  # fmt: skip
    return IMAGE


def inspect(image: str) -> dict[str, object]:
    """The image's Docker-format config (User, ExposedPorts, Healthcheck, Entrypoint…)."""
    found = subprocess.run(
        ["buildah", "inspect", "--type", "image", image], capture_output=True, timeout=60
    )
    assert found.returncode == 0, found.stderr
    config: dict[str, object] = json.loads(found.stdout)["Docker"]["config"]
    return config


def new_container(image: str) -> str:
    made = subprocess.run(["buildah", "from", image], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def remove_container(container: str) -> None:
    subprocess.run(["buildah", "rm", container], capture_output=True, timeout=120)


def run_args(
    container: str,
    *,
    env: dict[str, str],
    volumes: dict[Path, str],
    extra: Sequence[str] = (),
) -> list[str]:
    """``buildah run`` on the host's network with ``env`` and host dirs mounted (``:ro`` kept)."""
    args = ["buildah", "run", "--isolation", "chroot", "--network", "host", *extra]
    for key, value in env.items():
        args += ["--env", f"{key}={value}"]
    for host, target in volumes.items():
        args += ["-v", f"{host}:{target}"]
    return [*args, container, "--"]


def server_pids(port: int) -> list[int]:
    """Host pids of the ``assetgate serve`` processes configured with ``ASSETGATE_PORT=port``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        ours = f"ASSETGATE_PORT={port}".encode() in environ
        if ours and b"serve" in command and any(b"assetgate" in part for part in command[:2]):
            found.append(int(proc.name))
    return found


def uids(pid: int) -> tuple[int, ...]:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return tuple(int(part) for part in line.split()[1:])
    raise AssertionError(f"no Uid line for {pid}")
