"""One purge from start to answer, on the node that was asked (``POST /admin/purge``).

1. the paths named (and ``path:`` tags), the prefixes (and ``dir:`` tags);
2. the purge index gives their tier keys, and the paths under the prefixes (``cache.purgeindex``);
3. the shared tiers, once: the result store's objects, Redis's entries, the shared fingerprints;
4. every node, through the purge log (``admin.log``): memory, disk, source copies; the answer
   waits (``ACK_WAIT_S``) for each live node's counts. Without Redis, this process only;
5. the CDNs (``admin.cdn``): the purged paths' ``path:`` tags, the folder prefixes' ``dir:``
   tags and every tag given.

A tier that cannot answer stops the purge with a 503 before any node is told (the index keys
taken are put back, so a retry finds them); nothing is half-claimed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from redis.exceptions import RedisError

from assetgate.admin import cdn
from assetgate.admin.log import PurgeLog
from assetgate.admin.node import Apply, purge_shared
from assetgate.admin.orders import Order, PurgeRequest
from assetgate.errors import AppError, Unavailable
from assetgate.resources import Resources
from assetgate.serving.tags import dir_tag, path_tag

log = logging.getLogger("assetgate.purge")


@dataclass(frozen=True, slots=True)
class AdminState:
    node: str  # this process, as the answer names it
    apply: Apply  # this node's own tiers (``node.purge_here``, counted)
    log: PurgeLog | None  # None: no ASSETGATE_REDIS_URL, one process is all there is
    cdns: tuple[cdn.Cdn, ...]


def _failed(res: Resources, message: str) -> AppError:
    res.metrics.purges.labels(result="failed").inc()
    return Unavailable(message, headers={"Retry-After": "5"})


async def run_purge(res: Resources, state: AdminState, asked: PurgeRequest) -> dict[str, object]:
    paths, prefixes = asked.local_paths(), asked.local_prefixes()
    try:
        taken = await res.purge_index.take(paths, prefixes)
    except (RedisError, OSError, TimeoutError):
        raise _failed(res, "purge index unreachable (Redis); nothing purged, retry") from None
    every_path = sorted(set(paths) | set(taken))
    keys = sorted({key for found in taken.values() for key in found})
    order = Order(tuple(every_path), tuple(prefixes), tuple(keys))
    try:
        shared = await purge_shared(res, order)
    except Exception as exc:  # a store or Redis error: the type only (messages hold addresses)
        for path, found in taken.items():
            for key in found:
                res.purge_index.add(path, key)
        log.warning("purge stopped: a shared tier failed (%s)", type(exc).__name__)
        raise _failed(res, "result store or Redis unreachable; purge incomplete, retry") from None
    for tier, count in shared.counts().items():
        res.metrics.purged.labels(tier=tier).inc(count)
    nodes: dict[str, dict[str, int]]
    missing: list[str] = []
    published = False
    if state.log is not None:
        try:
            entry = await state.log.publish(order)
            nodes, missing = await state.log.acks(entry)
            published = True
        except (RedisError, OSError, TimeoutError) as exc:
            log.warning("purge log unreachable (%s); purged on this node only", type(exc).__name__)
    if not published:
        nodes = {state.node: state.apply(order)}
    tags = [path_tag(path) for path in every_path]
    tags += [dir_tag(prefix) for prefix in prefixes if prefix.endswith("/")]
    tags += list(asked.tags)
    outcomes = await cdn.purge(res.http, state.cdns, tags)
    for outcome in outcomes:
        res.metrics.cdn_calls.labels(cdn=outcome.cdn).inc(outcome.calls)
        res.metrics.cdn_failures.labels(cdn=outcome.cdn).inc(outcome.failures)
    res.metrics.purges.labels(result="done").inc()
    return {
        "paths": every_path,
        "prefixes": prefixes,
        "tags": list(dict.fromkeys(tags)),
        "shared": shared.counts(),
        "nodes": nodes,
        "nodes_not_answering": missing,
        "all_nodes": published or state.log is None,
        "cdn": [outcome.report() for outcome in outcomes],
    }
