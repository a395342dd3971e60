"""Why a job on the CPU door should stop early: its client went away, or it ran past its deadline.

The WorkGate (``cpu.workgate``) makes one ``Stop`` per job and makes it current on the job's
thread; the imaging floor asks it between steps (``check``) and, while libvips computes,
registers a kill for the image being computed (``watching``; ``imaging.vips.killable``). The
kill is fired from outside the job's thread: by the event loop at once when the client goes
away (``abandon``), and at the deadline by the gate's ``Alarm`` thread (``expire``). libvips then
ends the computation at its next tile. Nothing is asked per tile: libvips' eval callback, which
this replaced, cost ~50 trips from C into Python (each taking the GIL) per 12 MP render.
It lives below both of them because both read it and neither may import the other.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from assetgate.errors import AppError

ABANDONED: Final = "abandoned"
TIMEOUT: Final = "timeout"

_CURRENT: ContextVar[Stop | None] = ContextVar("assetgate_stop", default=None)

Kill = Callable[[], object]


class Stop:
    """Set from any thread; read by the job's thread. Plain attribute writes and list appends
    (atomic under the GIL), no lock needed."""

    __slots__ = ("_alarm", "_deadline", "_ended", "_kills", "_reason", "timeout_s")

    def __init__(self, timeout_s: float | None = None, alarm: Alarm | None = None) -> None:
        self.timeout_s = timeout_s
        self._alarm = alarm
        self._deadline: float | None = None
        self._reason: str | None = None
        self._ended = False
        self._kills: list[Kill] = []

    def start(self) -> None:
        """The job begins on its thread: the render deadline counts from here."""
        if self.timeout_s is not None:
            self._deadline = time.monotonic() + self.timeout_s
            if self._alarm is not None:
                self._alarm.arm(self, self._deadline)

    def end(self) -> None:
        """The job returned or raised: its deadline no longer matters."""
        self._ended = True
        if self._alarm is not None:
            self._alarm.disarm()

    @property
    def ended(self) -> bool:
        return self._ended

    def abandon(self) -> None:
        self._reason = self._reason or ABANDONED
        self._fire()

    def expire(self) -> None:
        """The deadline passed (called by the ``Alarm``): stop what is being computed now."""
        if not self._ended:
            self._reason = self._reason or TIMEOUT
            self._fire()

    @property
    def reason(self) -> str | None:
        deadline = self._deadline
        if self._reason is None and deadline is not None and time.monotonic() > deadline:
            self._reason = TIMEOUT
        return self._reason

    def error(self) -> AppError:
        if self.reason == TIMEOUT:
            assert self.timeout_s is not None
            return AppError.over_time(self.timeout_s)
        return AppError.client_gone()

    def check(self) -> None:
        if self.reason is not None:
            raise self.error()

    @contextmanager
    def watching(self, kill: Kill) -> Iterator[None]:
        """``kill()`` is called (from another thread) if the job is stopped while the block
        runs, and at once if it was stopped already."""
        self._kills.append(kill)
        try:
            if self.reason is not None:
                kill()
            yield
        finally:
            self._kills.remove(kill)

    def _fire(self) -> None:
        for kill in tuple(self._kills):
            kill()


class Alarm:
    """One thread that expires each running job's ``Stop`` at its deadline.

    It sleeps until the earliest deadline it holds, and with nothing to watch until the latest
    deadline it was given: with a fixed timeout every new deadline is later than that, so a job
    wakes nobody and the thread wakes about once per timeout, not per job. Ended jobs are dropped
    from the front of the queue as they end. Plain locks only (a ``Condition`` is Python code on
    every job: its notify woke the thread for each no-op job, ~15 k instructions)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._due: list[tuple[float, int, Stop]] = []
        self._order = itertools.count()
        self._latest = -math.inf  # the latest deadline armed
        self._until = math.inf  # when the thread wakes next unless woken
        self._wake = threading.Lock()  # released (once) to wake the thread before ``_until``
        self._wake.acquire()
        self._woken = False  # ``_wake`` is released and not taken back yet
        self._thread: threading.Thread | None = None
        self._closed = False

    def arm(self, stop: Stop, deadline: float) -> None:
        with self._lock:
            if self._closed:
                return
            heapq.heappush(self._due, (deadline, next(self._order), stop))
            self._latest = max(self._latest, deadline)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="assetgate-alarm", daemon=True
                )
                self._thread.start()
            elif deadline < self._until:
                self._rouse()

    def disarm(self) -> None:
        """Drop the ended jobs at the front of the queue."""
        with self._lock:
            due = self._due
            while due and due[0][2].ended:
                heapq.heappop(due)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._due.clear()
            self._rouse()

    def _rouse(self) -> None:
        """Wake the thread now (lock held)."""
        if not self._woken:
            self._woken = True
            self._wake.release()

    def _run(self) -> None:
        woken = False
        while True:
            with self._lock:
                if woken:
                    self._woken = False
                if self._closed:
                    return
                now = time.monotonic()
                due = self._due
                while due and due[0][0] <= now:
                    heapq.heappop(due)[2].expire()
                if due:
                    self._until = due[0][0]
                else:
                    self._until = self._latest if self._latest > now else math.inf
                until = self._until
            woken = self._wake.acquire(timeout=-1 if until == math.inf else until - now)


def current() -> Stop | None:
    return _CURRENT.get()


def check() -> None:
    """Raise the current job's stop error, if it has one (a no-op outside the door)."""
    stop = _CURRENT.get()
    if stop is not None:
        stop.check()


def make_current(stop: Stop) -> None:
    """``stop`` is the current job's in this context from now on: for a context that is the
    job's alone and discarded after it (the gate's), where ``running`` would undo it for nothing."""
    _CURRENT.set(stop)


@contextmanager
def running(stop: Stop) -> Iterator[None]:
    token = _CURRENT.set(stop)
    try:
        yield
    finally:
        _CURRENT.reset(token)
