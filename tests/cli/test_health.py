"""``assetgate health``: exit 0 with one line when the server answers, 1 with one line when not."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.serve_process import Served, pick_port, run_cli, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("health")
    with serve(tmp, root=str(tmp)) as served:
        yield served


def test_healthy_server_exits_0_with_one_line(server: Served) -> None:
    result = run_cli("health", "--url", server.base)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"healthy: {server.base}/healthz 200 ok, assetgate {version('assetgate')}\n"
    )
    assert result.stderr == ""


def test_ready_asks_readyz(server: Served) -> None:
    result = run_cli("health", "--ready", "--url", server.base + "/")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"healthy: {server.base}/readyz 200 ready\n"


def test_the_default_url_comes_from_the_servers_own_settings(server: Served) -> None:
    env = {"ASSETGATE_HOST": "0.0.0.0", "ASSETGATE_PORT": str(server.port)}
    result = run_cli("health", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"healthy: http://127.0.0.1:{server.port}/healthz 200 ok")


def test_nothing_listening_exits_1_with_one_line() -> None:
    port = pick_port()
    result = run_cli("health", "--url", f"http://127.0.0.1:{port}", "--timeout", "2")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"unhealthy: http://127.0.0.1:{port}/healthz: ")
    assert "refused" in lines[0].lower()
    assert result.stdout == ""


def test_an_unready_server_exits_1_naming_the_failed_check(tmp_path: Path) -> None:
    dead_redis = f"redis://127.0.0.1:{pick_port()}/0"
    with serve(tmp_path, root=str(tmp_path), redis_url=dead_redis) as served:
        alive = run_cli("health", "--url", served.base)
        ready = run_cli("health", "--ready", "--url", served.base)
    assert alive.returncode == 0
    assert ready.returncode == 1
    assert ready.stderr == f"unhealthy: {served.base}/readyz 503 unready (failed: redis)\n"


def test_a_200_from_something_else_is_not_healthy() -> None:
    class Other(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args: object) -> None:
            pass

    other = ThreadingHTTPServer(("127.0.0.1", 0), Other)
    thread = threading.Thread(target=other.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{other.server_address[1]}"
        result = run_cli("health", "--url", base)
    finally:
        other.shutdown()
        other.server_close()
    assert result.returncode == 1
    assert result.stderr == f"unhealthy: {base}/healthz 200 (not an assetgate answer)\n"


def test_a_malformed_url_is_one_line() -> None:
    result = run_cli("health", "--url", "http://[::1")
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("given", "ready", "asked"), [
    ("/healthz", False, "/healthz"),
    ("/readyz", False, "/readyz"),
    ("/healthz", True, "/readyz"),
    ("", True, "/readyz"),
])  # fmt: skip
def test_the_probe_url_itself_is_accepted(
    server: Served, given: str, ready: bool, asked: str
) -> None:
    """Issue 36: --url http://host:8080/healthz asked /healthz/healthz (a 404)."""
    result = run_cli("health", *(["--ready"] if ready else []), "--url", server.base + given)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"healthy: {server.base}{asked} 200 ")
