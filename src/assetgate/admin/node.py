"""What a purge does to the tiers: the shared ones once (``purge_shared``, by the node that
answered the purge), each node's own ones on every node (``purge_here``).

Shared: the result store's objects (every variant and alias the purge index held), their copies
in Redis, and the fingerprints the nodes shared for the paths. Each node's own: the result
cache's memory and disk entries of those keys, its source copies of the paths (and of every
path under the prefixes), and the hot lane's replays of the copies deleted. Nothing else: other
paths' entries stay where they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from assetgate.admin.orders import Order
from assetgate.resources import Resources

#: What one node does with an order (``purge_here``, counted): its counts per tier.
Apply = Callable[[Order], dict[str, int]]


@dataclass(frozen=True, slots=True)
class Shared:
    store: int  # result-store objects deleted (variants and aliases)
    redis: int  # result entries deleted from Redis
    fingerprints: int  # shared fingerprints deleted

    def counts(self) -> dict[str, int]:
        return {"store": self.store, "redis": self.redis, "fingerprints": self.fingerprints}


async def purge_shared(res: Resources, order: Order) -> Shared:
    """Delete what every node shares; raises when the store or Redis cannot answer."""
    keys = sorted(order.keys)
    store = 0 if res.result_store is None else await res.result_store.delete(keys)
    redis = 0 if res.shared is None else await res.shared.delete(keys)
    fingerprints = await res.mounts.purge_fingerprints(list(order.paths))
    return Shared(store, redis, fingerprints)


def purge_here(res: Resources, order: Order) -> dict[str, int]:
    """Forget the order's keys and copies on this node; the counts per tier."""
    keys = set(order.keys)
    memory = sum(cache.forget(keys) for cache in res.caches)
    disk = res.result_disk
    deleted = 0 if disk is None else sum(disk.delete(key) for key in sorted(keys))
    copies = res.mounts.purge_copies(list(order.paths), list(order.prefixes))
    res.hot_lane.forget(set(copies))
    return {"memory": memory, "disk": deleted, "copies": len(copies)}
