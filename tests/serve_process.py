"""``assetgate serve`` as a real process on loopback (tests of the command line and the edges)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx


def pick_port() -> int:
    """A free loopback port (the OS picks it; another test may race, as with every such helper)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The test's environment minus any ``ASSETGATE_*`` of the caller, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSETGATE_")}
    return {**env, **extra}


@contextmanager
def serve(port: int, root: Path, log: Path, **env: str) -> Iterator[str]:
    """Start ``python -m assetgate serve`` on 127.0.0.1:``port``; yield its base URL; stop it."""
    settings = {
        "ASSETGATE_HOST": "127.0.0.1",
        "ASSETGATE_PORT": str(port),
        "ASSETGATE_ROOT": str(root),
        "ASSETGATE_STORE": str(log.parent / f"store-{port}"),
        "ASSETGATE_NPM_REGISTRY": "http://127.0.0.1:9/",
        "ASSETGATE_LIBRARY_API": "http://127.0.0.1:9",
        "ASSETGATE_LIBRARY_FILES": "http://127.0.0.1:9/libs",
        "ASSETGATE_LOG_LEVEL": "warning",
        **{f"ASSETGATE_{key.upper()}": value for key, value in env.items()},
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "assetgate", "serve"],
            env=clean_env(settings),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, process, log)
        yield base
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_healthy(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Until ``base``/healthz answers 200; the process's log in the failure when it never does."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{process.args[0]} exited: {log.read_text(errors='replace')}")
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"{process.args[0]} did not answer: {log.read_text(errors='replace')}")
