"""Waiting for something to happen in a test: poll a condition until a deadline, never a bare sleep.

A sleep used for ordering ("by now the server has started / the task is waiting / the file is
written") is a guess about how fast this machine is: too short on a loaded machine (the test
flakes), too long on a quiet one (the suite crawls). ``wait_until`` asks instead, every
``interval`` seconds, and returns as soon as the answer is yes::

    from tests.waiting import wait_until, wait_until_async

    wait_until(lambda: log.exists())                        # threads, processes, servers
    line = wait_until(lambda: find_line(log), timeout=30)   # the first truthy value is returned
    await wait_until_async(lambda: gate.waiting == 1)       # in a coroutine: the loop keeps running
    await wait_until_async(store_has_key)                   # an async predicate is awaited

The timeout is a ceiling, not a duration: a generous one costs nothing when the condition comes
true early. When it never does, the test fails naming the condition (``message``, or the
predicate's name) and its last value.

A sleep that IS the behaviour under test stays a sleep: a trickling client, a slow fake server,
time that must pass for a TTL or a clock to move on.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

TIMEOUT_S = 10.0  # default ceiling: generous, as a busy machine needs
INTERVAL_S = 0.01


def wait_until(
    predicate: Callable[[], T],
    timeout: float = TIMEOUT_S,
    interval: float = INTERVAL_S,
    message: str | Callable[[], str] | None = None,
) -> T:
    """Call ``predicate`` until it returns a truthy value (returned) or ``timeout`` s pass.
    ``message`` (or a function making it, called on failure: a log's tail) names the wait."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(_failure(predicate, value, timeout, message))
        time.sleep(interval)


async def wait_until_async(
    predicate: Callable[[], T | Awaitable[T]],
    timeout: float = TIMEOUT_S,
    interval: float = INTERVAL_S,
    message: str | Callable[[], str] | None = None,
) -> T:
    """``wait_until`` in a coroutine: the event loop runs between polls; an async predicate is
    awaited. ``interval=0`` polls after every turn of the loop (for conditions other tasks
    make true without any I/O)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            raise AssertionError(_failure(predicate, value, timeout, message))
        await asyncio.sleep(interval)


def _failure(
    predicate: Callable[..., object], value: object, timeout: float, message: str | None
) -> str:
    what = message or getattr(predicate, "__qualname__", repr(predicate))
    return f"not true within {timeout} s: {what} (last value: {value!r})"
