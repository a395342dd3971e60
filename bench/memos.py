"""The two memos on every hot request, as they are (OrderedDict) against cachetools' LRUCache.

    .venv/bin/python bench/memos.py     # a few seconds

The hot lane (``serving/hotlane.py``) looks its replay up by ``(path, query, Accept,
Accept-Encoding)`` and the source-identity memo (``serving/versions.py``) the file's version by its
stat identity: one lookup each per replayed answer, in maps of 4,096 and 16,384 entries. Each
operation is timed in process (CPU time, best of the rounds, 100,000 calls over distinct keys),
written as each module writes it and as ``cachetools.LRUCache`` would; the ratio is cachetools'
time over the OrderedDict's. docs/caching.md keeps the OrderedDict where the ratio says so.
"""

from __future__ import annotations

import argparse
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

from cachetools import LRUCache

LANE_ENTRIES = 4096
FILE_ENTRIES = 16_384
CALLS = 100_000
NS = 1_732_000_000 * 10**9


def lane_keys(count: int) -> list[Hashable]:
    return [(f"/img/{n}.jpg", b"width=800", b"image/avif,*/*", b"gzip, br") for n in range(count)]


def stat_keys(count: int) -> list[Hashable]:
    return [(2049, 1_000_000 + n, 15_000 + n, NS + n, NS) for n in range(count)]


def timed(operation: Callable[[Hashable], object], keys: list[Hashable], rounds: int) -> float:
    """Best nanoseconds per call over ``rounds``."""
    plan = [keys[(n * 7919) % len(keys)] for n in range(CALLS)]  # distinct, not sequential
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for key in plan:
            operation(key)
        best = min(best, (time.process_time() - started) / CALLS)
    return best * 1e9


def cases(rounds: int) -> list[tuple[str, float, float]]:
    lane_k, file_k = lane_keys(LANE_ENTRIES), stat_keys(FILE_ENTRIES)
    lane_od: OrderedDict[Hashable, int] = OrderedDict((k, 1) for k in lane_k)
    file_od: OrderedDict[Hashable, int] = OrderedDict((k, 1) for k in file_k)
    lane_lru: LRUCache[Hashable, int] = LRUCache(LANE_ENTRIES)
    file_lru: LRUCache[Hashable, int] = LRUCache(FILE_ENTRIES)
    lane_lru.update(lane_od)
    file_lru.update(file_od)

    def file_hit(key: Hashable) -> object:  # FileVersions.peek / identify: get, then move up
        found = file_od.get(key)
        if found is not None:
            file_od.move_to_end(key)
        return found

    def lane_offer(key: Hashable) -> None:  # HotLane.offer
        lane_od[key] = 1
        lane_od.move_to_end(key)
        while len(lane_od) > LANE_ENTRIES:
            lane_od.popitem(last=False)

    def lane_offer_lru(key: Hashable) -> None:
        lane_lru[key] = 1

    fresh = lane_keys(16 * LANE_ENTRIES)  # mostly keys the map does not hold: an offer evicts
    return [
        ("lane lookup", timed(lane_od.get, lane_k, rounds), timed(lane_lru.get, lane_k, rounds)),
        ("version lookup", timed(file_hit, file_k, rounds), timed(file_lru.get, file_k, rounds)),
        (
            "lane offer, evicting",
            timed(lane_offer, fresh, rounds),
            timed(lane_offer_lru, fresh, rounds),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description="OrderedDict against cachetools' LRUCache")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print("| operation | OrderedDict ns | cachetools ns | × OrderedDict |")
    print("|---|---:|---:|---:|")
    for name, mine, theirs in cases(args.rounds):
        print(f"| {name} | {mine:.0f} | {theirs:.0f} | {theirs / mine:.2f}× |")


if __name__ == "__main__":
    main()
