"""Loopback stand-ins for the npm registry and a cdnjs-compatible library catalog.

A real HTTP server on 127.0.0.1 (``http.server`` in a thread) answering with the real upstream
shapes: packuments with ``dist.integrity``, ``/-/v1/search``, ``/libraries?search=``,
``/libraries/<name>/<version>`` with ``files`` and ``sri``, and the files themselves. Tarballs are
built here from dictionaries of files, including hostile ones.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import tarfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

Handler = Callable[[dict[str, list[str]]], "Reply"]


@dataclass
class Reply:
    body: bytes
    status: int = 200
    content_type: str = "application/json"
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def json_reply(doc: Any, status: int = 200, delay_s: float = 0.0) -> Reply:
    return Reply(json.dumps(doc).encode(), status=status, delay_s=delay_s)


def sri512(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def make_tarball(
    files: dict[str, bytes],
    *,
    root: str = "package",
    extra: Callable[[tarfile.TarFile], None] | None = None,
) -> bytes:
    """A gzip'd tar like ``npm pack`` makes (mtime 1985-10-26, no directory entries)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path, data in files.items():
            info = tarfile.TarInfo(f"{root}/{path}" if root else path)
            info.size = len(data)
            info.mtime = 499162500
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
        if extra is not None:
            extra(archive)
    return gzip.compress(raw.getvalue(), mtime=0)


class FakeUpstream:
    """Routes keyed by decoded path; a value is a Reply or a callable taking the query."""

    def __init__(self) -> None:
        self.routes: dict[str, Reply | Handler] = {}
        self.hits: Counter[str] = Counter()
        self.down = False
        upstream = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                path = unquote(parts.path)
                upstream.hits[path] += 1
                route = upstream.routes.get(path)
                if upstream.down or route is None:
                    reply = Reply(b'{"error":"not found"}', status=500 if upstream.down else 404)
                elif callable(route):
                    reply = route(parse_qs(parts.query))
                else:
                    reply = route
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(reply.body)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(reply.body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def start(self) -> FakeUpstream:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Registry:
    """npm registry behaviour on a FakeUpstream: packuments, tarballs and search."""

    def __init__(self, upstream: FakeUpstream) -> None:
        self.upstream = upstream
        self.docs: dict[str, dict[str, Any]] = {}
        self.search_objects: list[dict[str, Any]] = []
        upstream.routes["/-/v1/search"] = self._search

    def _search(self, query: dict[str, list[str]]) -> Reply:
        text = query.get("text", [""])[0].lower()
        size = int(query.get("size", ["20"])[0])
        found = [o for o in self.search_objects if text in json.dumps(o).lower()][:size]
        return json_reply({"objects": found, "total": len(found), "time": "now"})

    def tarball_path(self, name: str, version: str) -> str:
        return f"/{name}/-/{name.rsplit('/', 1)[-1]}-{version}.tgz"

    def publish(
        self,
        name: str,
        version: str,
        files: dict[str, bytes] | None = None,
        *,
        manifest: dict[str, Any] | None = None,
        tarball: bytes | None = None,
        integrity: str | None = None,
        tags: dict[str, str] | None = None,
        deprecated: bool = False,
        description: str = "",
        delay_s: float = 0.0,
        tarball_url: str | None = None,
    ) -> bytes:
        """Add ``name@version``; package.json is written from ``manifest``. Returns the tarball."""
        body = dict(files or {})
        if "package.json" not in body:
            meta = {"name": name, "version": version, "description": description}
            meta.update(manifest or {})
            body["package.json"] = json.dumps(meta).encode()
        data = tarball if tarball is not None else make_tarball(body)
        path = self.tarball_path(name, version)
        self.upstream.routes[path] = Reply(
            data, content_type="application/octet-stream", delay_s=delay_s
        )
        doc = self.docs.setdefault(
            name, {"_id": name, "name": name, "dist-tags": {}, "versions": {}, "time": {}}
        )
        entry: dict[str, Any] = {
            "name": name,
            "version": version,
            "description": description,
            "dist": {
                "tarball": tarball_url or f"{self.upstream.url}{path}",
                "shasum": hashlib.sha1(data).hexdigest(),
                "integrity": integrity if integrity is not None else sri512(data),
            },
        }
        if deprecated:
            entry["deprecated"] = "do not use"
        doc["versions"][version] = entry
        doc["description"] = description
        doc["dist-tags"].setdefault("latest", version)
        doc["dist-tags"].update(tags or {})
        self.upstream.routes[f"/{name}"] = json_reply(doc)
        return data

    def add_search(self, name: str, version: str, description: str = "") -> None:
        self.search_objects.append(
            {
                "package": {
                    "name": name,
                    "scope": name[1:].split("/")[0] if name.startswith("@") else "unscoped",
                    "version": version,
                    "description": description,
                    "keywords": [],
                    "date": "2024-01-01T00:00:00.000Z",
                    "links": {},
                    "publisher": {"username": "someone", "email": "a@example.invalid"},
                    "maintainers": [],
                },
                "score": {
                    "final": 1.0,
                    "detail": {"quality": 1, "popularity": 1, "maintenance": 1},
                },
                "searchScore": 1.0,
            }
        )


class LibraryCatalog:
    """cdnjs-compatible API under ``/cdnjs`` and files under ``/libs`` on a FakeUpstream."""

    def __init__(self, upstream: FakeUpstream) -> None:
        self.upstream = upstream
        self.libraries: list[dict[str, Any]] = []
        upstream.routes["/cdnjs/libraries"] = self._search

    @property
    def api(self) -> str:
        return f"{self.upstream.url}/cdnjs"

    @property
    def files_base(self) -> str:
        return f"{self.upstream.url}/libs"

    def _search(self, query: dict[str, list[str]]) -> Reply:
        text = query.get("search", [""])[0].lower()
        limit = int(query.get("limit", ["1000"])[0])
        fields = query.get("fields", [""])[0].split(",")
        matched = [lib for lib in self.libraries if text in json.dumps(lib).lower()]
        results = [
            {
                "name": lib["name"],
                "latest": f"{self.files_base}/{lib['name']}/{lib['version']}/{lib['filename']}",
                **{k: lib.get(k) for k in fields if k},
            }
            for lib in matched[:limit]
        ]
        return json_reply({"results": results, "total": len(results), "available": len(matched)})

    def add(
        self,
        name: str,
        version: str,
        files: dict[str, bytes],
        *,
        filename: str | None = None,
        description: str = "",
        sri: dict[str, str] | None = None,
    ) -> None:
        main = filename or next(iter(files))
        self.libraries.append(
            {"name": name, "version": version, "filename": main, "description": description}
        )
        self.upstream.routes[f"/cdnjs/libraries/{name}/{version}"] = json_reply(
            {
                "name": name,
                "version": version,
                "files": list(files),
                "rawFiles": list(files),
                "sri": sri if sri is not None else {p: sri512(d) for p, d in files.items()},
            }
        )
        for path, data in files.items():
            self.upstream.routes[f"/libs/{name}/{version}/{path}"] = Reply(
                data, content_type="application/javascript"
            )
