"""The one error type of assetgate, and the kinds callers tell apart.

Anything a client should see as a non-2xx answer is raised as an `AppError`; it is turned into the
JSON Error object (spec §2.2) in exactly one place, `web.responses`. Messages are written for the
client: they never hold a filesystem path, an upstream host's internals or a traceback. An error
the client may have to quote to support carries an ``error_id``, made in one place
(``AppError.logged``) together with the log line that holds the details.

Code that must react to one kind of failure (a miss, a full door, a failed upstream) catches its
subclass — `NotFound`, `TooLarge`, `Unavailable` / `Overloaded`, `UpstreamFailed`, `TimedOut` —
never a number: each kind fixes its status where it is raised, and a plain ``AppError(status, …)``
is for answers nobody inside reacts to.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import ClassVar, Self


class AppError(Exception):
    """An expected failure with the status, message and headers the client should see."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
        error_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.headers: dict[str, str] = dict(headers or {})
        self.error_id = error_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.status}, {self.message!r})"

    def again(self) -> Self:
        """A fresh error of the same kind, status, message and headers, for raising a remembered
        one once more: a raised exception keeps its own traceback, and callers add headers."""
        fresh = Exception.__new__(type(self))
        Exception.__init__(fresh, self.message)
        fresh.__dict__.update(self.__dict__)
        fresh.headers = dict(self.headers)
        return fresh

    @classmethod
    def logged(
        cls,
        status: int,
        message: str,
        *,
        log: logging.Logger,
        context: str,
        level: int = logging.ERROR,
        exc_info: BaseException | None = None,
        param: str | None = None,
    ) -> AppError:
        """An error with a fresh ``error_id``, logged beside ``context`` (and the traceback)."""
        error_id = uuid.uuid4().hex[:16]
        # ``error_id`` as a field too: the JSON log line carries it beside the request id.
        extra = {"error_id": error_id}
        log.log(level, "error_id=%s %s", error_id, context, exc_info=exc_info, extra=extra)
        return AppError(status, message, param=param, error_id=error_id)

    @classmethod
    def bad_param(cls, name: str, expected: str, got: str | None = None) -> AppError:
        received = "" if got is None else f", got {got[:64]!r}"
        return AppError(400, f"{name}: expected {expected}{received}", param=name)

    @classmethod
    def missing_param(cls, name: str) -> AppError:
        return AppError(400, f"{name}: required parameter is missing", param=name)

    @classmethod
    def not_found(cls, what: str = "not found") -> NotFound:
        # Same text for missing and unsafe paths: no oracle for what exists.
        return NotFound(what)

    @classmethod
    def method_not_allowed(cls, method: str, allow: str) -> AppError:
        return AppError(405, f"method {method[:16]} is not allowed", headers={"Allow": allow})

    @classmethod
    def too_large(cls, message: str) -> TooLarge:
        return TooLarge(message)

    @classmethod
    def unsupported_media(cls, message: str = "unsupported or unreadable image format") -> AppError:
        return AppError(415, message)

    @classmethod
    def not_implemented(cls, message: str) -> AppError:
        return AppError(501, message)

    @classmethod
    def upstream(cls, message: str) -> UpstreamFailed:
        """An upstream failed or answered something unusable (502); its timeout is `TimedOut`,
        its 404 a `NotFound`."""
        return UpstreamFailed(message)

    @classmethod
    def rate_limited(cls, retry_after_s: int, headers: Mapping[str, str] | None = None) -> AppError:
        merged = {"Retry-After": str(max(1, retry_after_s)), **(headers or {})}
        return AppError(429, "rate limit exceeded", headers=merged)

    @classmethod
    def overloaded(
        cls, retry_after_s: int = 1, message: str = "server busy, retry later"
    ) -> Overloaded:
        return Overloaded(message, retry_after_s=retry_after_s)

    @classmethod
    def over_time(cls, seconds: float) -> Overloaded:
        """A job past ``ASSETGATE_RENDER_TIMEOUT_S``: `Overloaded` (a 503 a client may retry,
        never cached), not `TimedOut` (504, something outside that did not answer in time)."""
        return Overloaded(f"the work took longer than the limit of {seconds:g} s")

    @classmethod
    def client_gone(cls) -> AppError:
        """The client closed the connection (nginx's 499): nobody reads it, logs count it."""
        return AppError(499, "client closed the request", headers={"Cache-Control": "no-store"})


class _Kind(AppError):
    """An `AppError` whose status is fixed by its kind (``STATUS``)."""

    STATUS: ClassVar[int]

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
        error_id: str | None = None,
    ) -> None:
        super().__init__(self.STATUS, message, param=param, headers=headers, error_id=error_id)


class NotFound(_Kind):
    """No such thing here or upstream (404): a missing or unsafe path, an unknown package or
    version. Callers turn it into "absent" (``None``, an empty hit list, a stale-free miss)."""

    STATUS = 404

    def __init__(
        self, message: str = "not found", *, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message, headers=headers)


class TooLarge(_Kind):
    """A size, pixel, memory or count limit refuses the input (413); the message names it."""

    STATUS = 413


class Unavailable(_Kind):
    """This server cannot answer now and the client may retry (503): never remembered as an
    answer (the cache layer's negative entries skip it)."""

    STATUS = 503


class Overloaded(Unavailable):
    """No room behind a door — the work gate, a pool — or a job past its render deadline: 503
    with ``Retry-After`` and ``Cache-Control: no-store``."""

    def __init__(
        self, message: str = "server busy, retry later", *, retry_after_s: int = 1
    ) -> None:
        headers = {"Retry-After": str(max(1, retry_after_s)), "Cache-Control": "no-store"}
        super().__init__(message, headers=headers)


class UpstreamFailed(_Kind):
    """An upstream — a registry, a catalog, a bucket or origin, the bundler — failed, refused or
    answered something unusable (502). A source's held copy may stand in for it."""

    STATUS = 502


class TimedOut(_Kind):
    """Something this server waited on passed its deadline (504): an upstream's answer, a
    bundler run (``ASSETGATE_ESM_BUILD_TIMEOUT_S``), the import map's resolution."""

    STATUS = 504
