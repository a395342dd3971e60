"""uvicorn's HTTP protocol with deadlines per connection and a connection budget of its own.

uvicorn alone let 1,100 idle connections turn every request into a 503: a connection that never
sends a request stays open forever, and ``limit_concurrency`` counts open connections together
with running requests. For a server that faces clients directly (docs/deploying.md):

- **header deadline** (``ASSETGATE_HEADER_TIMEOUT_S``): a request's headers must be complete
  within this time of the connection opening or the previous answer ending, however slowly they
  trickle in (slowloris); otherwise the connection is closed.
- **idle deadline** (``ASSETGATE_IDLE_TIMEOUT_S``): a request body that stops arriving for this
  long, or an answer the client stops reading for this long (the socket's send buffer stays
  full), closes the connection (the route sees the client leave). Between requests uvicorn's
  own keep-alive deadline (``ASSETGATE_KEEP_ALIVE_S``) applies.
- **connection budget** (``ASSETGATE_MAX_CONNECTIONS``): past it, a new connection closes the
  oldest idle one (no request running) to make room, or is closed itself when every connection
  has a request running. Idle connections therefore never keep a client with a request out.
- **body deadline** (``ASSETGATE_BODY_MIN_RATE``, ``ASSETGATE_BODY_GRACE_S``): after the grace,
  a request body must have arrived at this many bytes per second on average since its headers, or
  the connection is closed (one byte every 5 s passes the idle deadline, never this one).
- **work budget** (``ASSETGATE_LIMIT_CONCURRENCY``): requests running at once; beyond it the
  answer is uvicorn's 503. Open connections do not count, and neither does a request while its
  body is still arriving: 1,024 uploads trickling one byte every 5 s once made every request a
  503. It joins the count when its body is in. Past the connection budget, an upload
  still arriving is evicted, slowest first, when no connection is idle.
"""

from __future__ import annotations

import asyncio
import resource
import time
from typing import Any, Final

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState

from assetgate.cli.head_with_body import hold_heads
from assetgate.settings import Settings

# Descriptors kept for everything but client connections: files, Redis, upstreams, minifiers.
RESERVED_FILES: Final = 512


def fit_file_limit(max_connections: int) -> int:
    """Raise the open-file limit to hold ``max_connections`` (up to the hard limit); the budget
    that fits, which is smaller only when the hard limit is."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max_connections + RESERVED_FILES
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return max_connections
    return max(1, min(max_connections, soft - RESERVED_FILES))


class Guard:
    """The settings the protocol reads, set once per process before uvicorn starts."""

    header_timeout_s: float = 10.0
    idle_timeout_s: float = 30.0
    max_connections: int = 4096
    work_limit: int | None = None
    body_min_rate: int = 1024  # bytes per second; 0: no body deadline
    body_grace_s: float = 10.0
    #: Requests of this process whose body is still arriving: not in the work budget.
    receiving: int = 0

    @classmethod
    def configure(cls, settings: Settings) -> None:
        cls.header_timeout_s = settings.header_timeout_s
        cls.idle_timeout_s = settings.idle_timeout_s
        cls.max_connections = fit_file_limit(settings.max_connections)
        cls.work_limit = settings.limit_concurrency
        cls.body_min_rate = settings.body_min_rate
        cls.body_grace_s = settings.body_grace_s
        cls.receiving = 0


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.limit_concurrency = None  # decided per request in on_headers_complete
        self._deadline: asyncio.TimerHandle | None = None
        self._stalled: asyncio.TimerHandle | None = None  # writing paused: the client reads not
        self._idle_since = time.monotonic()  # no request running since then
        self._running = False
        self._receiving = False  # the request's body is still arriving (not in the work budget)
        self._body_started = 0.0  # loop time of the headers' end
        self._body_bytes = 0
        self._slow: asyncio.TimerHandle | None = None  # the body deadline's next check

    # --- the connection budget ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(Guard.header_timeout_s)
        if len(self.connections) > Guard.max_connections:
            self._make_room()

    def _make_room(self) -> None:
        """Close the oldest idle connection, else the upload whose body arrives slowest, else
        this one (every other connection has a request at work)."""
        now = self.loop.time()
        oldest: GuardedHttpToolsProtocol | None = None
        slowest: GuardedHttpToolsProtocol | None = None
        for other in self.connections:
            if (
                other is self
                or not isinstance(other, GuardedHttpToolsProtocol)
                or other.transport.is_closing()
            ):
                continue
            if not other._running:
                if oldest is None or other._idle_since < oldest._idle_since:
                    oldest = other
            elif other._receiving and (slowest is None or other._rate(now) < slowest._rate(now)):
                slowest = other
        (oldest or slowest or self).transport.close()

    def _rate(self, now: float) -> float:
        """Bytes per second of the body arriving so far."""
        return self._body_bytes / max(now - self._body_started, 1e-3)

    # --- deadlines ----------------------------------------------------------------------------

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        self._close()

    def _close(self) -> None:
        if not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._receiving:
            self._body_bytes += len(data)
        super().data_received(data)
        cycle = self.cycle
        if self._running and cycle is not None and cycle.more_body and not cycle.response_complete:
            self._arm(Guard.idle_timeout_s)  # the body is still coming: it may pause this long

    def on_headers_complete(self) -> None:
        self._disarm()
        self._running = True
        work_limit = Guard.work_limit
        at_work = len(self.tasks) - Guard.receiving
        full = work_limit is not None and at_work >= work_limit
        # uvicorn answers 503 when its limit is reached; 0 makes that so for this request only.
        self.limit_concurrency = 0 if full else None
        super().on_headers_complete()
        self.limit_concurrency = None
        self._arm(Guard.idle_timeout_s)  # for the body; a request without one ends it at once
        self._body_started = self.loop.time()
        self._body_bytes = 0
        self._set_receiving(True)  # until on_message_complete, at once for a request without body
        if Guard.body_min_rate > 0:
            self._slow = self.loop.call_at(self._body_started + Guard.body_grace_s, self._check)

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        hold_heads(cycle)  # the answer's head leaves with its body (cli/head_with_body.py)
        super()._start_asgi_task(cycle, app)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()  # the body is in: the route's own deadlines apply now
        self._set_receiving(False)

    def _set_receiving(self, receiving: bool) -> None:
        if receiving != self._receiving:
            self._receiving = receiving
            Guard.receiving += 1 if receiving else -1
        if not receiving and self._slow is not None:
            self._slow.cancel()
            self._slow = None

    def _check(self) -> None:
        """The body deadline: close when the body is behind the minimum rate, else look again
        when the bytes held so far stop covering it."""
        self._slow = None
        if not self._receiving:
            return
        owed = Guard.body_min_rate * (self.loop.time() - self._body_started - Guard.body_grace_s)
        if self._body_bytes < owed:
            self._close()
            return
        due = self._body_started + Guard.body_grace_s + self._body_bytes / Guard.body_min_rate
        self._slow = self.loop.call_at(max(due, self.loop.time() + 1.0), self._check)

    def on_response_complete(self) -> None:
        self._set_receiving(False)  # answered before its body was read (a 413, say)
        self._running = bool(self.pipeline)
        self._idle_since = time.monotonic()
        super().on_response_complete()
        if not self._running and not self.transport.is_closing():
            self._arm(Guard.header_timeout_s)  # the next request's headers, within the deadline

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stalled is None:
            self._stalled = self.loop.call_later(Guard.idle_timeout_s, self._abort)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._unstall()

    def _abort(self) -> None:
        """Drop the connection and what it still had to send: a ``close`` would wait for the
        client to read that first."""
        self._stalled = None
        self.transport.abort()

    def _unstall(self) -> None:
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._unstall()
        self._set_receiving(False)
        super().connection_lost(exc)
