"""Watching an ASGI ``receive`` for ``http.disconnect`` without a task of its own.

A job waiting in the work gate wants to hear when its client goes away. A task that awaits
``receive()`` in a loop does that, but costs every job a task, its first turn of the loop and a
cancellation thrown through the receive's frames at the end (~52 k instructions a job).
``DisconnectWatch`` steps the receive's coroutine itself instead, from the callbacks of the
futures it waits on, as a task would; its ``close()`` ends the receive under way at once (~33 k,
most of it uvicorn's receive itself).

What it is not: a task. Inside the receive, ``asyncio.current_task()`` is the caller's on the
first step and None after a wait, so a receive that needs its own task (an anyio cancel scope
inside it) is not for this; uvicorn's, httpx's and Starlette's test client's are plain waits on
an event. The request's body must have been read already: the watch reads ``receive``.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Generator
from typing import Any

from starlette.types import Receive


class DisconnectWatch:
    """Calls ``on_gone()`` once, on the event loop, when ``receive`` answers
    ``http.disconnect`` or fails; nothing after ``close()``. Starts reading at once."""

    __slots__ = ("_blocked", "_closed", "_context", "_later", "_on_gone", "_receive", "_step")

    def __init__(self, receive: Receive, on_gone: Callable[[], object]) -> None:
        self._receive = receive
        self._on_gone = on_gone
        self._context = contextvars.copy_context()
        self._step: Generator[Any, None, Any] | None = None  # the receive() under way
        self._blocked: asyncio.Future[Any] | None = None  # the future it waits on
        self._later: asyncio.Handle | None = None  # its next step after a bare yield
        self._closed = False
        self._run()

    def close(self) -> None:
        """Stop watching: the receive under way is closed (its ``finally`` blocks run now)."""
        if self._closed:
            return
        self._closed = True
        self._unhook()
        step, self._step = self._step, None
        if step is not None:
            try:  # noqa: SIM105 (per job: contextlib.suppress is Python code)
                step.close()
            except RuntimeError:  # it swallowed the GeneratorExit: nothing more to do
                pass

    def _run(self, _: object = None) -> None:
        """Step the receive under way (or a new one) until it waits or the client is gone."""
        self._blocked = self._later = None
        while not self._closed:
            try:
                if self._step is None:
                    self._step = self._receive().__await__()
                waits_on = self._step.send(None)
            except StopIteration as answer:
                self._step = None
                if answer.value["type"] == "http.disconnect":
                    self._gone()
                continue  # a body chunk (already read by the route): ask again
            except asyncio.CancelledError:  # a future it awaited was cancelled: stop quietly
                self._step = None
                self._closed = True
                return
            except Exception:  # the receive failed: nothing more will come from this client
                self._step = None
                self._gone()
                return
            if waits_on is None:  # a bare yield (``asyncio.sleep(0)``): go on at the next turn
                self._later = asyncio.get_running_loop().call_soon(self._run, context=self._context)
            elif isinstance(waits_on, asyncio.Future):
                waits_on._asyncio_future_blocking = False
                waits_on.add_done_callback(self._run, context=self._context)
                self._blocked = waits_on
            else:  # not an asyncio awaitable: it cannot be watched from here
                self.close()
            return

    def _gone(self) -> None:
        self._closed = True
        self._on_gone()

    def _unhook(self) -> None:
        if self._blocked is not None:
            self._blocked.remove_done_callback(self._run)
            self._blocked = None
        if self._later is not None:
            self._later.cancel()
            self._later = None
