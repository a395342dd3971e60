"""What one no-op job's trip through the work gate costs the process: CPU and instructions.

    .venv/bin/python bench/gate_roundtrip.py                     # CPU per job, 20 000 jobs
    .venv/bin/python bench/gate_roundtrip.py --instructions      # + callgrind, 2 000 vs 4 000

Runs ``WorkGate.run`` on a job that does nothing, one after another on uvloop, with the shipped
gate settings (3 threads, queue 64, queue wait 10 s, timeout 30 s, the memory budget on), with
and without an ASGI ``receive`` that behaves like uvicorn's on a GET whose body is read (the
first call answers ``http.request``, the next waits until the response is sent or the client
goes). Prints the process's CPU time per job (all threads: the loop's and the gate's) and, with
``--instructions``, the instructions per job under ``valgrind --tool=callgrind``: two runs of
different length, so the interpreter's start-up cancels out. A loaded machine changes the
first figure, not the second; ``--separate-threads`` splits them into the event loop's and the
threads'. ``PYTHONPATH=<another checkout>/src`` measures another version of the gate. Reference
in the same run: ``loop.run_in_executor`` on a ``ThreadPoolExecutor`` of the same size, the floor
most asyncio code pays for a thread hop.
Figures: docs/benchmarks.md, "Small images: where the fixed cost of a request goes".
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import uvloop

WORKERS = 3


def _noop() -> None:
    return None


class _Receive:
    """uvicorn's receive after a GET: one ``http.request``, then a wait for the end."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.read = False

    async def __call__(self) -> dict[str, Any]:
        if not self.read:
            self.read = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self.event.wait()
        return {"type": "http.disconnect"}


async def _gate_jobs(jobs: int, watched: bool) -> None:
    from assetgate.cpu.workgate import WorkGate

    gate = WorkGate(WORKERS, 64, memory_bytes=1 << 30, queue_wait_s=10.0, timeout_s=30.0)
    try:
        for _ in range(jobs):
            receive = _Receive() if watched else None
            await gate.run(_noop, cost=1 << 20, receive=receive)
    finally:
        gate.close()


async def _executor_jobs(jobs: int) -> None:
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(WORKERS) as pool:
        for _ in range(jobs):
            await loop.run_in_executor(pool, _noop)


KINDS: dict[str, Callable[[int], Awaitable[None]]] = {
    "gate": lambda jobs: _gate_jobs(jobs, watched=False),
    "gate + receive": lambda jobs: _gate_jobs(jobs, watched=True),
    "run_in_executor (reference)": _executor_jobs,
}


def _run(kind: str, jobs: int) -> float:
    """CPU seconds of the whole process (every thread) for ``jobs`` round trips."""
    uvloop.install()
    asyncio.run(KINDS[kind](100))  # warm: threads started, code paths taken once
    start = time.process_time()
    asyncio.run(KINDS[kind](jobs))
    return time.process_time() - start


def _instructions(kind: str, jobs: int) -> tuple[int, int]:
    """Instructions of the event loop's thread and of all the others, for a run of ``jobs``."""
    with tempfile.TemporaryDirectory(prefix="assetgate-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
        code += f"import gate_roundtrip as g; g._run({kind!r}, {jobs})"
        command = ["valgrind", "--tool=callgrind", "--separate-threads=yes"]
        command += [f"--callgrind-out-file={out}", sys.executable, "-c", code]
        subprocess.run(command, check=True, capture_output=True)
        loop = others = 0
        for part in Path(tmp).glob("callgrind.out-*"):  # one file a thread: -01 is the main one
            totals = re.search(r"^totals:\s*(\d+)", part.read_text(), re.MULTILINE)
            assert totals is not None, f"callgrind wrote no totals in {part.name}"
            if part.name.endswith("-01"):
                loop += int(totals.group(1))
            else:
                others += int(totals.group(1))
        return loop, others


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--instructions", action="store_true", help="also count, with callgrind")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; {args.jobs} jobs, {WORKERS} threads, uvloop")
    for kind in KINDS:
        cpu = _run(kind, args.jobs)
        line = f"  {kind:<30} {1e6 * cpu / args.jobs:7.1f} µs CPU/job"
        if args.instructions:
            few, many = _instructions(kind, 2000), _instructions(kind, 4000)
            loop, others = ((b - a) / 2000 / 1000 for a, b in zip(few, many, strict=True))
            line += f"  {loop + others:6.1f} k instructions/job"
            line += f" ({loop:.1f} k on the event loop, {others:.1f} k on the threads)"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
