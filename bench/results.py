"""Benchmark of the optimizer's result cache: a warm (cached) answer against a cold render.

    .venv/bin/python bench/results.py             # about 1 minute
    .venv/bin/python bench/results.py --seconds 5 --rounds 3

One generated 12 MP photo-like JPEG, resized to width 800 (``/photo.jpg?width=800&format=jpeg``),
served by ``assetgate serve --workers 1`` twice in the same run:

* cold: ``ASSETGATE_RESULT_CACHE_BYTES=0`` (every request renders), at 2 connections;
* warm: the result cache on (primed with one request), at 8 connections.

The rounds alternate cold and warm so both see the same machine; the printed ratio is warm req/s
over cold req/s of each round, and of the medians. Targets: >= 50x, and >= 2,000 warm req/s from
one process.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import urllib.request
from collections.abc import Sequence
from pathlib import Path

import loadgen
from optimizer import make_inputs
from optimizer_setup import ASSETGATE, WORK, clean_env

URL_PATH = "/photo.jpg?width=800&format=jpeg"
COLD_CONNECTIONS = 2
WARM_CONNECTIONS = 8


def start(root: Path, cache_dir: Path | None) -> loadgen.Server:
    port = loadgen.free_port()
    argv = [str(ASSETGATE), "serve", "--root", str(root), "--port", str(port), "--workers", "1"]
    env = clean_env(ASSETGATE_LOG_LEVEL="warning")
    if cache_dir is None:
        env["ASSETGATE_RESULT_CACHE_BYTES"] = "0"
    else:
        env["ASSETGATE_RESULT_CACHE_DIR"] = str(cache_dir)
    name = "cold" if cache_dir is None else "warm"
    log = WORK / "logs" / f"results-{name}.log"
    return loadgen.start_server(name, argv, port=port, health_path="/healthz", log=log, env=env)


def cache_state(server: loadgen.Server) -> str:
    with urllib.request.urlopen(server.base_url + URL_PATH, timeout=60) as reply:
        reply.read()
        return str(reply.headers.get("X-Optimizer-Cache"))


def measure(root: Path, cache_dir: Path | None, wrk: str, seconds: int) -> loadgen.LoadResult:
    server = start(root, cache_dir)
    try:
        state = cache_state(server)  # primes the cache when it is on
        expected = "BYPASS" if cache_dir is None else ("MISS", "HIT")
        if state not in expected:
            raise SystemExit(f"bench: unexpected X-Optimizer-Cache {state!r}")
        if cache_dir is not None and cache_state(server) != "HIT":
            raise SystemExit("bench: the warm server did not answer HIT")
        return loadgen.run_wrk(
            wrk,
            server.base_url + URL_PATH,
            connections=COLD_CONNECTIONS if cache_dir is None else WARM_CONNECTIONS,
            duration_s=seconds,
            server_pid=server.pid,
            script_dir=WORK,
        )
    finally:
        server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=5, help="wrk duration per point")
    parser.add_argument("--rounds", type=int, default=3, help="cold/warm pairs, alternating")
    args = parser.parse_args(argv)
    wrk = loadgen.ensure_wrk()
    with tempfile.TemporaryDirectory(prefix="assetgate-results-") as tmp:
        root, cache_dir = Path(tmp) / "root", Path(tmp) / "cache"
        root.mkdir()
        make_inputs(root)
        colds: list[float] = []
        warms: list[float] = []
        for index in range(args.rounds):
            cold = measure(root, None, wrk, args.seconds)
            warm = measure(root, cache_dir, wrk, args.seconds)
            colds.append(cold.rps)
            warms.append(warm.rps)
            print(
                f"round {index + 1}: cold {cold.rps:8.1f} req/s (c={COLD_CONNECTIONS}, "
                f"p50 {cold.p50_ms:.1f} ms, foreign CPU {cold.foreign_cpu_pct:.0f}%)  "
                f"warm {warm.rps:8.1f} req/s (c={WARM_CONNECTIONS}, p50 {warm.p50_ms:.2f} ms, "
                f"foreign CPU {warm.foreign_cpu_pct:.0f}%)  ratio {warm.rps / cold.rps:6.1f}x",
                flush=True,
            )
    cold_rps, warm_rps = statistics.median(colds), statistics.median(warms)
    ratio = warm_rps / cold_rps
    print(
        f"median: cold {cold_rps:.1f} req/s, warm {warm_rps:.1f} req/s, ratio {ratio:.1f}x "
        f"(target >= 50x: {'met' if ratio >= 50 else 'NOT met'}; warm >= 2,000 req/s: "
        f"{'met' if warm_rps >= 2000 else 'NOT met'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
