"""Things born in the app's lifespan and shared by the parts, and the shape of a part.

Each part (optimizer, packages, convert, whois) exposes one ``PART: Part``: its routes, its
OpenAPI paths, and an optional lifespan that builds the part's own state from the shared
resources. ``app.create_app`` composes them; the parts never import each other.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from assetgate.assets.cache import AssetCache
from assetgate.errors import AppError
from assetgate.settings import Settings
from assetgate.web.metrics import Metrics
from assetgate.web.ratelimit import RateLimiter
from assetgate.web.responses import internal_error
from assetgate.web.workgate import WorkGate


@dataclass(slots=True)
class Resources:
    settings: Settings
    http: httpx.AsyncClient
    gate: WorkGate
    limiter: RateLimiter
    assets: AssetCache  # minified/gzipped CSS and JS, shared by the optimizer and packages
    metrics: Metrics

    @classmethod
    def build(cls, settings: Settings, http: httpx.AsyncClient) -> Resources:
        return cls(
            settings=settings,
            http=http,
            gate=WorkGate(settings.render_workers, settings.render_queue),
            limiter=RateLimiter.from_settings(settings),
            assets=AssetCache(settings.asset_cache_bytes),
            metrics=Metrics.build(),
        )


PartLifespan = Callable[[Resources], AbstractAsyncContextManager[object]]


@asynccontextmanager
async def no_state(res: Resources) -> AsyncIterator[object]:
    yield None


@dataclass(frozen=True, slots=True)
class Part:
    name: str
    routes: Sequence[BaseRoute]
    openapi: dict[str, Any] = field(default_factory=dict)
    lifespan: PartLifespan = no_state


def resources(request: Request) -> Resources:
    return cast(Resources, request.state.resources)


def part_state(request: Request, name: str) -> Any:
    """The object a part's lifespan yielded, under the part's name."""
    return getattr(request.state, name)


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
