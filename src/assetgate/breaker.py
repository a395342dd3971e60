"""``Breaker``: whether a dependency that failed is worth asking again yet (a circuit breaker).

Every dependency assetgate can live without — the Redis cache tier, the rate limiter's storage,
the shared result store, a bucket or origin, an HTTP upstream — is followed by one of these, so
"down" means the same everywhere: after ``threshold`` failures in a row it **opens** (callers are
told not to ask, ``allows()`` is False, and answer without it); after ``cooldown_s`` the next
caller is let through alone as the **probe** (half-open); the probe's success **closes** it, its
failure opens it for another cool-down. A probe that never reports (its task was cancelled) does
not wedge it: after another cool-down the next caller probes. ``cooldown_s=math.inf`` lets no
request probe: something else (a background check) calls ``succeeded()``.

The caller decides what a failure is (a missing object is the store answering; a Redis timeout is
not) and reports it with ``failed(exc)`` / ``succeeded()``; ``on_open`` and ``on_close`` say so
once per outage in the caller's words (the log line naming the dependency). That is why this is
not pybreaker, aiobreaker or purgatory: they wrap the call and judge it by exception type, raise
their own error while open, and pybreaker's async support is Tornado's (docs/architecture.md,
"When a dependency is down").
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable


class BreakerState(enum.Enum):
    CLOSED = "closed"  # the dependency answers: ask it
    OPEN = "open"  # it failed: do not ask until the cool-down is over
    HALF_OPEN = "half-open"  # the cool-down is over: one caller (the probe) asks


class Breaker:
    """One dependency's up/down state. Not thread-safe: one event loop uses it."""

    def __init__(
        self,
        *,
        cooldown_s: float,
        threshold: int = 1,
        on_open: Callable[[BaseException | None], None] | None = None,
        on_close: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if threshold < 1:
            raise ValueError("threshold must be at least 1")
        self.cooldown_s = cooldown_s
        self.threshold = threshold
        self._on_open = on_open  # called with the failure that opened it (if given)
        self._on_close = on_close  # called with the seconds it was open
        self._clock = clock
        self._failures = 0  # in a row, while closed
        self._opened_at: float | None = None  # the outage began (None: closed)
        self._retry_at = 0.0  # when the next probe may go

    @property
    def state(self) -> BreakerState:
        if self._opened_at is None:
            return BreakerState.CLOSED
        return BreakerState.OPEN if self._clock() < self._retry_at else BreakerState.HALF_OPEN

    @property
    def is_open(self) -> bool:
        """Down: open or waiting for its probe (``/readyz`` and logs say so)."""
        return self._opened_at is not None

    @property
    def down_for_s(self) -> float:
        """Seconds since it opened; 0 while closed."""
        return 0.0 if self._opened_at is None else self._clock() - self._opened_at

    @property
    def would_allow(self) -> bool:
        """What ``allows()`` would answer, without taking the probe: for a caller that only
        decides whether to start something that will ask (a prefetch, a lock)."""
        return self.state is not BreakerState.OPEN

    def allows(self) -> bool:
        """Whether to ask the dependency now: always while closed; after the cool-down, once
        (the probe; the caller must report ``failed`` or ``succeeded``)."""
        if self._opened_at is None:
            return True
        now = self._clock()
        if now < self._retry_at:
            return False
        self._retry_at = now + self.cooldown_s  # the others wait while the probe is out
        return True

    def failed(self, exc: BaseException | None = None) -> None:
        """The dependency gave no answer (``exc``, if the caller has one for ``on_open``): count
        it; open, or stay open another cool-down."""
        now = self._clock()
        if self._opened_at is not None:
            self._retry_at = now + self.cooldown_s
            return
        self._failures += 1
        if self._failures < self.threshold:
            return
        self._opened_at = now
        self._retry_at = now + self.cooldown_s
        if self._on_open is not None:
            self._on_open(exc)

    def succeeded(self) -> None:
        """The dependency answered: close (saying so once if it was open)."""
        self._failures = 0
        if self._opened_at is None:
            return
        down_for = self._clock() - self._opened_at
        self._opened_at = None
        self._retry_at = 0.0
        if self._on_close is not None:
            self._on_close(down_for)
