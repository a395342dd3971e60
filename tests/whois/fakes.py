"""Real loopback servers for the whois tests: a port-43 whois server and an RDAP HTTP server.

Both are plain asyncio TCP servers on 127.0.0.1:0 speaking the real protocols (RFC 3912 one
line in, text out, close; HTTP/1.1 with Content-Length and Connection: close), answering from
tables the tests write, and recording what they were asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    body: bytes
    chunk_bytes: int = 0  # 0: everything in one write
    chunk_delay_s: float = 0.0
    delay_s: float = 0.0  # before the first byte


ReplySpec = Reply | bytes | str | Sequence[Reply | bytes | str]


def as_reply(spec: Reply | bytes | str) -> Reply:
    if isinstance(spec, Reply):
        return spec
    return Reply(spec.encode("utf-8") if isinstance(spec, str) else spec)


class WhoisServer:
    """Answers each query line from ``replies`` (a list is served in order, last one sticks)."""

    def __init__(self, replies: dict[str, ReplySpec], default: str | None = None) -> None:
        self.replies = dict(replies)
        self.default = default
        self.queries: list[str] = []
        self.port = 0
        self._server: asyncio.Server | None = None
        self._served: dict[str, int] = {}
        self.open = 0  # connections being served now
        self.most_open = 0  # the most at one time

    async def start(self) -> WhoisServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)

    def _reply_for(self, query: str) -> Reply | None:
        spec = self.replies.get(query)
        if spec is None:
            return None if self.default is None else as_reply(self.default.format(query=query))
        if isinstance(spec, (Reply, bytes, str)):
            return as_reply(spec)
        index = self._served.get(query, 0)
        self._served[query] = index + 1
        return as_reply(spec[min(index, len(spec) - 1)])

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            line = await asyncio.wait_for(reader.readline(), 5)
            query = line.decode("latin-1").rstrip("\r\n")
            self.queries.append(query)
            reply = self._reply_for(query)
            if reply is not None:
                await asyncio.sleep(reply.delay_s)
                step = reply.chunk_bytes or len(reply.body) or 1
                for start in range(0, len(reply.body), step):
                    writer.write(reply.body[start : start + step])
                    await writer.drain()
                    if reply.chunk_delay_s:
                        await asyncio.sleep(reply.chunk_delay_s)
        except (OSError, TimeoutError, asyncio.CancelledError):
            pass
        finally:
            self.open -= 1
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


@dataclass
class HttpReply:
    status: int
    body: Any = None  # dict/list -> JSON
    headers: dict[str, str] = field(default_factory=dict)


class RdapServer:
    """A minimal HTTP/1.1 server answering GETs from ``routes`` (path -> HttpReply)."""

    def __init__(self) -> None:
        self.routes: dict[str, HttpReply] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> RdapServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            _method, path, _version = request_line.split(" ", 2)
            headers = {}
            for line in header_lines:
                if ":" in line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            self.requests.append((path, headers))
            reply = self.routes.get(path, HttpReply(404, {"errorCode": 404, "title": "Not Found"}))
            body = reply.body
            data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body or b""
            response_headers = {
                "Content-Type": "application/rdap+json",
                "Content-Length": str(len(data)),
                "Connection": "close",
                **reply.headers,
            }
            head_out = f"HTTP/1.1 {reply.status} X\r\n" + "".join(
                f"{k}: {v}\r\n" for k, v in response_headers.items()
            )
            writer.write(head_out.encode() + b"\r\n" + data)
            await writer.drain()
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
