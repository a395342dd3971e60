"""An answer's head leaves with its body's first bytes: one write (one TCP segment) per answer.

uvicorn writes the status line and header fields on ``http.response.start`` and the body on
``http.response.body``: two ``write`` calls, two trips through the kernel's TCP stack, for an
answer that is complete at once, as nearly every answer of this service is. node's HTTP server
(``res.end(body)``, the ``sharp`` peer of ``bench/peer_sharp.py``) sends both in one ``writev``.
Here the transport that uvicorn's request cycle writes to holds the head until the first body
write and sends both with one ``writelines`` (uvloop: one ``writev``, no copy), or alone when the
answer ends without a body (HEAD, 304) or the connection closes. What was written before the head
(``100 Continue``) leaves at once, as before. A streamed answer's head waits for its first chunk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from uvicorn.protocols.http.httptools_impl import RequestResponseCycle


class HeadWithBody:
    """The connection's transport as one request cycle sees it."""

    __slots__ = ("_cycle", "_head", "_headed", "_transport")

    def __init__(self, transport: asyncio.Transport, cycle: RequestResponseCycle) -> None:
        self._transport = transport
        self._cycle = cycle
        self._head: bytes | None = None
        self._headed = False  # the head went by (held or written)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        head = self._head
        if head is not None:
            self._head = None
            self._transport.writelines((head, data))
        elif not self._headed and self._cycle.response_started:
            self._headed = True
            self._head = bytes(data)  # the cycle's first write once its answer has started
        else:
            self._transport.write(data)

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        self.flush()
        self._transport.writelines(list_of_data)

    def flush(self) -> None:
        """Send a held head (an answer without a body ended)."""
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def hold_heads(cycle: RequestResponseCycle) -> None:
    """Give ``cycle`` the holding transport; its answer's end sends a head still held."""
    holder = HeadWithBody(cycle.transport, cycle)
    cycle.transport = holder  # type: ignore[assignment]
    ended: Callable[[], None] = cycle.on_response

    def on_response() -> None:
        holder.flush()
        ended()

    cycle.on_response = on_response
