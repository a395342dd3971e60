"""The one reader of an upstream's body: decoded as a stream, capped on decoded bytes, off the loop.

httpx undoes ``Content-Encoding`` itself, each received chunk in one zlib call on the event loop
and every coding of a stack in turn: ~1.8 KB sent as ``Content-Encoding: gzip, gzip`` became
1 GiB in one call (a 6.6 s freeze and 3.2 GiB through an origin, 11.4 s through RDAP).
So every upstream answer (origin, registry, library catalog, search, RDAP) is read here from its
raw bytes instead:

- at most one coding, ``gzip`` or ``deflate`` (``identity`` is none); a stack or any other coding
  is refused (``BadBody``), as we never ask for one (``ACCEPT_ENCODING``);
- decompressed in steps of at most ``STEP_BYTES`` on a worker thread, never on the event loop;
- the caller's cap counts decoded bytes: one byte over it is ``BodyOverCap`` at once, the rest never
  decoded nor read. A declared ``Content-Length`` over the cap is refused before any byte when the
  body has no coding (with a coding it says nothing about the decoded size).

Callers turn the two errors into their own (a 413 for a source file, a 502 naming the upstream).
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from typing import Final

import anyio.to_thread
import httpx

ACCEPT_ENCODING: Final = "gzip, deflate"
RAW_CHUNK_BYTES: Final = 64 * 1024
STEP_BYTES: Final = 256 * 1024
_CODINGS: Final = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": 0}


class BodyOverCap(Exception):
    """The decoded body is over the caller's cap."""


class BadBody(Exception):
    """The body cannot be read safely; ``reason`` is fit for a client ("sent a damaged gzip")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def content_codings(header: str) -> list[str]:
    """``Content-Encoding`` -> its codings in the order applied, ``identity`` left out."""
    return [
        c for c in (part.strip().lower() for part in header.split(",")) if c not in ("", "identity")
    ]


class Inflater:
    """One coding undone in bounded steps (blocking: run on a worker thread)."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._wbits = _CODINGS[coding]
        self._zlib = zlib.decompressobj(self._wbits or zlib.MAX_WBITS)
        self._pending = b""
        self._started = False
        self._first = b""  # what was fed before the first output (for raw deflate's retry)

    def feed(self, data: bytes) -> None:
        if self._zlib.eof:
            return  # what follows the end of the stream is not part of the body
        self._pending += data
        if not self._started and len(self._first) < RAW_CHUNK_BYTES:
            self._first += data

    def step(self, max_bytes: int) -> bytes:
        """At most ``max_bytes`` more decoded bytes of what was fed; b"" when it needs input."""
        if not self._pending or self._zlib.eof:
            return b""
        try:
            out = self._zlib.decompress(self._pending, max_bytes)
        except zlib.error:
            if self._wbits == 0 and not self._started and len(self._first) < RAW_CHUNK_BYTES:
                # "deflate" is meant to be zlib-wrapped; some servers send raw deflate.
                self._wbits = -zlib.MAX_WBITS
                self._zlib = zlib.decompressobj(self._wbits)
                self._pending, self._first = self._first, b""
                return self.step(max_bytes)
            raise BadBody(f"sent a damaged {self.coding} body") from None
        self._pending = self._zlib.unconsumed_tail
        if out:
            self._started = True
            self._first = b""
        return out

    def check_end(self) -> None:
        if not self._zlib.eof:
            raise BadBody(f"sent a truncated {self.coding} body")


def inflater_for(response: httpx.Response) -> Inflater | None:
    """None for a body without coding; BadBody for a stack or an unknown coding."""
    codings = content_codings(response.headers.get("content-encoding", ""))
    if not codings:
        return None
    if len(codings) > 1:
        raise BadBody("sent more than one content coding")
    if codings[0] not in _CODINGS:
        raise BadBody(f"sent an unsupported content coding ({codings[0][:32]})")
    return Inflater(codings[0])


async def decoded_chunks(response: httpx.Response, max_bytes: int) -> AsyncIterator[bytes]:
    """The body's decoded bytes as they arrive; ``BodyOverCap`` past ``max_bytes``."""
    inflater = inflater_for(response)
    if inflater is None:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise BodyOverCap
    total = received = 0
    async for raw in response.aiter_raw(RAW_CHUNK_BYTES):
        received += len(raw)
        if inflater is None:
            if received > max_bytes:
                raise BodyOverCap
            yield raw
            continue
        if received > max_bytes + max_bytes // 64 + RAW_CHUNK_BYTES:
            raise BodyOverCap  # compressed data that decodes to (almost) nothing is no cheaper
        inflater.feed(raw)
        while True:
            # One step more than the cap allows is enough to know it is over.
            room = min(STEP_BYTES, max_bytes - total + 1)
            piece = await anyio.to_thread.run_sync(inflater.step, room)
            if not piece:
                break
            total += len(piece)
            if total > max_bytes:
                raise BodyOverCap
            yield piece
    if inflater is not None:
        inflater.check_end()


async def read_body(response: httpx.Response, max_bytes: int) -> bytes:
    """The whole decoded body, at most ``max_bytes`` (``BodyOverCap`` beyond)."""
    body = bytearray()
    async for chunk in decoded_chunks(response, max_bytes):
        body += chunk
    return bytes(body)
