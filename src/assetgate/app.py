"""create_app(settings): the five parts, the shared resources, the one error handler, and the
operator's endpoints (/healthz, /readyz, /metrics) behind the observing middleware.

The only module that knows every part: it hands their declarations (``part.Part``) to the floors
below — prefixes to the access log and metrics, upstream rules to the shared HTTP client, whether
the hot lane may replay — so adding a part is one line in ``PARTS`` (docs/architecture.md)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Scope

from assetgate import __version__
from assetgate.admin.routes import PART as ADMIN
from assetgate.convert.routes import PART as CONVERT
from assetgate.errors import AppError
from assetgate.imaging import vips
from assetgate.operations.health import Check, readiness, redis_ping, storage_check, writable_dir
from assetgate.operations.metrics import CONTENT_TYPE, Metrics, exposition
from assetgate.operations.observe import Interfaces, Observe
from assetgate.operations.upstreams import CountingClient, UpstreamNames
from assetgate.optimizer.openapi import with_configured_params
from assetgate.optimizer.presets import load_presets
from assetgate.optimizer.routes import PART as OPTIMIZER
from assetgate.packages.routes import PART as PACKAGES
from assetgate.part import Part
from assetgate.resources import Resources, resources
from assetgate.serving.hotlane import HotLane, HotLaneApp
from assetgate.settings import Settings
from assetgate.sources.buckets import round_trip_check
from assetgate.ui.routes import PART as UI
from assetgate.web.openapi import API_VERSION, make_document
from assetgate.web.ratelimit import Network, parse_networks, storage_uri
from assetgate.web.request_checks import RequestChecks
from assetgate.web.responses import on_app_error, on_http_exception, on_unexpected
from assetgate.web.routegroup import grouped
from assetgate.whois.routes import PART as WHOIS

log = logging.getLogger("assetgate")

# The optimizer's catch-all "/{path}" route must come last.
PARTS: tuple[Part, ...] = (PACKAGES, CONVERT, WHOIS, UI, ADMIN, OPTIMIZER)


#: The app's own paths: ``interface="other"`` in the access log and the metrics.
OWN_PATHS = ("/healthz", "/readyz", "/metrics", "/openapi.json", "/favicon.ico")
NO_STORE = {"Cache-Control": "no-store"}
# What /healthz says: alive, and which release answers (a rolling upgrade shows in the probes).
HEALTHY = {"status": "ok", "version": __version__, "interface_version": API_VERSION}


def lane_of(scope: Scope) -> HotLane | None:
    state = scope.get("state")
    res = state.get("resources") if isinstance(state, dict) else None
    return res.hot_lane if isinstance(res, Resources) else None


class ObservedStarlette(Starlette):
    """Starlette with ``Observe`` outside its error middleware, so a 500 is seen and tagged too,
    and the hot lane between them: a replayed answer is observed like any other. The request
    checks (web/request_checks.py) come between ``Observe`` and the lane: a URL too long or a
    path with a control character is refused before routing, a request the shutdown cancels is
    a 503 and one line, not a traceback, and an answer the nginx edge would keep under another
    format bucket than the app's is marked not to be kept."""

    def __init__(
        self,
        *,
        trusted: Sequence[Network],
        max_url_bytes: int,
        interfaces: Interfaces,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._trusted = tuple(trusted)
        self._max_url_bytes = max_url_bytes
        self._interfaces = interfaces

    def build_middleware_stack(self) -> ASGIApp:
        lane = HotLaneApp(super().build_middleware_stack(), lane_of=lane_of)
        return Observe(
            RequestChecks(lane, self._max_url_bytes),
            trusted=self._trusted,
            interfaces=self._interfaces,
        )


def interfaces_of(parts: Iterable[Part]) -> Interfaces:
    """The ``interface`` label of every path: the part owning its longest prefix."""
    return Interfaces.of(
        ((prefix, part.name) for part in parts for prefix in part.prefixes), OWN_PATHS
    )


def upstream_names(parts: Iterable[Part], settings: Settings) -> UpstreamNames:
    return UpstreamNames.of((upstream for part in parts for upstream in part.upstreams), settings)


def readiness_checks(res: Resources) -> dict[str, Check]:
    settings = res.settings
    checks: dict[str, Check] = {"store": writable_dir(settings.store)}
    if res.result_disk is not None:  # the result cache is on (ASSETGATE_RESULT_CACHE_BYTES > 0)
        checks["result_cache"] = writable_dir(settings.result_cache_dir)
    if settings.redis_url:
        checks["redis"] = redis_ping(settings.redis_url)
    limiter_storage = storage_uri(settings)
    if limiter_storage not in ("memory://", settings.redis_url):
        checks["rate_limit_storage"] = storage_check(res.limiter.storage.check)
    return checks


def degrading_checks(res: Resources) -> dict[str, Check]:
    """Remote sources and the shared result store: named with their state, never a 503."""
    checks = res.mounts.checks()
    if res.result_store is not None:
        store = res.result_store.store
        checks["result_store"] = lambda: round_trip_check(store)
    return checks


async def log_bucket_problems(res: Resources) -> None:
    """At start, each bucket asked once: a wrong name or addressing is one warning line now,
    not a silent 404 for every file later."""
    checks = res.mounts.checks(kinds=("s3",))  # origins are asked for files only
    if res.result_store is not None:
        store = res.result_store.store
        checks["result_store"] = lambda: round_trip_check(store)
    if not checks:
        return
    _, body = await readiness({}, checks)
    outcome = body["checks"]
    assert isinstance(outcome, dict)
    for name in body.get("degraded", []):  # type: ignore[attr-defined]
        log.warning("%s: %s", name, outcome[name])


def _preset_names(settings: Settings) -> list[str]:
    try:
        return list(load_presets(settings.presets))
    except ValueError:  # reported by the preflight, and by the optimizer's lifespan
        return []


def create_app(settings: Settings, parts: Sequence[Part] = PARTS) -> Starlette:
    """The service with ``parts`` (a catch-all part last)."""
    document = with_configured_params(
        make_document(part.openapi for part in parts),
        presets=_preset_names(settings),
        signed=bool(settings.signing_keys),
    )

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    async def healthz(request: Request) -> Response:
        return JSONResponse(HEALTHY, headers=NO_STORE)

    async def readyz(request: Request) -> Response:
        res = resources(request)
        status, body = await readiness(readiness_checks(res), degrading_checks(res))
        return JSONResponse(body, status_code=status, headers=NO_STORE)

    async def metrics(request: Request) -> Response:
        body = exposition(resources(request).metrics)
        return Response(body, media_type=CONTENT_TYPE, headers=NO_STORE)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, object]]:
        vips.configure(settings)
        async with AsyncExitStack() as stack:
            metrics = Metrics.build()
            http = await stack.enter_async_context(
                CountingClient(
                    errors=metrics.upstream_errors,
                    names=upstream_names(parts, settings),
                    timeout=settings.upstream_timeout_s,
                    follow_redirects=False,
                )
            )
            # A replayed answer skips the route: none may while its part spends the budget.
            replay = not any(part.replayed and part.spends_budget(settings) for part in parts)
            res = Resources.build(settings, http, metrics, replay=replay)
            stack.callback(res.gate.close)
            stack.push_async_callback(res.aclose)
            state: dict[str, object] = {"resources": res, "metrics": res.metrics}
            for part in parts:
                state[part.name] = await stack.enter_async_context(part.lifespan(res))
            await log_bucket_problems(res)
            yield state

    routes: list[BaseRoute] = [
        Route("/healthz", healthz, methods=["GET", "HEAD"]),
        Route("/readyz", readyz, methods=["GET", "HEAD"]),
        Route("/metrics", metrics, methods=["GET", "HEAD"]),
        Route("/openapi.json", openapi, methods=["GET", "HEAD"]),
    ]
    for part in parts:
        routes.extend(grouped(part.routes))  # one prefix test per part before the catch-all
    app = ObservedStarlette(
        trusted=parse_networks(settings.trusted_proxies),
        max_url_bytes=settings.max_url_bytes,
        interfaces=interfaces_of(parts),
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            AppError: on_app_error,
            HTTPException: on_http_exception,
            Exception: on_unexpected,
        },
    )
    # A trailing-slash 307 would build its Location from the Host header (`/x%0A/` -> any host):
    # a path either matches a route or is a 404.
    app.router.redirect_slashes = False
    return app
