"""Spending the shared rate-limit budget around a part's endpoint (ASSETGATE_RATE_LIMIT_PARTS).

One wrapper for every part, so a limited answer looks the same everywhere: the RateLimit fields on
success, on an AppError and on the 500 of an unexpected exception alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from assetgate.errors import AppError
from assetgate.resources import resources
from assetgate.web.responses import internal_error


async def spend_budget(request: Request, part: str) -> dict[str, str]:
    """Count this request against the shared rate limit when ``part`` is rate limited.

    Returns the RateLimit header fields to add to the response (empty when ``part`` is not
    limited, or while the storage is down and the limiter fails open). Raises a 429 AppError that
    already carries ``Retry-After`` and the fields when the client is over its budget, or a 503
    when the storage is down and the limiter fails closed. A part that raises its own AppError
    after this call should add the returned fields to it, so every limited answer has them.
    """
    res = resources(request)
    if part not in res.settings.rate_limit_parts:
        return {}
    peer = request.client.host if request.client else None
    client = res.limiter.client_key(peer, request.headers.getlist("x-forwarded-for"))
    return await res.limiter.hit(client)


Endpoint = Callable[[Request], Awaitable[Response]]


def rate_limited(part: str, endpoint: Endpoint) -> Endpoint:
    """``endpoint`` spending the shared budget when ``part`` is in ASSETGATE_RATE_LIMIT_PARTS.

    Every answer then carries the RateLimit fields: success, AppError and the 500 of an
    unexpected exception alike (the one that is logged with its ``error_id`` here).
    """

    async def limited(request: Request) -> Response:
        budget = await spend_budget(request, part)
        if not budget:
            return await endpoint(request)
        try:
            response = await endpoint(request)
        except AppError as exc:
            exc.headers = {**budget, **exc.headers}
            raise
        except Exception as exc:
            error = internal_error(exc, context=f"{request.method} {request.url.path}")
            error.headers.update(budget)
            raise error from None
        response.headers.update(budget)
        return response

    return limited
