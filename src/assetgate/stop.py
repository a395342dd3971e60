"""Why a job on the CPU door should stop early: its client went away, or it ran past its deadline.

The WorkGate (``web.workgate``) makes one ``Stop`` per job and makes it current on the job's
thread; the imaging floor asks it between steps (``check``) and from libvips' eval callback
(``imaging.vips.killable``), so an abandoned or overdue render ends within a tile or two instead
of burning its whole CPU bill. It lives below both of them because both read it and neither may
import the other.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from assetgate.errors import AppError

ABANDONED: Final = "abandoned"
TIMEOUT: Final = "timeout"

_CURRENT: ContextVar[Stop | None] = ContextVar("assetgate_stop", default=None)


class Stop:
    """Set from any thread; read by the job's thread. Plain attribute writes, no lock needed."""

    __slots__ = ("_deadline", "_reason", "timeout_s")

    def __init__(self, timeout_s: float | None = None) -> None:
        self.timeout_s = timeout_s
        self._deadline: float | None = None
        self._reason: str | None = None

    def start(self) -> None:
        """The job begins on its thread: the render deadline counts from here."""
        if self.timeout_s is not None:
            self._deadline = time.monotonic() + self.timeout_s

    def abandon(self) -> None:
        self._reason = self._reason or ABANDONED

    @property
    def reason(self) -> str | None:
        deadline = self._deadline
        if self._reason is None and deadline is not None and time.monotonic() > deadline:
            self._reason = TIMEOUT
        return self._reason

    def error(self) -> AppError:
        if self.reason == TIMEOUT:
            assert self.timeout_s is not None
            return AppError.timed_out(self.timeout_s)
        return AppError.client_gone()

    def check(self) -> None:
        if self.reason is not None:
            raise self.error()


def current() -> Stop | None:
    return _CURRENT.get()


def check() -> None:
    """Raise the current job's stop error, if it has one (a no-op outside the door)."""
    stop = _CURRENT.get()
    if stop is not None:
        stop.check()


@contextmanager
def running(stop: Stop) -> Iterator[None]:
    token = _CURRENT.set(stop)
    try:
        yield
    finally:
        _CURRENT.reset(token)
