"""``assetgate serve`` as a real process on loopback: the one way tests start, watch and stop it."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.waiting import wait_until

COMMAND = (sys.executable, "-m", "assetgate")  # the venv's ``assetgate``, whatever PATH says
# Upstreams nobody listens on: a served process never reaches past loopback.
NO_UPSTREAMS = {
    "npm_registry": "http://127.0.0.1:9/",
    "library_api": "http://127.0.0.1:9",
    "library_files": "http://127.0.0.1:9/libs",
}


# Ports for servers a test starts, below Linux's ephemeral range (32768-60999 by default), so no
# outgoing connection's port and no OS-picked ``bind(0)`` lands on one between the pick and the
# bind. The range is split between pytest-xdist's workers (PYTEST_XDIST_WORKER=gw<N>): two workers
# never pick the same port. Each run starts at a random offset in its share, so two runs on one
# machine (engineers, CI) rarely walk the same ports; a port still in use is skipped.
PORT_RANGE = range(10_000, 32_000)


def _port_share() -> range:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    index = int(worker) if worker.isdigit() else 0
    size = len(PORT_RANGE) // max(count, 1)
    start = PORT_RANGE.start + index * size
    return range(start, start + size)


def _port_cycle() -> Iterator[int]:
    share = _port_share()
    offset = random.randrange(len(share))
    while True:
        yield from share[offset:]
        yield from share[:offset]
        offset = 0


_ports = _port_cycle()


def pick_port() -> int:
    """A loopback port free now, from this xdist worker's own share of ``PORT_RANGE``.

    Every call returns the next port of the share (a port comes round again only after the whole
    share), so a port a test closed is not handed to the next test while it may still be held."""
    for _ in range(1000):
        port = next(_ports)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # held by another process: the next one
            return port
    raise AssertionError(f"no free loopback port in {_port_share()}")


def clean_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The test's environment minus the caller's ``ASSETGATE_*`` and metrics dir, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSETGATE_")}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    return {**env, **extra}


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``assetgate *args`` to its end (bounded), with only ``env``'s settings; output captured."""
    return subprocess.run(
        [*COMMAND, *args],
        env=clean_env(env or {}),
        capture_output=True,
        text=True,
        timeout=60,
    )


@dataclass
class Served:
    """A running ``assetgate serve``: its address, its process (a session of its own) and log."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def json_lines(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.log_text().splitlines() if line.startswith("{")]

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        """Signal it, wait ``timeout`` s, then kill; its exit code. No worker outlives it."""
        try:
            return stop(self.process, sig, timeout)
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)


Start = Callable[..., Served]  # the ``serve_cli`` fixture: (*args, **settings) -> Served


@contextlib.contextmanager
def serve(workdir: Path, *args: str, **settings: str) -> Iterator[Served]:
    """``assetgate serve *args`` on 127.0.0.1:<free port>, once ``/healthz`` answers; then stopped.

    ``settings`` become ``ASSETGATE_<NAME>`` variables (the test's own are dropped); the log
    (stdout and stderr), package store and result cache are private files under ``workdir``."""
    port = pick_port()
    env = {
        "store": str(workdir / f"store-{port}"),
        "result_cache_dir": str(workdir / f"results-{port}"),
        **NO_UPSTREAMS,
        **settings,
    }
    log = workdir / f"serve-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*COMMAND, "serve", "--host", "127.0.0.1", "--port", str(port), *args],
            env=clean_env({f"ASSETGATE_{key.upper()}": value for key, value in env.items()}),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its workers can be reaped as a group afterwards
        )
    served = Served(process, port, log)
    try:
        wait_healthy(served.base, process, log)
    except BaseException:
        served.stop(signal.SIGKILL)
        raise
    try:
        yield served
    finally:
        served.stop()


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 30) -> int:
    """Send ``sig`` unless it has exited, wait ``timeout`` s, then SIGKILL; the exit code."""
    if process.poll() is None:
        process.send_signal(sig)
    try:
        return process.wait(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def wait_healthy(
    base: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 60
) -> None:
    """Until ``base``/healthz answers 200; the process's log in the failure when it never does."""

    def answered() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"{process.args} exited: {log.read_text(errors='replace')}")
        try:
            return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(
        answered,
        timeout=timeout,
        interval=0.05,
        message=lambda: f"{process.args} answering: {log.read_text(errors='replace')}",
    )
