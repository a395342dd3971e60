"""The ES-module bundler as a bounded subprocess: esbuild driven by ``build.mjs`` under node.

Located once at start (``ASSETGATE_ESM_BUNDLER_DIR``, default ``<python prefix>/share/assetgate/
bundler``, filled by ``python -m assetgate.packages.esm.install``); when it or node is missing,
``missing`` says which, and ``+esm`` answers 501 naming it, never an unbundled file.

A build runs on a thread of the build pool (``esm.pool``, its own door beside the work gate), as
its own process group with ``GOMAXPROCS=1`` (esbuild stays on the one core the slot stands for),
an address-space limit (``ASSETGATE_ESM_BUILD_MEMORY_BYTES``, inherited by esbuild's process) and
a deadline
(``ASSETGATE_ESM_BUILD_TIMEOUT_S``, and the pool's own); the group is killed at either deadline
or when the pool's job is stopped (nobody waits for it any more).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from assetgate.cpu import stop as stopping
from assetgate.errors import TimedOut

SCRIPT: Final = Path(__file__).with_name("build.mjs")
MAX_STDERR_BYTES: Final = 64 * 1024
EXIT_NO_ENTRY: Final = 3


def default_bundler_dir() -> Path:
    return Path(sys.prefix) / "share" / "assetgate" / "bundler"


class BuildFailed(Exception):
    """The bundler refused the package: ``line`` is its first error line (no paths of ours)."""

    def __init__(self, line: str, *, no_entry: bool = False, costly: bool = False) -> None:
        super().__init__(line)
        self.line = line
        self.no_entry = no_entry
        self.costly = costly  # stopped by its memory limit (or crashed): not worth a retry soon


@dataclass(frozen=True, slots=True)
class BuildJob:
    work: Path  # holds node_modules/<name>/ (the package's files)
    name: str
    subpath: str  # "" for the package's entry
    externals: dict[str, str]  # pinned already (the package itself) -> "/npm/<name>@<exact>"
    out: Path
    dependencies: tuple[str, ...] = ()  # declared, pinned after the build if imported
    pending: str = ""  # the token standing for a dependency's version until it is pinned


@dataclass(frozen=True, slots=True)
class Bundler:
    node: str
    modules: Path  # the node_modules folder with esbuild and cjs-module-lexer
    version: str  # part of every stored module's key
    timeout_s: float
    memory_bytes: int

    def build(self, job: BuildJob) -> list[str]:
        """Bundle ``job`` into ``job.out``; the module URLs it imports. Blocking (a pool job)."""
        request = {
            "dir": str(job.work),
            "name": job.name,
            "subpath": job.subpath,
            "externals": job.externals,
            "dependencies": list(job.dependencies),
            "pending": job.pending,
            "out": str(job.out),
        }
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "ASSETGATE_BUNDLER_DIR": str(self.modules),
            "GOMAXPROCS": "1",
            "NODE_OPTIONS": "",
        }
        # The address-space limit is set by the shell that then becomes node (no preexec_fn in
        # a threaded server); node's esbuild process inherits it.
        limit_kib = str(max(1, self.memory_bytes // 1024))
        process = subprocess.Popen(
            ["/bin/sh", "-c", 'ulimit -v "$0" && exec "$@"', limit_kib, self.node, str(SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=job.work,
            env=env,
            start_new_session=True,
        )

        def kill() -> None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

        job_stop = stopping.current()
        watching = job_stop.watching(kill) if job_stop is not None else contextlib.nullcontext()
        try:
            with watching:
                out, err = process.communicate(json.dumps(request).encode(), self.timeout_s)
        except subprocess.TimeoutExpired as exc:
            kill()
            process.communicate()
            raise TimedOut(
                f"building {job.name} took longer than ASSETGATE_ESM_BUILD_TIMEOUT_S"
                f" ({self.timeout_s:g} s)"
            ) from exc
        finally:
            kill()  # esbuild's service process must not outlive its node
        if job_stop is not None:
            job_stop.check()  # stopped by the gate: its error, not a build failure
        if process.returncode != 0:
            line = err[:MAX_STDERR_BYTES].decode("utf-8", "replace").strip().splitlines()
            first = _scrub(line[0] if line else "", job.work)
            costly = process.returncode < 0 or not first or "out of memory" in first.lower()
            if costly:
                first = (
                    f"the bundler stopped (exit {process.returncode}): over"
                    " ASSETGATE_ESM_BUILD_MEMORY_BYTES, or a crash"
                )
            no_entry = process.returncode == EXIT_NO_ENTRY
            raise BuildFailed(first, no_entry=no_entry, costly=costly)
        try:
            imports = json.loads(out)["imports"]
        except (ValueError, KeyError, TypeError) as exc:
            raise BuildFailed("the bundler answered nothing readable") from exc
        return [i for i in imports if isinstance(i, str)]


def _scrub(line: str, work: Path) -> str:
    """The error line without the server's folders (the package's own paths stay)."""
    return line.replace(str(work / "node_modules") + "/", "").replace(str(work), "")[:300]


def _read_version(modules: Path, package: str) -> str | None:
    try:
        manifest = json.loads((modules / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = manifest.get("version") if isinstance(manifest, dict) else None
    return version if isinstance(version, str) else None


def locate(folder: Path | None, node: str, timeout_s: float, memory_bytes: int) -> Bundler | str:
    """The bundler, or a sentence saying what is missing (for the 501)."""
    import shutil

    modules = (folder or default_bundler_dir()) / "node_modules"
    node_path = shutil.which(node)
    if node_path is None:
        return f"node ({node}) is not installed; ES module builds need it to run esbuild"
    esbuild = _read_version(modules, "esbuild")
    lexer = _read_version(modules, "cjs-module-lexer")
    if esbuild is None or lexer is None:
        return (
            "the esbuild bundler is not installed (ASSETGATE_ESM_BUNDLER_DIR; "
            "install it with: python -m assetgate.packages.esm.install)"
        )
    script = hashlib.sha256(SCRIPT.read_bytes()).hexdigest()[:12]
    version = f"esbuild-{esbuild}+cjs-module-lexer-{lexer}+build-{script}"
    return Bundler(node_path, modules, version, timeout_s, memory_bytes)
