"""Things born in the app's lifespan and shared by the parts, and the one typed way to reach them.

``app.create_app`` builds one ``Resources`` in its lifespan; a route reaches it with
``resources(request)``, never through a module global, so tests can build apps side by side.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import httpx
from starlette.requests import Request

from assetgate.cache import (
    FOREVER,
    Cache,
    Codec,
    DiskTier,
    ObjectTier,
    SharedTier,
    connect,
    largest_entry,
    mac_key,
    s3_store,
)
from assetgate.cache.lock import RenderLock
from assetgate.cache.purgeindex import PurgeIndex
from assetgate.cpu.workgate import WorkGate
from assetgate.imaging.limits import DecodeLimits
from assetgate.minify import result_codec as minify_codec
from assetgate.minify.pool import MinifyPool
from assetgate.minify.render import Rendered
from assetgate.operations.metrics import Metrics
from assetgate.serving.hotlane import HotLane
from assetgate.serving.versions import FileVersions
from assetgate.settings import Settings
from assetgate.sources import Mounts
from assetgate.sources.locations import Bucket, parse_location
from assetgate.web.ratelimit import RateLimiter

T = TypeVar("T")


@dataclass(slots=True)
class Resources:
    settings: Settings
    http: httpx.AsyncClient
    gate: WorkGate
    limiter: RateLimiter
    metrics: Metrics
    decode_limits: DecodeLimits  # what one image decode may cost, for the optimizer and convert
    versions: FileVersions  # content fingerprints (and small files' bytes) per stat identity
    shared: SharedTier | None  # Redis (ASSETGATE_REDIS_URL): one tier, so "Redis down" logs once
    result_disk: DiskTier | None  # the result cache's directory; None when turned off
    assets: Cache[Rendered]  # minified/gzipped CSS and JS, shared by the optimizer and packages
    hot_lane: HotLane  # repeat requests for unchanged files, answered before routing
    minify_pool: MinifyPool  # where CSS/JS renders run: minifying in killable processes
    mounts: Mounts  # where the optimizer's files come from (directory, bucket, origin)
    result_store: ObjectTier | None  # ASSETGATE_RESULT_STORE: rendered images every node shares
    purge_index: PurgeIndex  # source path -> the keys stored for it (in Redis when configured)
    caches: list[Cache[Any]]  # every result cache, for a purge (``assets`` and the parts')

    @classmethod
    def build(
        cls,
        settings: Settings,
        http: httpx.AsyncClient,
        metrics: Metrics | None = None,
        *,
        replay: bool = True,
    ) -> Resources:
        """``metrics`` when the HTTP client already counts into them (the app's lifespan);
        ``replay``: whether the hot lane may answer before routing (the app turns it off when a
        part whose answers it replays spends the rate limit: no request may skip the budget)."""
        metrics = metrics or Metrics.build()
        versions = FileVersions(body_budget_bytes=settings.file_memory_bytes)
        result_store = _result_store(settings, metrics)
        shared = SharedTier(connect(settings.redis_url)) if settings.redis_url else None
        purge_index = PurgeIndex(shared.client if shared is not None else None)
        results = None
        if settings.result_cache_bytes > 0:
            results = DiskTier(settings.result_cache_dir, settings.result_cache_bytes)
        gate = WorkGate(
            settings.render_workers,
            settings.render_queue,
            memory_bytes=settings.render_memory_bytes,
            queue_wait_s=settings.render_queue_wait_s,
            timeout_s=settings.render_timeout_s,
            queue_depth=metrics.queue_depth,
            in_flight=metrics.in_flight,
        )
        assets: Cache[Rendered] = Cache(
            minify_codec.NAME,
            minify_codec.RENDERED,
            memory_bytes=settings.asset_cache_bytes,
            disk=results,
            index=purge_index,
            metrics=metrics,
            ttl=minify_codec.ttl,
        )
        return cls(
            settings=settings,
            http=http,
            gate=gate,
            limiter=RateLimiter.from_settings(settings),
            metrics=metrics,
            decode_limits=DecodeLimits.from_settings(settings),
            versions=versions,
            shared=shared,
            result_disk=results,
            assets=assets,
            hot_lane=HotLane(versions, enabled=replay, answered=metrics.hot_lane_answers),
            minify_pool=MinifyPool.from_settings(settings, gate),
            mounts=Mounts.from_settings(settings, metrics, result_store, shared, versions),
            result_store=result_store,
            purge_index=purge_index,
            caches=[assets],
        )

    def cache(
        self,
        name: str,
        codec: Codec[T],
        *,
        memory_bytes: int,
        ttl: Callable[[T], float] | float = FOREVER,
        negative_ttl_s: float = 0.0,
        on_disk: bool = False,
        shared: bool = False,
        stored: bool = False,
    ) -> Cache[T]:
        """A named cache for a part, over the result-cache disk, Redis and the shared result
        store (each when configured and asked for)."""
        made = Cache(
            name,
            codec,
            memory_bytes=memory_bytes,
            ttl=ttl,
            negative_ttl_s=negative_ttl_s,
            disk=self.result_disk if on_disk else None,
            shared=self.shared if shared else None,
            store=self.result_store if stored else None,
            lock=RenderLock(self.shared) if stored and self.shared is not None else None,
            index=self.purge_index,
            metrics=self.metrics,
        )
        self.caches.append(made)
        return made

    async def aclose(self) -> None:
        self.minify_pool.close()
        await self.limiter.aclose()
        await self.assets.aclose()
        await self.mounts.aclose()
        if self.result_store is not None:
            await self.result_store.aclose()
        if self.shared is not None:
            await self.shared.client.aclose()


def _result_store(settings: Settings, metrics: Metrics) -> ObjectTier | None:
    if settings.result_store is None:
        return None
    location = parse_location(settings.result_store)
    assert isinstance(location, Bucket)
    store = s3_store(location.bucket, location.prefix, settings)
    assert settings.result_store_key is not None  # required with a store (settings)
    return ObjectTier(
        store,
        key=mac_key(settings.result_store_key),
        max_entry_bytes=largest_entry(settings),
        results=metrics.result_store,
    )


def resources(request: Request) -> Resources:
    return cast(Resources, request.state.resources)
