"""Issue 35's attacks on the package library, measured against ``assetgate serve`` on loopback.

    .venv/bin/python bench/hostile_upstreams.py           # all five, a few minutes on 2 cores
    .venv/bin/python bench/hostile_upstreams.py bomb big  # some of them

Each attack is one request to a server of its own (one worker), while ``/healthz`` is asked every
50 ms; printed: the attack's status and wall time, the server's CPU seconds and peak RSS growth
(its process tree, sampled every 50 ms), and the slowest ``/healthz`` during the attack as a
ratio of the slowest one in a quiet window of the same run (the reference: how long the loop is
held, the machine's noise divided out as far as it can be).

- ``bomb``: the package document as ~200 bytes of ``Content-Encoding: gzip, gzip`` holding
  1 GiB of zeros (item 2).
- ``big``: a 29 MB document with 290,000 versions and a range only a scan answers (item 8).
- ``wide``: ``+esm`` of a package declaring 512 dependencies it never imports (item 9; needs the
  bundler, ``python -m assetgate.packages.esm.install``).
- ``chain``: ``/npm/importmap`` of a chain of 450 modules each importing the next (item 10).
- ``builds``: three ``+esm`` builds that take their whole deadline, an image render meanwhile,
  then the builds' clients leave (item 4).

The registry is the tests' loopback registry (``tests/packages/upstream.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

import loadgen

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO))

from tests.packages.upstream import FakeUpstream, Registry, Reply  # noqa: E402

ASSETGATE = REPO / ".venv" / "bin" / "assetgate"
PROBE_EVERY_S = 0.05
QUIET_S = 3.0
CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def gzip_stream(total: int) -> bytes:
    """``total`` zero bytes gzipped, made in pieces (never ``total`` bytes at once here)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    piece = bytes(16 * 1024 * 1024)
    out = [packer.compress(piece) for _ in range(total // len(piece))]
    out.append(packer.flush())
    return b"".join(out)


def stacked_bomb() -> bytes:
    return _gzip(gzip_stream(1024 * 1024 * 1024))


def _gzip(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def big_document(versions: int) -> bytes:
    entries = ",".join(
        f'"{i // 1000}.{i % 1000}.0":{{"dist":{{"shasum":"{i:040x}","tarball":"/t/-/t.tgz"}}}}'
        for i in range(versions)
    )
    latest = f"{(versions - 1) // 1000}.{(versions - 1) % 1000}.0"
    return (
        f'{{"name":"big","dist-tags":{{"latest":"{latest}"}},"versions":{{{entries}}}}}'
    ).encode()


@dataclass
class Outcome:
    name: str
    status: int
    wall_s: float
    cpu_s: float
    rss_growth: int
    worst_healthz_s: float
    quiet_healthz_s: float
    detail: str


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS_PER_S


def worst_healthz(base: str, stop: threading.Event) -> float:
    worst = 0.0
    with httpx.Client(base_url=base, timeout=60) as client:
        while not stop.is_set():
            started = time.perf_counter()
            client.get("/healthz")
            worst = max(worst, time.perf_counter() - started)
            stop.wait(PROBE_EVERY_S)
    return worst


def probe_while(base: str, seconds: float | None, work: Callable[[], None] | None) -> float:
    stop = threading.Event()
    found: list[float] = []
    probe = threading.Thread(target=lambda: found.append(worst_healthz(base, stop)))
    probe.start()
    if work is not None:
        work()
    else:
        time.sleep(seconds or 0)
    stop.set()
    probe.join()
    return found[0]


def attack(
    name: str, registry_url: str, work: Path, path: str, env: dict[str, str] | None = None
) -> Outcome:
    port = loadgen.free_port()
    store = work / name
    server = loadgen.start_server(
        name,
        [str(ASSETGATE), "serve", "--port", str(port), "--workers", "1"],
        port=port,
        health_path="/healthz",
        log=work / f"{name}.log",
        env={
            **os.environ,
            "ASSETGATE_ROOT": str(work),
            "ASSETGATE_STORE": str(store),
            "ASSETGATE_NPM_REGISTRY": registry_url + "/",
            "ASSETGATE_RATE_LIMIT_PARTS": "",
            "ASSETGATE_UPSTREAM_TIMEOUT_S": "60",
            **(env or {}),
        },
    )
    try:
        quiet = probe_while(server.base_url, QUIET_S, None)
        answers: list[httpx.Response] = []
        cpu_before = cpu_seconds(server.pid)
        rss_before = loadgen.tree_rss_bytes(server.pid)
        started = time.perf_counter()

        def request() -> None:
            with httpx.Client(base_url=server.base_url, timeout=600) as client:
                answers.append(client.get(path))

        with loadgen.PeakRss(server.pid) as peak:
            worst = probe_while(server.base_url, None, request)
        wall = time.perf_counter() - started
        answer = answers[0]
        detail = answer.text[:160] if answer.status_code != 200 else f"{len(answer.content)} B"
        return Outcome(
            name,
            answer.status_code,
            wall,
            cpu_seconds(server.pid) - cpu_before,
            peak.peak - rss_before,
            worst,
            quiet,
            detail,
        )
    finally:
        server.stop()


def slow_builds(registry: Registry, registry_url: str, work: Path) -> str:
    """Three builds that each take their whole 20 s deadline (a node that sleeps first stands
    for 3,000 CommonJS files requiring each other), then an image render: its wall time, and
    how long the builds' processes outlive their clients once those leave."""
    from PIL import Image

    node = shutil.which("node")
    assert node is not None
    wrapper = work / "slow-node"
    wrapper.write_text(f'#!/bin/sh\nsleep 30\nexec {node} "$@"\n')
    wrapper.chmod(0o755)
    for i in range(3):
        registry.publish(f"slow{i}", "1.0.0", {"index.mjs": b"export default 1;"},
                         manifest={"main": "index.mjs"})  # fmt: skip
    Image.new("RGB", (1200, 800), (200, 10, 10)).save(work / "red.png")
    port = loadgen.free_port()
    store = work / "builds"
    server = loadgen.start_server(
        "builds",
        [str(ASSETGATE), "serve", "--port", str(port), "--workers", "1"],
        port=port,
        health_path="/healthz",
        log=work / "builds.log",
        env={
            **os.environ,
            "ASSETGATE_ROOT": str(work),
            "ASSETGATE_STORE": str(store),
            "ASSETGATE_NPM_REGISTRY": registry_url + "/",
            "ASSETGATE_RATE_LIMIT_PARTS": "",
            "ASSETGATE_ESM_NODE": str(wrapper),
        },
    )
    try:
        clients = [httpx.Client(base_url=server.base_url, timeout=8) for _ in range(3)]
        threads = [
            threading.Thread(target=lambda c=c, i=i: _ignore(c.get, f"/npm/slow{i}@1.0.0/+esm"))
            for i, c in enumerate(clients)
        ]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 20
        while len(_bundlers(store)) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)  # the first build is running
        time.sleep(3.0)  # and the others had their time to start or queue
        building = len(_bundlers(store))
        started = time.perf_counter()
        image = httpx.get(f"{server.base_url}/red.png?width=400&format=webp", timeout=60)
        render_s = time.perf_counter() - started
        for thread in threads:
            thread.join()  # each client gave up after 8 s
        for client in clients:
            client.close()
        left = time.perf_counter()
        while _bundlers(store) and time.perf_counter() - left < 30:
            time.sleep(0.05)
        outlived = time.perf_counter() - left
        return (
            f"image during 3 slow builds ({building} build processes running):"
            f" {image.status_code} in {render_s:.2f} s;"
            f" builds left running {outlived:.2f} s after their clients left"
            f" ({len(_bundlers(store))} processes remain)"
        )
    finally:
        server.stop()


def _ignore(call: Callable[[str], object], path: str) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the client gives up: that is the point
        call(path)


def _bundlers(folder: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cwd").resolve().is_relative_to(folder):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def main(chosen: list[str]) -> int:
    upstream = FakeUpstream().start()
    registry = Registry(upstream)
    work = Path(tempfile.mkdtemp(prefix="assetgate-hostile-"))
    outcomes: list[Outcome] = []
    try:
        if "bomb" in chosen:
            registry.publish("bomb", "1.0.0", {"index.js": b"x"})
            body = stacked_bomb()
            upstream.routes["/bomb"] = Reply(body, headers={"Content-Encoding": "gzip, gzip"})
            print(f"bomb: {len(body)} bytes as gzip, gzip (1 GiB decoded)", flush=True)
            outcomes.append(attack("bomb", upstream.url, work, "/npm/bomb@^1/index.js"))
        if "big" in chosen:
            document = big_document(290_000)
            upstream.routes["/big"] = Reply(document)
            print(f"big: {len(document) / 1e6:.1f} MB, 290,000 versions", flush=True)
            outcomes.append(attack("big", upstream.url, work, "/npm/big@^1.0.0/index.js"))
        if "wide" in chosen:
            declared = {f"never-{i}": "^1.0.0" for i in range(512)}
            for i in range(512):  # published, so each costs what a real dependency costs
                registry.publish(f"never-{i}", "1.0.0", {"index.js": b"module.exports = 1;"})
            registry.publish(
                "wide",
                "1.0.0",
                {"index.js": b"module.exports = 42;"},
                manifest={"main": "index.js", "dependencies": declared},
            )
            outcomes.append(attack("wide", upstream.url, work, "/npm/wide@1.0.0/+esm"))
            print(f"wide: registry documents fetched: {fetched(upstream, 'never-')}", flush=True)
        if "chain" in chosen:
            for i in range(450):
                nxt = f"link{i + 1}"
                last = i == 449
                registry.publish(
                    f"link{i}",
                    "1.0.0",
                    {
                        "index.mjs": (
                            b"export default [];"
                            if last
                            else f"import n from '{nxt}'; export default [n];".encode()
                        )
                    },
                    manifest={"main": "index.mjs", "dependencies": {} if last else {nxt: "1.0.0"}},
                )
            outcomes.append(attack("chain", upstream.url, work, "/npm/importmap?pkg=link0@1.0.0"))
        if "builds" in chosen:
            print(slow_builds(registry, upstream.url, work), flush=True)
    finally:
        upstream.stop()
    print()
    print("| attack | status | wall s | server CPU s | peak RSS growth MiB | worst /healthz s"
          " | × quiet /healthz worst | answer |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for o in outcomes:
        ratio = o.worst_healthz_s / max(o.quiet_healthz_s, 1e-3)
        print(
            f"| {o.name} | {o.status} | {o.wall_s:.2f} | {o.cpu_s:.2f} |"
            f" {o.rss_growth / 2**20:.0f} | {o.worst_healthz_s:.3f} | {ratio:.1f} |"
            f" {json.dumps(o.detail)[:120]} |"
        )
    return 0


def fetched(upstream: FakeUpstream, prefix: str) -> int:
    return sum(1 for path in upstream.hits if path.startswith("/" + prefix))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["bomb", "big", "wide", "chain", "builds"]))
