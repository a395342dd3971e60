"""``/npm/search``: both catalogs at once, merged and ranked, with a short answer cache.

Each catalog gets its own deadline; one failing catalog yields a partial answer (200), and only
when every catalog failed is the answer a 502. Complete answers are cached per
``(q.casefold(), limit)`` for ``ASSETGATE_SEARCH_CACHE_TTL_S``; partial ones are not, so a
recovered catalog shows up on the next request. ``ready`` is not cached: it is read from the store
index for every answer, because it changes whenever something is fetched.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote

from assetgate.cache import Cache, dataclass_codec
from assetgate.errors import AppError, TimedOut
from assetgate.packages import catalogs
from assetgate.packages.ingest import Packages
from assetgate.packages.merge import Hit, merge_hits, rank_hits
from assetgate.packages.policy import OPEN, ServePolicy
from assetgate.packages.query import SearchQuery
from assetgate.packages.store import Store
from assetgate.resources import Resources

log = logging.getLogger("assetgate.packages")

SEARCH_TIMEOUT_S: Final = 3.0
CACHE_MEMORY_BYTES: Final = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    total: int
    hits: tuple[Hit, ...]
    warnings: tuple[str, ...] = ()  # one line per catalog that failed: the answer is partial

    @property
    def partial(self) -> bool:
        return bool(self.warnings)


CATALOG_NAMES: Final = {"npm": "the npm registry", "library": "the library catalog"}


def catalog_warning(name: str, failure: BaseException) -> str:
    """Words for the client; the upstream's own message stays in the log."""
    timed_out = isinstance(failure, (TimeoutError, TimedOut))
    why = "timed out" if timed_out else "failed"
    return f"{name}: searching {CATALOG_NAMES[name]} {why}; results are from the other catalog only"


ANSWER_CODEC: Final = dataclass_codec(SearchAnswer)


class Search:
    def __init__(
        self, packages: Packages, cache: Cache[SearchAnswer], policy: ServePolicy = OPEN
    ) -> None:
        self.packages = packages
        self.cache = cache  # complete answers only; shared through Redis when configured
        self.policy = policy  # names it refuses are never among the hits

    @classmethod
    def build(cls, packages: Packages, res: Resources, policy: ServePolicy = OPEN) -> Search:
        ttl = keep_for(res.settings.search_cache_ttl_s)
        return cls(
            packages,
            res.cache(
                "search", ANSWER_CODEC, memory_bytes=CACHE_MEMORY_BYTES, ttl=ttl, shared=True
            ),
            policy,
        )

    def _timeout(self) -> float:
        return min(SEARCH_TIMEOUT_S, self.packages.upstreams.timeout_s)

    async def _npm(self, query: SearchQuery) -> tuple[list[Hit], list[str]]:
        """Every registry at once (the default and each scope's own): the hits each one serves
        (``Registries.owns``), and a warning per scope registry that failed. Only the default
        registry failing fails the npm catalog."""
        registries = self.packages.upstreams.registries
        searched = registries.searched()
        if not searched or searched[0][1] is not None:
            raise AppError.upstream("no npm registry is configured")
        outcomes = await asyncio.gather(
            *(
                catalogs.search_npm(
                    self.packages.http,
                    base,
                    query.q,
                    size=max(query.limit * 2, 20),
                    timeout_s=self._timeout(),
                    packument_max_bytes=self.packages.upstreams.packument_max_bytes,
                    headers=registries.headers,
                )
                for base, _ in searched
            ),
            return_exceptions=True,
        )
        hits: list[Hit] = []
        warnings: list[str] = []
        for (_, scope), outcome in zip(searched, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if scope is None or not isinstance(outcome, AppError | TimeoutError):
                    raise outcome
                log.warning("search: the registry of %s failed: %s", scope, outcome)
                warnings.append(f"npm: searching the registry of {scope} failed")
                continue
            hits.extend(hit for hit in outcome if registries.owns(scope, hit.name))
        return hits, warnings

    async def _library(self, query: SearchQuery) -> list[Hit]:
        return await catalogs.search_library(
            self.packages.http,
            self.packages.upstreams.library_api,
            query.q,
            limit=max(query.limit * 2, 20),
            timeout_s=self._timeout(),
        )

    async def answer(self, query: SearchQuery) -> SearchAnswer:
        q, limit = query.cache_key()
        # Nodes with other allow/deny lists share a Redis cache: the lists are part of the key.
        key = f"{limit}:{self.policy.fingerprint()}:{q}"
        answer, _ = await self.cache.get_or_compute(key, lambda: self._ask(query))
        return answer

    async def _ask(self, query: SearchQuery) -> SearchAnswer:
        outcomes = await asyncio.gather(
            self._npm(query), self._library(query), return_exceptions=True
        )
        hits: list[Hit] = []
        warnings: list[str] = []
        failed = 0
        for name, outcome in zip(CATALOG_NAMES, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, AppError | TimeoutError):
                    raise outcome
                failed += 1
                warnings.append(catalog_warning(name, outcome))
                log.warning("search: %s catalog failed: %s", name, outcome)
            elif isinstance(outcome, tuple):
                hits.extend(outcome[0])
                warnings.extend(outcome[1])
            else:
                hits.extend(outcome)
        if failed == len(outcomes):
            raise AppError.upstream(
                "search catalogs cannot be fetched (npm and library both failed)"
            )
        hits = [hit for hit in hits if self.policy.admits(hit.name)]
        ranked = rank_hits(merge_hits(hits), query.q)
        return SearchAnswer(len(ranked), tuple(ranked[: query.limit]), tuple(warnings))


def keep_for(ttl_s: float) -> Callable[[SearchAnswer], float]:
    """Complete answers for ``ttl_s``; partial ones are asked again (a catalog may be back)."""
    return lambda answer: 0.0 if answer.partial else ttl_s


def is_ready(store: Store, hit: Hit) -> bool:
    """True when the pinned URL is served from the store without asking upstream."""
    if hit.kind == "package":
        return store.version("npm", hit.name, hit.version) is not None
    prefix = f"/npm/lib/{hit.name}@{hit.version}/"
    path = unquote(hit.url.removeprefix(prefix))
    return store.file("lib", hit.name, hit.version, path) is not None
