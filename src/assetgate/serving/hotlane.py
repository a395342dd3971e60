"""The hot lane: a repeat request answered before routing, from what its route worked out once.

Most requests an optimizer sees are the same file again, unchanged. The route answers the first
one the long way (parameters validated, signature checked, the path check, the file's version,
header blocks prepared) and leaves a ``Replay`` here: which file version and variant that request
named. The next request with the same path, query string and deciding headers (``Accept``,
``Accept-Encoding``) is answered in front of Starlette's router with one ``lstat``, a few dict
lookups and a copy of the very header block the route would send: 304 when the validators match,
else the 200 with bytes already held (a small file's content, a cached rendering). The ``lstat``
covers every directory between the root and the file too (one per level), as the path check's
does: a directory swapped for a symlink that leaves the root ends the replay.

Anything the lane cannot answer exactly as the route would goes the long way: another method, a
``Range``, a version that changed (the stat identity differs), bytes no longer held, a header
block not built yet. It sits inside ``Observe``, so request ids, access lines and metrics are the
same for both ways. Routes offer replays only when nothing else decides the answer: no rate limit
on the part, no symlink on the path (a retargeted link must be re-checked by the gate).
"""

from __future__ import annotations

import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Final

from prometheus_client import Counter
from starlette.types import ASGIApp, Receive, Scope, Send

from assetgate.serving.prepared import HeaderBlock, Prepared
from assetgate.serving.versions import FileVersion, FileVersions, StatKey, stat_key
from assetgate.web.paths import Located, still_direct

log = logging.getLogger(__name__)

ENTRIES: Final = 4096
READS: Final = frozenset({"GET", "HEAD"})
# path, query string, Accept, Accept-Encoding: with the file's version, all a replay depends on.
LaneKey = tuple[str, bytes, bytes | None, bytes | None]
# The 200's bytes for a version's prepared answer, or None when they are no longer held here.
BodyOf = Callable[[FileVersion, Prepared], bytes | None]
Replayed = tuple[int, HeaderBlock, bytes]


def file_body(version: FileVersion, prepared: Prepared) -> bytes | None:
    """A file answered as it is: its bytes when ``FileVersions`` keeps them in memory."""
    return version.body


Offer = Callable[[FileVersion, Hashable, BodyOf], None]


@dataclass(frozen=True, slots=True)
class Replay:
    path: str  # the file, reached without a symlink: the gate's own lstat target
    depth: int  # directories between the root and it, each checked again on a replay
    version: StatKey
    variant: Hashable
    body: BodyOf
    fresh_until: float  # a remote source's copy is asked about again after this (monotonic)


@dataclass(frozen=True, slots=True)
class _Asked:
    """What one request brings to the lane, read from its headers in one pass."""

    key: LaneKey
    if_none_match: bytes | None
    if_modified_since: bytes | None
    head: bool


def _asked(scope: Scope) -> _Asked | None:
    """None when the request is not one the lane answers (another method, a ``Range``, an
    ``Accept`` or ``Accept-Encoding`` sent on two lines)."""
    method = scope["method"]
    if method not in READS:
        return None
    accept = encoding = inm = ims = None
    for name, value in scope["headers"]:
        if name == b"accept":
            if accept is not None:
                return None  # two lines: one list the route joins (web.negotiation)
            accept = value
        elif name == b"accept-encoding":
            if encoding is not None:
                return None
            encoding = value
        elif name == b"if-none-match":
            inm = value if inm is None else inm
        elif name == b"if-modified-since":
            ims = value if ims is None else ims
        elif name == b"range":
            return None
    key = (scope["path"], scope["query_string"], accept, encoding)
    return _Asked(key, inm, ims, method == "HEAD")


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


class HotLane:
    """The replays of one app, a bounded LRU touched only from the event loop."""

    def __init__(
        self,
        versions: FileVersions,
        *,
        enabled: bool = True,
        entries: int = ENTRIES,
        answered: Counter | None = None,
    ) -> None:
        self.versions = versions
        self.enabled = enabled
        self.entries = entries
        self.answered = answered  # assetgate_hot_lane_answers
        # An OrderedDict, not cachetools' LRUCache: ~0.4 us cheaper a replay, on the hottest
        # path (docs/caching.md, "Every memo in the process"). A replay is moved up when offered.
        self._replays: OrderedDict[LaneKey, Replay] = OrderedDict()

    def __len__(self) -> int:
        return len(self._replays)

    def offer(
        self, scope: Scope, found: Located, version: FileVersion, variant: Hashable, body: BodyOf
    ) -> None:
        """After the route answered ``scope`` from ``source``'s prepared ``variant``."""
        if not self.enabled or not found.direct or not self.versions.holds(version):
            return
        if body is file_body and version.body is None:
            return  # a file read from disk on every request: nothing to replay
        asked = _asked(scope)
        if asked is None:
            return
        self._replays[asked.key] = Replay(
            found.real, found.depth, version.key, variant, body, found.fresh_until
        )
        self._replays.move_to_end(asked.key)
        while len(self._replays) > self.entries:
            self._replays.popitem(last=False)

    def forget(self, paths: set[str]) -> int:
        """Drop the replays of the files ``paths`` (a purge deleted them); how many."""
        if not paths:
            return 0
        gone = [key for key, replay in self._replays.items() if replay.path in paths]
        for key in gone:
            del self._replays[key]
        return len(gone)

    def answer(self, scope: Scope) -> Replayed | None:
        """The route's answer to ``scope`` when it can be replayed exactly, else None."""
        found = self._replay(scope)
        if found is not None and self.answered is not None:
            self.answered.inc()
        return found

    def _replay(self, scope: Scope) -> Replayed | None:
        asked = _asked(scope)
        if asked is None:
            return None
        replay = self._replays.get(asked.key)
        if replay is None:
            return None
        version = self.versions.peek(replay.version)
        prepared = None if version is None else version.blocks.get(replay.variant)
        if version is None or prepared is None:
            del self._replays[asked.key]  # forgotten: the long way
            return None
        if prepared.ok is None and asked.if_none_match is None and asked.if_modified_since is None:
            # Only a 200 could be replayed: without its kept block (a rendering no cache holds,
            # or not made yet) the lane cannot answer, so it spends no ``lstat`` on knowing it.
            return None
        info = still_direct(replay.path, replay.depth)
        current = None if info is None else stat_key(info)
        if replay.fresh_until != math.inf and time.monotonic() >= replay.fresh_until:
            current = None  # a remote copy due for revalidation: the route asks its source
        if current != replay.version:
            del self._replays[asked.key]  # another version now: the long way
            return None
        if prepared.fresh_for(_text(asked.if_none_match), _text(asked.if_modified_since)):
            return 304, prepared.not_modified, b""
        body = None if prepared.ok is None else replay.body(version, prepared)
        if prepared.ok is None or body is None:
            return None  # not rendered yet, or its bytes are no longer held: the long way
        return 200, prepared.ok, b"" if asked.head else body


class HotLaneApp:
    """ASGI: the lane in front of the app; what it cannot answer goes to ``app`` unchanged."""

    def __init__(self, app: ASGIApp, *, lane_of: Callable[[Scope], HotLane | None]) -> None:
        self.app = app
        self.lane_of = lane_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        answer = None
        if scope["type"] == "http":
            lane = self.lane_of(scope)
            if lane is not None and len(lane):
                answer = self._answer(lane, scope)
        if answer is None:
            await self.app(scope, receive, send)
            return
        status, block, body = answer
        await send({"type": "http.response.start", "status": status, "headers": block})
        await send({"type": "http.response.body", "body": body})

    def _answer(self, lane: HotLane, scope: Scope) -> Replayed | None:
        try:
            return lane.answer(scope)
        except Exception:  # a defect here must cost the long way, never the answer
            log.exception("hot lane failed; answering the long way")
            return None
