"""Things born in the app's lifespan and shared by the parts, and the one typed way to reach them.

``app.create_app`` builds one ``Resources`` in its lifespan; a route reaches it with
``resources(request)``, never through a module global, so tests can build apps side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import httpx
from starlette.requests import Request

from assetgate.imaging.limits import DecodeLimits
from assetgate.minify.cache import AssetCache
from assetgate.settings import Settings
from assetgate.web.files import Sources
from assetgate.web.metrics import Metrics
from assetgate.web.ratelimit import RateLimiter
from assetgate.web.workgate import WorkGate


@dataclass(slots=True)
class Resources:
    settings: Settings
    http: httpx.AsyncClient
    gate: WorkGate
    limiter: RateLimiter
    assets: AssetCache  # minified/gzipped CSS and JS, shared by the optimizer and packages
    metrics: Metrics
    decode_limits: DecodeLimits  # what one image decode may cost, for the optimizer and convert
    sources: Sources  # content fingerprints (and small files' bytes) per stat identity

    @classmethod
    def build(
        cls, settings: Settings, http: httpx.AsyncClient, metrics: Metrics | None = None
    ) -> Resources:
        """``metrics`` when the HTTP client already counts into them (the app's lifespan)."""
        metrics = metrics or Metrics.build()
        return cls(
            settings=settings,
            http=http,
            gate=WorkGate(
                settings.render_workers,
                settings.render_queue,
                memory_bytes=settings.render_memory_bytes,
                queue_wait_s=settings.render_queue_wait_s,
                timeout_s=settings.render_timeout_s,
                queue_depth=metrics.queue_depth,
                in_flight=metrics.in_flight,
            ),
            limiter=RateLimiter.from_settings(settings),
            assets=AssetCache(settings.asset_cache_bytes),
            metrics=metrics,
            decode_limits=DecodeLimits.from_settings(settings),
            sources=Sources(body_budget_bytes=settings.file_memory_bytes),
        )


def resources(request: Request) -> Resources:
    return cast(Resources, request.state.resources)
