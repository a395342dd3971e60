"""The one error type of assetgate.

Anything a client should see as a non-2xx answer is raised as an `AppError`; it is turned into the
JSON Error object (spec §2.2) in exactly one place, `web.responses`. Messages are written for the
client: they never hold a filesystem path, an upstream host's internals or a traceback. An error
the client may have to quote to support carries an ``error_id``, made in one place
(``AppError.logged``) together with the log line that holds the details.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping


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
        return f"AppError({self.status}, {self.message!r})"

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
        return cls(status, message, param=param, error_id=error_id)

    @classmethod
    def bad_param(cls, name: str, expected: str, got: str | None = None) -> AppError:
        received = "" if got is None else f", got {got[:64]!r}"
        return cls(400, f"{name}: expected {expected}{received}", param=name)

    @classmethod
    def missing_param(cls, name: str) -> AppError:
        return cls(400, f"{name}: required parameter is missing", param=name)

    @classmethod
    def not_found(cls, what: str = "not found") -> AppError:
        # Same text for missing and unsafe paths: no oracle for what exists.
        return cls(404, what)

    @classmethod
    def method_not_allowed(cls, method: str, allow: str) -> AppError:
        return cls(405, f"method {method[:16]} is not allowed", headers={"Allow": allow})

    @classmethod
    def too_large(cls, message: str) -> AppError:
        return cls(413, message)

    @classmethod
    def unsupported_media(cls, message: str = "unsupported or unreadable image format") -> AppError:
        return cls(415, message)

    @classmethod
    def not_implemented(cls, message: str) -> AppError:
        return cls(501, message)

    @classmethod
    def upstream(cls, message: str, status: int = 502) -> AppError:
        return cls(status, message)

    @classmethod
    def rate_limited(cls, retry_after_s: int, headers: Mapping[str, str] | None = None) -> AppError:
        merged = {"Retry-After": str(max(1, retry_after_s)), **(headers or {})}
        return cls(429, "rate limit exceeded", headers=merged)

    @classmethod
    def overloaded(
        cls, retry_after_s: int = 1, message: str = "server busy, retry later"
    ) -> AppError:
        headers = {"Retry-After": str(max(1, retry_after_s)), "Cache-Control": "no-store"}
        return cls(503, message, headers=headers)

    @classmethod
    def timed_out(cls, seconds: float) -> AppError:
        """A job past ``ASSETGATE_RENDER_TIMEOUT_S``: a 503 a client may retry, never cached."""
        return cls.overloaded(message=f"the work took longer than the limit of {seconds:g} s")

    @classmethod
    def client_gone(cls) -> AppError:
        """The client closed the connection (nginx's 499): nobody reads it, logs count it."""
        return cls(499, "client closed the request", headers={"Cache-Control": "no-store"})
