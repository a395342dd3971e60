"""``POST /admin/purge``: forget what was named on every node, in every tier, and at the CDN.

Only with ``ASSETGATE_ADMIN_TOKEN`` set; without it the path answers 404 to every method (as if
there were no such route: the optimizer's catch-all would answer a POST with 405). The token is
compared in constant time (``hmac.compare_digest``); a missing or wrong one is 401 and nothing is
purged. The part also follows the purge log while the app runs (``admin.log``), and reads what
it missed before the app answers anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from assetgate.admin import cdn
from assetgate.admin.log import PurgeLog, node_name
from assetgate.admin.node import purge_here
from assetgate.admin.openapi import OPENAPI
from assetgate.admin.orders import Order, parse_request
from assetgate.admin.purge import AdminState, run_purge
from assetgate.errors import AppError
from assetgate.part import Part, part_state
from assetgate.resources import Resources, resources

PATH: Final = "/admin/purge"
MAX_BODY_BYTES: Final = 1024 * 1024
#: Every method reaches the endpoint, which answers 404 to all without a token, else 405 but POST.
METHODS: Final = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
NO_STORE: Final = {"Cache-Control": "no-store"}


@asynccontextmanager
async def lifespan(res: Resources) -> AsyncIterator[AdminState]:
    def apply(order: Order) -> dict[str, int]:
        counts = purge_here(res, order)
        for tier, count in counts.items():
            res.metrics.purged.labels(tier=tier).inc(count)
        return counts

    settings = res.settings
    cdns = tuple(cdn.configured(settings))
    if not settings.redis_url:
        yield AdminState(node_name(), apply, None, cdns)
        return
    log = PurgeLog(settings.redis_url, settings.result_cache_dir, apply)
    await log.catch_up()  # before any answer: nothing purged while this node was away is served
    follower = asyncio.get_running_loop().create_task(log.follow())
    try:
        yield AdminState(log.node, apply, log, cdns)
    finally:
        follower.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await follower
        await log.aclose()


def _authorised(request: Request, token: str) -> bool:
    given = request.headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    if scheme.lower() != "bearer":
        value = ""
    return hmac.compare_digest(value.strip().encode(), token.encode())


async def _body(request: Request) -> bytes:
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY_BYTES:
            raise AppError.too_large(f"body: over {MAX_BODY_BYTES} bytes")
    return bytes(data)


async def purge(request: Request) -> Response:
    res = resources(request)
    token = res.settings.admin_token
    if token is None:
        raise AppError.not_found()
    if request.method != "POST":
        raise AppError.method_not_allowed(request.method, "POST")
    if not _authorised(request, token.get_secret_value()):
        res.metrics.purges.labels(result="refused").inc()
        raise AppError(401, "admin token missing or wrong", headers={"WWW-Authenticate": "Bearer"})
    try:
        asked = parse_request(await _body(request))
    except AppError:
        res.metrics.purges.labels(result="refused").inc()
        raise
    report = await run_purge(res, part_state(request, "admin", AdminState), asked)
    return JSONResponse(report, headers=NO_STORE)


PART = Part(
    name="admin",
    prefixes=(PATH,),
    endpoints={PATH: purge},
    methods=METHODS,
    openapi=OPENAPI,
    lifespan=lifespan,
)
