"""Run uvicorn so that SIGTERM drains: stop accepting, finish in-flight requests, exit 0.

One process: uvicorn's server already stops accepting and waits up to
``ASSETGATE_SHUTDOWN_GRACE_S`` for open requests; it then re-raises the signal, whose default
action would end the process with 143 (or a KeyboardInterrupt traceback for Ctrl-C): we catch it
and exit cleanly.

Several workers: uvicorn's supervisor keeps its own copy of the listening socket open while the
workers drain, so new connections would still queue in the kernel and be reset at exit. This
subclass closes that copy first. Each run gets a private ``PROMETHEUS_MULTIPROC_DIR`` (made before
the workers start, removed after they stop), and a worker that died and was replaced is marked
dead so its live gauges stop counting.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import uvicorn
from prometheus_client.multiprocess import mark_process_dead
from uvicorn.supervisors import Multiprocess

from assetgate.operations.metrics import MULTIPROC_ENV


class _Stopped(Exception):
    """SIGTERM or SIGINT (re-)raised after uvicorn's graceful shutdown."""


def _stopped(signum: int, frame: FrameType | None) -> None:
    raise _Stopped


class Supervisor(Multiprocess):
    def handle_term(self) -> None:
        self._stop_accepting()
        super().handle_term()

    def handle_int(self) -> None:
        self._stop_accepting()
        super().handle_int()

    def _stop_accepting(self) -> None:
        for sock in self.sockets:
            sock.close()

    def keep_subprocess_alive(self) -> None:
        before = {process.pid for process in self.processes}
        super().keep_subprocess_alive()
        directory = os.environ.get(MULTIPROC_ENV)
        for pid in before - {process.pid for process in self.processes}:
            if pid is not None and directory:
                mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]


@contextmanager
def private_metrics_dir() -> Iterator[str]:
    directory = tempfile.mkdtemp(prefix="assetgate-metrics-")
    previous = os.environ.get(MULTIPROC_ENV)
    os.environ[MULTIPROC_ENV] = directory
    try:
        yield directory
    finally:
        if previous is None:
            os.environ.pop(MULTIPROC_ENV, None)
        else:
            os.environ[MULTIPROC_ENV] = previous
        shutil.rmtree(directory, ignore_errors=True)


def run_server(config: uvicorn.Config, sock: socket.socket) -> int:
    """Serve on ``sock`` (bound before the banner) until SIGTERM or SIGINT; 0 after a graceful
    stop."""
    if config.workers > 1:
        with private_metrics_dir():
            Supervisor(config, sockets=[sock]).run()
        return 0
    os.environ.pop(MULTIPROC_ENV, None)  # one process: its own registry is the whole truth
    previous = {sig: signal.signal(sig, _stopped) for sig in (signal.SIGTERM, signal.SIGINT)}
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    except _Stopped:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0 if server.started else 3
