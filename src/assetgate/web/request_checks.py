"""The checks every request passes before the hot lane and the routes, in one ASGI frame.

Each check lives in its own module with its reasons: the URL's length (``web.urllimit``: a JSON
414), a control character in the path (``web.controlchars``: the 404 of any missing path), the
format bucket nginx keys the answer under (``web.edgebucket``: ``X-Accel-Expires: 0`` when it is
not the app's reading of ``Accept``) and a request the shutdown cancels (``web.shutdown``: a 503,
or a cut answer, and one line). They were four middlewares: four coroutine frames a request and
two wrappers of every ``send``, ~5 % of the event loop's time on a cold 1 MP render, where
the fixed cost of a request decides the throughput (docs/benchmarks.md, "Small images").
A refusal goes out through the same ``send`` as any answer, so the edge's mark is on it too.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assetgate.web.controlchars import control_refusal
from assetgate.web.edgebucket import disagrees, not_kept
from assetgate.web.responses import error_response
from assetgate.web.shutdown import answer_cancelled, run_lifespan
from assetgate.web.urllimit import too_long


class RequestChecks:
    def __init__(self, app: ASGIApp, max_url_bytes: int) -> None:
        self.app = app
        self.max_url_bytes = max_url_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                await run_lifespan(self.app, scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        mark = disagrees(scope)
        started = False

        async def checked_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if mark:
                    message = not_kept(message)
            await send(message)

        try:
            refusal = control_refusal(scope) or too_long(scope, self.max_url_bytes)
            if refusal is not None:
                head = scope["method"] == "HEAD"
                await error_response(refusal, head=head)(scope, receive, checked_send)
                return
            await self.app(scope, receive, checked_send)
        except asyncio.CancelledError:
            await answer_cancelled(scope, receive, send, started=started)
