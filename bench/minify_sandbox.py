"""What running the minifier in a killable process costs, and what it buys (issue 24, item 1).

    .venv/bin/python bench/minify_sandbox.py     # a few seconds

Two measurements in one run, on generated files (nothing fetched):

* a real-shaped 1.2 MB bundle minified in this process (``transform_bytes``, the reference) and
  through ``minify.sandbox`` (the server's path: a pipe to a minifier process and back), best of
  N; the ratio is the sandbox's price;
* a hostile file (``/[`` repeated: rjsmin is quadratic on it) under a deadline: how long until
  the answer, and what the same file would cost in this process (timed on a 40 KB slice and
  scaled quadratically, since the whole would take minutes).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from assetgate.cpu import stop as stopping
from assetgate.minify.render import transform_bytes
from assetgate.minify.sandbox import MinifyTimeout, Sandbox
from assetgate.minify.spec import AssetPlan

PLAN = AssetPlan("js", "minify", "identity", vary=False)


def bundle(functions: int = 20_000) -> bytes:
    return b"".join(
        b"function f%d(a, b) {\n  // comment %d\n  return a + b * %d;\n}\n" % (i, i, i)
        for i in range(functions)
    )


def best_of(repeats: int, call: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--deadline", type=float, default=1.0)
    args = parser.parse_args()
    sandbox = Sandbox(1)
    alarm = stopping.Alarm()
    try:
        data = bundle()
        started = time.perf_counter()
        sandbox.transform(b"a", PLAN)
        start_s = time.perf_counter() - started
        assert sandbox.transform(data, PLAN) == transform_bytes(data, PLAN)
        local = best_of(args.repeats, lambda: transform_bytes(data, PLAN))
        remote = best_of(args.repeats, lambda: sandbox.transform(data, PLAN))
        print(f"bundle {len(data) / 1e6:.2f} MB, best of {args.repeats}")
        print(f"  in process (reference) {local * 1000:7.1f} ms")
        print(f"  sandbox                {remote * 1000:7.1f} ms  ({remote / local:.2f}x)")
        print(f"  process start          {start_s * 1000:7.1f} ms  (once, and after each kill)")

        slice_s = best_of(3, lambda: transform_bytes(b"/[" * 20_000, PLAN))
        hostile = b"/[" * 500_000
        scaled = slice_s * (len(hostile) / 40_000) ** 2
        stop = stopping.Stop(args.deadline, alarm)
        stop.start()
        started = time.perf_counter()
        try:
            with stopping.running(stop):
                sandbox.transform(hostile, PLAN)
        except MinifyTimeout:
            pass
        finally:
            stop.end()
        answered = time.perf_counter() - started
        print(f"hostile {len(hostile) / 1e6:.2f} MB of '/[', deadline {args.deadline:g} s")
        print(f"  in process (reference, 40 KB scaled) ~{scaled:7.0f} s")
        sooner = scaled / answered
        print(f"  sandbox, killed at the deadline       {answered:7.2f} s  ({sooner:.0f}x sooner)")
    finally:
        sandbox.close()
        alarm.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
