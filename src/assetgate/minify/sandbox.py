"""CSS/JS transformations in child processes that can be killed: the minifiers' deadline.

rjsmin is quadratic on some inputs and, being C, cannot be stopped by a flag; three such requests
once pinned every render thread for minutes. Here each transformation is sent to a long-lived
``minify.child`` process and the calling thread waits for its answer. The job's ``stop.Stop``
(its deadline from the minify pool, or its client leaving) kills the process (SIGKILL), which ends
the wait at once; the next job starts a fresh process. Alternatives weighed (docs/optimizer.md):
capping the input size (a 64 KB cap still allows ~1 CPU-s per request and refuses real bundles)
and a linear-time minifier (esbuild's whitespace mode changes other bytes and is itself a
process to run).

A process serves one job at a time; the minify pool (``minify.pool``) never runs more jobs than
there are processes, so ``_take`` does not wait in practice (it would, rather than fail).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from typing import Final

from assetgate.cpu import stop as stopping
from assetgate.minify.child import CODES, HEADER, OK, read_exactly
from assetgate.minify.minifiers import MinifyError
from assetgate.minify.spec import AssetPlan

# -P: the working directory (maybe a document root) is not put on the import path.
_COMMAND: Final = (sys.executable, "-P", "-m", "assetgate.minify.child")


class MinifyTimeout(MinifyError, TimeoutError):
    """The transformation ran past its deadline and was killed."""


class _Child:
    __slots__ = ("_process", "killed")

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            _COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.killed = False

    def kill(self) -> None:
        """From any thread: SIGKILL; the waiting read then ends."""
        self.killed = True
        with contextlib.suppress(OSError):
            self._process.kill()

    def close(self) -> None:
        self.kill()
        self._process.wait()
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                stream.close()

    def ask(self, code: bytes, data: bytes) -> tuple[bytes, bytes] | None:
        """(status, payload), or None when the process died (was killed) under way."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None
        assert stdout is not None
        try:
            stdin.write(HEADER.pack(code, len(data)))
            stdin.write(data)
            stdin.flush()
        except (BrokenPipeError, ValueError):
            return None
        head = read_exactly(stdout, HEADER.size)
        if head is None:
            return None
        status, size = HEADER.unpack(head)
        payload = read_exactly(stdout, size)
        return None if payload is None else (status, payload)


class Sandbox:
    """Up to ``processes`` minifier processes, started on first use, replaced when killed."""

    def __init__(self, processes: int) -> None:
        self._idle: list[_Child] = []
        self._all: set[_Child] = set()
        self._lock = threading.Condition()
        self._processes = processes
        self._closed = False

    def transform(self, data: bytes, plan: AssetPlan) -> bytes:
        """``minify.render.transform_bytes`` in a child, stopped by the current job's Stop.

        Raises MinifyTimeout at the deadline, the Stop's error when the client left, and
        MinifyError when the minifier refused the file.
        """
        code = CODES[(plan.transform, plan.kind)]
        stop = stopping.current()
        child = self._take()
        answer = None
        try:
            if stop is None:
                answer = child.ask(code, data)
            else:
                with stop.watching(child.kill):
                    answer = child.ask(code, data)
        finally:
            if answer is None:
                child.killed = True  # killed, or died on its own: either way not reused
            self._give_back(child)
        if answer is None:
            if stop is not None and stop.reason == stopping.TIMEOUT:
                raise MinifyTimeout(f"stopped after the {stop.timeout_s:g} s minify deadline")
            if stop is not None:
                stop.check()
            raise MinifyError("the minifier process ended under way")
        status, payload = answer
        if status != OK:
            raise MinifyError(payload.decode(errors="replace"))
        return payload

    def _take(self) -> _Child:
        with self._lock:
            while not self._idle and len(self._all) >= self._processes and not self._closed:
                self._lock.wait()
            if self._closed:
                raise MinifyError("the server is shutting down")
            if self._idle:
                return self._idle.pop()
            child = _Child()
            self._all.add(child)
            return child

    def _give_back(self, child: _Child) -> None:
        with self._lock:
            self._lock.notify()
            if child.killed or self._closed:
                self._all.discard(child)
            else:
                self._idle.append(child)
                return
        child.close()  # reaped outside the lock

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()
            children = list(self._idle)
            self._idle.clear()
            self._all.difference_update(children)
        for child in children:
            child.close()
