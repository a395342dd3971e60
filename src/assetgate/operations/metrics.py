"""The service's Prometheus metrics: one ``Metrics`` per app, built in the lifespan.

The names and labels are the contract that dashboards rely on (``assetgate_*``; labels
``interface``, ``status``, ``cache``, ``tier``, ``upstream``). Each app gets its own registry, so
tests can build many apps in one process; under ``assetgate serve --workers N`` the values live in
prometheus-client's multiprocess files and ``/metrics`` aggregates every worker.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector

MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE: Final = CONTENT_TYPE_LATEST

# Seconds: a 304 or a cache hit is well under a millisecond, a cold 12 MP render ~0.1-1 s.
LATENCY_BUCKETS_S: Final = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Metrics:
    registry: CollectorRegistry
    requests: Counter  # interface, status
    latency: Histogram  # interface, status
    rejected: Counter  # interface, status: the 429s and 503s of limits and overload
    queue_depth: Gauge  # jobs waiting for a render thread
    in_flight: Gauge  # jobs running on a render thread
    cache_requests: Counter  # cache, result (hit | miss)
    cache_bytes: Gauge  # cache, tier: bytes held
    upstream_errors: Counter  # upstream
    hot_lane_answers: Counter  # repeat requests answered before routing (serving.hotlane)
    source_fetch_seconds: Histogram  # source, kind: one fetch from a bucket or an origin
    source_fetch_bytes: Counter  # source, kind
    source_fetch_errors: Counter  # source, kind, status (404, 413, 502, 504)
    source_cache: Counter  # source, result (hit | miss | revalidated | stale)
    source_cache_events: Counter  # event (partial_removed | disk_full | evicted_for_space)
    result_store: Counter  # result (hit | miss | invalid | error | skipped)
    purges: Counter  # result (done | refused | failed): POST /admin/purge and the CLI's
    purged: Counter  # tier (memory | disk | copies | store | redis | fingerprints): deleted
    cdn_calls: Counter  # cdn: purge requests sent to a CDN's API
    cdn_failures: Counter  # cdn: of those, the ones not acknowledged

    @classmethod
    def build(cls) -> Metrics:
        registry = CollectorRegistry(auto_describe=True)
        return cls(
            registry=registry,
            requests=Counter(
                "assetgate_requests",
                "HTTP requests answered, by interface and status.",
                ["interface", "status"],
                registry=registry,
            ),
            latency=Histogram(
                "assetgate_request_duration_seconds",
                "Time from the request's arrival to its last byte, by interface and status.",
                ["interface", "status"],
                buckets=LATENCY_BUCKETS_S,
                registry=registry,
            ),
            rejected=Counter(
                "assetgate_rejected",
                "Requests refused by the rate limit (429) or for overload (503).",
                ["interface", "status"],
                registry=registry,
            ),
            queue_depth=Gauge(
                "assetgate_render_queue_depth",
                "Jobs waiting for a render thread.",
                multiprocess_mode="livesum",
                registry=registry,
            ),
            in_flight=Gauge(
                "assetgate_render_in_flight",
                "Jobs running on a render thread.",
                multiprocess_mode="livesum",
                registry=registry,
            ),
            cache_requests=Counter(
                "assetgate_cache_requests",
                "Cache lookups, by cache and result (hit or miss).",
                ["cache", "result"],
                registry=registry,
            ),
            cache_bytes=Gauge(
                "assetgate_cache_bytes",
                "Bytes held by a cache tier.",
                ["cache", "tier"],
                multiprocess_mode="livesum",
                registry=registry,
            ),
            upstream_errors=Counter(
                "assetgate_upstream_errors",
                "Failed requests to an upstream (registry, catalog, whois server, RDAP).",
                ["upstream"],
                registry=registry,
            ),
            hot_lane_answers=Counter(
                "assetgate_hot_lane_answers",
                "Repeat requests answered before routing, from a route's prepared answer.",
                registry=registry,
            ),
            source_fetch_seconds=Histogram(
                "assetgate_source_fetch_duration_seconds",
                "Time to fetch one object from a remote source (bucket or origin).",
                ["source", "kind"],
                buckets=LATENCY_BUCKETS_S,
                registry=registry,
            ),
            source_fetch_bytes=Counter(
                "assetgate_source_fetch_bytes",
                "Bytes fetched from remote sources.",
                ["source", "kind"],
                registry=registry,
            ),
            source_fetch_errors=Counter(
                "assetgate_source_fetch_errors",
                "Failed fetches from remote sources, by the status answered.",
                ["source", "kind", "status"],
                registry=registry,
            ),
            source_cache=Counter(
                "assetgate_source_cache_requests",
                "Source-cache lookups: hit, miss (fetched), revalidated (304), stale (source down)",
                ["source", "result"],
                registry=registry,
            ),
            source_cache_events=Counter(
                "assetgate_source_cache_events",
                "Source-cache housekeeping: partial downloads removed at start (partial_removed), "
                "copies not written for lack of space (disk_full), copies evicted to make room "
                "(evicted_for_space).",
                ["event"],
                registry=registry,
            ),
            result_store=Counter(
                "assetgate_result_store_requests",
                "Shared result-store reads: hit, miss, invalid (over the size cap or failing "
                "the MAC), error, skipped (store marked down).",
                ["result"],
                registry=registry,
            ),
            purges=Counter(
                "assetgate_purges",
                "Purges asked of this node: done, refused (401, 400) or failed (a tier down).",
                ["result"],
                registry=registry,
            ),
            purged=Counter(
                "assetgate_purged_objects",
                "Objects a purge deleted, by tier (memory, disk and copies on every node; store, "
                "redis and fingerprints on the node that answered).",
                ["tier"],
                registry=registry,
            ),
            cdn_calls=Counter(
                "assetgate_cdn_purge_calls",
                "Purge requests sent to a CDN's API (each attempt).",
                ["cdn"],
                registry=registry,
            ),
            cdn_failures=Counter(
                "assetgate_cdn_purge_failures",
                "Purge requests a CDN did not acknowledge (each attempt).",
                ["cdn"],
                registry=registry,
            ),
        )


def exposition(metrics: Metrics) -> bytes:
    """The Prometheus text of ``/metrics``.

    Under ``assetgate serve --workers N`` the CLI sets ``PROMETHEUS_MULTIPROC_DIR`` before the
    workers start: then every worker writes its values there and any one of them answers with the
    sum of all, read fresh from the directory.
    """
    directory = os.environ.get(MULTIPROC_ENV)
    if not directory:
        return generate_latest(metrics.registry)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    return generate_latest(registry)
