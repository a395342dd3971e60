"""The content fingerprint of a file version's first request: BLAKE3 against the stdlib's BLAKE2b.

    .venv/bin/python bench/fingerprints.py              # a few seconds
    .venv/bin/python bench/fingerprints.py --rounds 31

Every first request of a file version (and every remote copy as it streams in) hashes the whole
file: the ETag's source part and the result cache's key (``serving/versions.py``). On copies of the
generated 12 MP photo-like JPEG (3.8 MB, in the page cache, as a just-written or often-read file
is), each round times, in one order that flips every round:

    blake3    ``FileVersions.identify`` as the service runs it: read and hash on a worker thread
    blake2b   the same read loop and thread hop with ``hashlib.blake2b`` (the hash before BLAKE3)
    read      the same read loop without any hash: what no hash can go under

Each ratio is the median over the rounds of the reference's time over the measured time.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio.to_thread

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from assetgate.serving.versions import FileVersions  # noqa: E402
from optimizer import make_inputs  # noqa: E402

CHUNK = 1024 * 1024  # serving/versions.py reads in 1 MiB pieces


def _blake2b(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _read(path: Path) -> str:
    with open(path, "rb") as handle:
        while handle.read(CHUNK):
            pass
    return ""


async def run(rounds: int, tmp: Path) -> dict[str, list[float]]:
    make_inputs(tmp)
    photo = (tmp / "photo.jpg").read_bytes()
    samples: dict[str, list[float]] = {"blake3": [], "blake2b": [], "read": []}
    sources = FileVersions(body_budget_bytes=64 * 1024 * 1024)

    async def service(path: Path) -> None:
        await sources.identify(path, os.stat(path))

    def on_thread(work: Callable[[Path], str]) -> Callable[[Path], object]:
        async def timed(path: Path) -> None:
            await anyio.to_thread.run_sync(work, path)

        return timed

    ways = {"blake3": service, "blake2b": on_thread(_blake2b), "read": on_thread(_read)}
    for index in range(rounds):
        order = list(ways) if index % 2 else list(reversed(ways))
        for name in order:
            path = tmp / f"{name}-{index}.jpg"  # a version never seen: distinct stat identity
            path.write_bytes(photo + index.to_bytes(2, "big"))
            path.read_bytes()  # in the page cache, as the other ways find it
            started = time.perf_counter()
            await ways[name](path)  # type: ignore[operator]
            samples[name].append(time.perf_counter() - started)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assetgate-fingerprints-") as tmp:
        samples = asyncio.run(run(args.rounds, Path(tmp)))
    for name, values in samples.items():
        print(f"{name:8s} median {statistics.median(values) * 1000:6.2f} ms a 3.8 MB file version")
    pairs = [old / new for old, new in zip(samples["blake2b"], samples["blake3"], strict=True)]
    print(f"blake3   {statistics.median(pairs):5.2f}x faster than blake2b (median of "
          f"{len(pairs)} rounds)")  # fmt: skip
    floor = [read / new for read, new in zip(samples["read"], samples["blake3"], strict=True)]
    print(f"blake3   {statistics.median(floor):5.2f}x of the bare read (1.00x: the hash is free)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
