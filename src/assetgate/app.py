"""create_app(settings): the four parts, the shared resources and the one error handler."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from assetgate.convert.routes import PART as CONVERT
from assetgate.errors import AppError
from assetgate.imaging import vips
from assetgate.optimizer.routes import PART as OPTIMIZER
from assetgate.packages.routes import PART as PACKAGES
from assetgate.part import Part
from assetgate.resources import Resources
from assetgate.settings import Settings
from assetgate.web.openapi import make_document
from assetgate.web.responses import on_app_error, on_http_exception, on_unexpected
from assetgate.whois.routes import PART as WHOIS

# The optimizer's catch-all "/{path}" route must come last.
PARTS: tuple[Part, ...] = (PACKAGES, CONVERT, WHOIS, OPTIMIZER)


def create_app(settings: Settings) -> Starlette:
    document = make_document(part.openapi for part in PARTS)

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"}, headers={"Cache-Control": "no-store"})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, object]]:
        vips.configure(settings)
        async with AsyncExitStack() as stack:
            http = await stack.enter_async_context(
                httpx.AsyncClient(timeout=settings.upstream_timeout_s, follow_redirects=False)
            )
            res = Resources.build(settings, http)
            stack.callback(res.gate.close)
            stack.push_async_callback(res.aclose)
            state: dict[str, object] = {"resources": res}
            for part in PARTS:
                state[part.name] = await stack.enter_async_context(part.lifespan(res))
            yield state

    routes: list[BaseRoute] = [
        Route("/healthz", healthz, methods=["GET", "HEAD"]),
        Route("/openapi.json", openapi, methods=["GET", "HEAD"]),
    ]
    for part in PARTS:
        routes.extend(part.routes)
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            AppError: on_app_error,
            HTTPException: on_http_exception,
            Exception: on_unexpected,
        },
    )
