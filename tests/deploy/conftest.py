"""Real nginx, rendered from deploy/nginx.conf.template by the documented line, in front of two
``assetgate serve`` processes that share one real redis-server rate-limit budget."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import require_binary
from tests.imaging.factory import jpeg
from tests.serve_process import pick_port, serve, stop, wait_healthy
from tests.web.test_ratelimit import RedisServer

REPO = Path(__file__).resolve().parents[2]
RATE_LIMIT = 5
FRESH_S = 3


@dataclass(frozen=True, slots=True)
class Edge:
    url: str
    port: int
    config: Path
    backends: tuple[str, ...]


def render_line() -> str:
    """The ``envsubst`` line of docs/deploying.md, exactly as a reader would paste it."""
    text = (REPO / "docs" / "deploying.md").read_text()
    lines = [line for line in text.splitlines() if "envsubst '" in line]
    assert len(lines) == 1, "docs/deploying.md shows one envsubst line"
    return lines[0]


def render(target: Path, listen: int, backends: list[int], cache_dir: Path) -> None:
    line = render_line()
    line = re.sub(r"^(?:\w+=(?:'[^']*'|\S+) )+", "", line)  # the example's own values
    line = line.replace("/etc/nginx/conf.d/assetgate.conf", str(target))
    env = {
        "EDGE_LISTEN": f"127.0.0.1:{listen}",
        "EDGE_UPSTREAMS": " ".join(f"server 127.0.0.1:{port};" for port in backends),
        "EDGE_CACHE_DIR": str(cache_dir),
        "EDGE_BODY_MAX": "1m",
        "PATH": "/usr/bin:/bin",
    }
    subprocess.run(["bash", "-c", line], cwd=REPO, env=env, check=True, timeout=30)


def main_config(prefix: Path, include: Path) -> str:
    temp = {name: prefix / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir()
    # As root the workers would drop to "nobody", who cannot enter pytest's private temp dirs.
    user = "user root;" if os.geteuid() == 0 else ""
    return f"""
{user}
worker_processes 1;
pid {prefix / "nginx.pid"};
error_log {prefix / "error.log"} info;
events {{ worker_connections 256; }}
http {{
    access_log {prefix / "access.log"};
    client_body_temp_path {temp["body"]};
    proxy_temp_path {temp["proxy"]};
    fastcgi_temp_path {temp["fastcgi"]};
    uwsgi_temp_path {temp["uwsgi"]};
    scgi_temp_path {temp["scgi"]};
    include {include};
}}
"""


SITE_CSS = "body {\n  color: red;\n}\n" * 200  # large enough that gzip is worth it


@contextmanager
def run_edge(tmp: Path, **env: str) -> Iterator[Edge]:
    """Redis, two ``assetgate serve`` (settings ``env``) and nginx in front; all stopped after."""
    nginx = require_binary("nginx")
    redis_binary = require_binary("redis-server")
    require_binary("envsubst")
    root = tmp / "root"
    root.mkdir()
    (root / "photo.jpg").write_bytes(jpeg(640, 480))
    (root / "metrics.jpg").write_bytes(jpeg(64, 48))  # a file, not the operator's endpoint
    (root / "site.css").write_text(SITE_CSS)
    with ExitStack() as stack:
        redis = RedisServer(redis_binary, pick_port(), tmp)
        redis.start()
        stack.callback(redis.stop)
        settings = {
            "root": str(root),
            "trusted_proxies": "127.0.0.1",
            "rate_limit": f"{RATE_LIMIT}/60 seconds",
            "rate_limit_storage": redis.url,
            **env,
        }
        backends = [stack.enter_context(serve(tmp, **settings)) for _ in range(2)]
        prefix = tmp / "nginx"
        prefix.mkdir()
        site = prefix / "assetgate.conf"
        listen = pick_port()
        render(site, listen, [backend.port for backend in backends], prefix / "cache")
        config = prefix / "nginx.conf"
        config.write_text(main_config(prefix, site))
        log = prefix / "stderr.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [nginx, "-p", str(prefix), "-c", str(config), "-e", str(prefix / "error.log"),
                 "-g", "daemon off;"],
                stdout=out,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        stack.callback(stop, process)
        url = f"http://127.0.0.1:{listen}"
        wait_healthy(url, process, log)
        yield Edge(url, listen, site, tuple(backend.base for backend in backends))


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Edge]:
    with run_edge(tmp_path_factory.mktemp("edge")) as running:
        yield running


@pytest.fixture(scope="module")
def short_lived_edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Edge]:
    """Answers fresh for 3 s, then stale-while-revalidate for 10 minutes."""
    control = f"public, max-age={FRESH_S}, stale-while-revalidate=600"
    with run_edge(tmp_path_factory.mktemp("short"), cache_control=control) as running:
        yield running
