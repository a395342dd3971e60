"""Answers whose header block was built once: the hot paths' responses.

A repeat request for an unchanged file (a static file, a 304, a cached rendering) should cost a
small constant over the HTTP stack itself. Its headers depend only on the file's version and the
variant asked for, so they are encoded once into a ``Prepared`` (kept in the version's
``FileVersion.blocks``) and each request sends a copy of that block with the bytes it already has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from starlette.requests import Request
from starlette.responses import Response

from assetgate.web.caching import is_not_modified

HeaderBlock = tuple[tuple[bytes, bytes], ...]


def encode_headers(headers: Mapping[str, str]) -> HeaderBlock:
    return tuple((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items())


@dataclass(frozen=True, slots=True)
class Prepared:
    """The fixed parts of one answer: its validators and the 304's and 200's header blocks.

    ``headers`` are the 304's (the 200 repeats them); ``ok`` adds Content-Type and Content-Length
    and is None while the 200's headers are not known yet (a rendering that has not happened).
    """

    etag: str
    mtime: float | None  # None: no Last-Modified; If-Modified-Since is ignored (RFC 9110 §13.1.3)
    headers: Mapping[str, str]
    not_modified: HeaderBlock
    ok: HeaderBlock | None = None
    shared: HeaderBlock = ()  # ``headers`` encoded: what every answer of the variant starts with

    @classmethod
    def build(
        cls,
        etag: str,
        mtime: float | None,
        headers: Mapping[str, str],
        ok: Mapping[str, str] | None = None,
    ) -> Prepared:
        block = encode_headers(headers)
        prepared = cls(etag, mtime, dict(headers), block, shared=block)
        return prepared if ok is None else prepared.with_ok(ok)

    def with_ok(self, ok: Mapping[str, str]) -> Prepared:
        """This answer with the 200's own headers added to the shared ones."""
        return replace(self, ok=self.block_with(ok))

    def block_with(self, own: Mapping[str, str]) -> HeaderBlock:
        """The shared headers and ``own`` (which win), encoded: only ``own`` is encoded now."""
        added = encode_headers(own)
        names = {name for name, _ in added}
        return tuple(pair for pair in self.shared if pair[0] not in names) + added

    def rendered(self, own: dict[str, str], body: bytes) -> BlockResponse:
        """A rendering's 200: the shared headers and the rendering's ``own`` (its Content-Length
        added when it has none), only these encoded now."""
        own.setdefault("Content-Length", str(len(body)))
        return BlockResponse(200, self.block_with(own), body)

    def matches(self, request: Request) -> bool:
        """The request's validators match: answer 304 (RFC 9110 §13.2.2)."""
        headers = request.headers
        return self.fresh_for(headers.get("if-none-match"), headers.get("if-modified-since"))

    def fresh_for(self, if_none_match: str | None, if_modified_since: str | None) -> bool:
        """``matches`` for validators already read from the headers (the hot lane's)."""
        if self.mtime is None:
            if_modified_since = None
        if if_none_match is None and if_modified_since is None:
            return False
        return is_not_modified(
            if_none_match, if_modified_since, etag=self.etag, last_modified=self.mtime or 0.0
        )


class BlockResponse(Response):
    """A response sent from a prepared header block: no per-request header work.

    The block is copied (middleware may add headers to ``raw_headers``); a HEAD gets the block
    (Content-Length of the GET included) and no body.
    """

    def __init__(self, status: int, block: HeaderBlock, body: bytes = b"") -> None:
        self.status_code = status
        self.body = body
        self.background = None
        self.raw_headers = list(block)
