"""A loopback HTTP server standing in for a CDN's purge API: it records every request exactly
(method, path, headers, body) and answers from a script."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True, slots=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes


@dataclass(slots=True)
class CdnApi:
    base: str
    seen: list[Seen] = field(default_factory=list)
    # (status, headers, body) answered in turn; the last one again when they run out
    script: list[tuple[int, dict[str, str], bytes]] = field(default_factory=list)

    def answer(self) -> tuple[int, dict[str, str], bytes]:
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]


@contextmanager
def cdn_api(*script: tuple[int, dict[str, str], bytes]) -> Iterator[CdnApi]:
    api = CdnApi("", script=list(script))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            headers = {name.lower(): value for name, value in self.headers.items()}
            api.seen.append(Seen("POST", self.path, headers, body))
            status, extra, reply = api.answer()
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    api.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
