"""A request cancelled by the server's shutdown is one log line and a 503, never a traceback.

uvicorn cancels the tasks still running when a shutdown stops waiting for them: a second Ctrl-C
(SIGINT) or ``ASSETGATE_SHUTDOWN_GRACE_S`` running out, then ``asyncio.run`` cancelling whatever
is left. The ``CancelledError`` passes every ``except Exception`` on its way up (a route's
cleanup still runs: its ``finally`` and ``except BaseException`` blocks), and uvicorn met it with
"Exception in ASGI application", ~45 lines of traceback and a plain-text 500 for each request;
Starlette's lifespan added another traceback for the shutdown it was cancelled in. Nothing has
failed: the operator asked the server to stop now.

So, around the app: a request whose task is cancelled answers the JSON 503 (``Retry-After``,
``Connection: close``) when its answer has not started, or ends there when it has (the connection
closes as the server exits: the client sees a cut answer, as with any interrupted transfer), and
logs one warning line. The cancellation is consumed only at the very top of the request's task,
where nothing else is left to run. In the lifespan, the traceback Starlette would send as
``lifespan.shutdown.failed`` is dropped (its exit stack has run on the way up).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assetgate.errors import Unavailable
from assetgate.web.responses import error_response

log = logging.getLogger("assetgate")

RETRY_AFTER_S: Final = 5
SHUTTING_DOWN: Final = Unavailable(
    "the server is shutting down; retry",
    headers={"Retry-After": str(RETRY_AFTER_S), "Connection": "close"},
)


def _consume_cancellation() -> None:
    """The task goes on to its end: its cancellation has been handled (Python >= 3.11)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        task.uncancel()


async def answer_cancelled(scope: Scope, receive: Receive, send: Send, *, started: bool) -> None:
    """A request whose task the shutdown cancelled (``web.request_checks`` catches it): the 503
    when its answer has not ``started``, else nothing more on this connection; one line."""
    _consume_cancellation()
    what = f"{scope.get('method')} {scope.get('path', '')}"
    if started:
        # Nothing more can be said on this connection: it closes as the server exits.
        log.warning("%s cancelled by the shutdown; its answer was cut", what)
        return
    log.warning("%s cancelled by the shutdown; answered 503", what)
    response = error_response(SHUTTING_DOWN, head=scope.get("method") == "HEAD")
    await response(scope, receive, send)


async def run_lifespan(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """The app's lifespan without the traceback of a shutdown the operator forced."""

    async def quiet(message: Message) -> None:
        if message["type"] == "lifespan.shutdown.failed" and _cancelled():
            return  # the request lines have said it; the exit stack has run
        await send(message)

    try:
        await app(scope, receive, quiet)
    except asyncio.CancelledError:
        # The event loop is ending (a forced shutdown): uvicorn skipped the lifespan's
        # shutdown; the exit stack's callbacks have run on the way up.
        _consume_cancellation()


def _cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
