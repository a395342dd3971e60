"""The optimizer benchmark's report: tables, checks against the targets, the saved results.

Reads only what ``bench/optimizer.py`` measured; ``--report-from`` re-prints a saved run.
"""

from __future__ import annotations

import contextlib
import json
import math
import platform
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import loadgen
from optimizer_setup import (
    CASES,
    NCPU,
    QUIET_THRESHOLD_PCT,
    TARGET_304_RPS,
    TARGET_RSS_BYTES,
    TARGET_VS_RAW,
    TARGET_VS_THUMBOR,
    Case,
    Plan,
    RawResult,
)

# --- report ----------------------------------------------------------------------------------


def _runs(entry: Mapping[str, Any], case: Case) -> Mapping[int, loadgen.LoadResult] | None:
    data = entry["cases"].get(case.key, {})
    runs = data.get("runs")
    return runs if runs else None


def _cpu_per_req(runs: Mapping[int, loadgen.LoadResult]) -> float:
    """Server CPU ms per request, median over the concurrency levels that completed requests."""
    return statistics.median(r.server_cpu_ms_per_req for r in runs.values() if r.requests)


def _peak(runs: Mapping[int, loadgen.LoadResult]) -> float:
    return max(r.rps for r in runs.values())


def _geomean(values: Iterable[float]) -> float:
    items = [v for v in values if v > 0]
    return math.exp(sum(map(math.log, items)) / len(items)) if items else 0.0


def headline(servers: Mapping[str, Any], prefix: str) -> str | None:
    """The fastest configuration of a server: best geometric mean of peak req/s over the cases."""
    scored = []
    for name, entry in servers.items():
        if not name.startswith(prefix):
            continue
        peaks = [_peak(r) for c in CASES if (r := _runs(entry, c))]
        if len(peaks) == len(CASES):
            scored.append((_geomean(peaks), name))
    return max(scored)[1] if scored else None


def _mb(value: float) -> str:
    return f"{value / 2**20:.0f}"


def _verdict(ok: bool) -> str:
    return "✔" if ok else "✘"


def _rps(run: loadgen.LoadResult | None) -> str:
    if run is None:
        return ""
    return f"{run.rps:.1f}" if run.requests else "0 ⚠"


def _ms(run: loadgen.LoadResult, attr: str) -> str:
    return f"{getattr(run, attr):.0f}" if run.requests else "n/a"


def render_tables(results: Mapping[str, Any], plan: Plan) -> str:
    raw: Mapping[str, Sequence[RawResult]] = results["raw"]
    servers: Mapping[str, Any] = results["servers"]
    cols = plan.concurrency
    top_c = max(cols)
    lines = [
        "| case | server | "
        + " | ".join(f"c={c} req/s" for c in cols)
        + f" | p50 c=1 ms | p99 c={top_c} ms | RSS c={top_c} MB | PSS c={top_c} MB "
        "| CPU ms/req | out bytes |",
        "|---|---|" + "---:|" * (len(cols) + 6),
    ]
    for case in CASES:
        for row in raw.get(case.key, ()):
            cells = [f"{row.ops:.1f}" if c == row.parallel else "" for c in cols]
            lines.append(
                f"| {case.title} | {row.label} | "
                + " | ".join(cells)
                + f" | {row.p50_ms:.0f} | | {_mb(row.maxrss_bytes)} | "
                f"| {row.cpu_ms_per_op:.0f} | {row.out_bytes:,} |"
            )
        for name, entry in servers.items():
            runs = _runs(entry, case)
            if runs is None:
                reason = entry["cases"].get(case.key, {}).get("skipped", "not run")
                lines.append(f"| {case.title} | {name} | skipped: {reason[:60]} |")
                continue
            cells = [_rps(runs.get(c)) for c in cols]
            top = runs[max(runs)]
            cpu = _cpu_per_req(runs)
            lines.append(
                f"| {case.title} | {name} | "
                + " | ".join(cells)
                + f" | {_ms(runs[min(runs)], 'p50_ms')} | {_ms(top, 'p99_ms')} "
                f"| {_mb(top.peak_rss_bytes)} | {_mb(top.peak_pss_bytes)} "
                f"| {cpu:.0f} | {entry['cases'][case.key]['out_bytes']:,} |"
            )
    return "\n".join(lines)


def render_checks(results: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The ratio table against the issue's targets, and the headline configuration names."""
    raw: Mapping[str, Sequence[RawResult]] = results["raw"]
    servers: Mapping[str, Any] = results["servers"]
    ours = headline(servers, "assetgate")
    theirs = headline(servers, "thumbor")
    lines = ["| check | measured | target | |", "|---|---:|---:|---|"]
    if ours is None:
        return "\n".join([*lines, "| assetgate | not measured | | |"]), []
    mine = servers[ours]
    for case in CASES:
        runs = _runs(mine, case)
        refs = [r for r in raw.get(case.key, ()) if r.parallel == NCPU]
        if runs and NCPU in runs and refs:
            best = max(refs, key=lambda r: r.ops)
            ratio = runs[NCPU].rps / best.ops
            lines.append(
                f"| {case.title}: {ours} / best {best.label}, c={NCPU} "
                f"| {ratio:.2f} ({runs[NCPU].rps:.1f} / {best.ops:.1f}) "
                f"| ≥ {TARGET_VS_RAW:.2f} | {_verdict(ratio >= TARGET_VS_RAW)} |"
            )
    for case in CASES:
        runs = _runs(mine, case)
        single = [r for r in raw.get(case.key, ()) if r.parallel == 1]
        if runs and 1 in runs and runs[1].requests and single:
            extra = runs[1].p50_ms - single[0].p50_ms
            allowed = max(5.0, 0.10 * single[0].p50_ms)
            lines.append(
                f"| {case.title}: p50 at c=1, {ours} − raw 1 thread "
                f"| {extra:+.1f} ms ({runs[1].p50_ms:.0f} vs {single[0].p50_ms:.0f}) "
                f"| ≤ +{allowed:.0f} ms | {_verdict(extra <= allowed)} |"
            )
    if theirs:
        for case in CASES:
            a, t = _runs(mine, case), _runs(servers[theirs], case)
            if a and t:
                ratio = _peak(a) / _peak(t)
                target = TARGET_VS_THUMBOR[case.key]
                lines.append(
                    f"| {case.title}: {ours} / {theirs}, best req/s over c "
                    f"| {ratio:.2f}× ({_peak(a):.1f} / {_peak(t):.1f}) "
                    f"| {'≈' if case.key == 'jpeg' else '≥'} {target}× "
                    f"| {_verdict(ratio >= target * (0.95 if case.key == 'jpeg' else 1))} |"
                )
    # CPU seconds per request barely move when other work shares the machine (throughput and
    # latency do), so these rows carry the comparison on a busy box.
    for case in CASES:
        runs = _runs(mine, case)
        single = [r for r in raw.get(case.key, ()) if r.parallel == 1]
        if runs and single:
            ours_cpu = _cpu_per_req(runs)
            ratio = single[0].cpu_ms_per_op / ours_cpu
            lines.append(
                f"| {case.title}: CPU per image, raw 1 thread / {ours} "
                f"| {ratio:.2f} ({single[0].cpu_ms_per_op:.0f} / {ours_cpu:.0f} ms) "
                f"| ≥ {TARGET_VS_RAW:.2f} | {_verdict(ratio >= TARGET_VS_RAW)} |"
            )
    if theirs:
        for case in CASES:
            a, t = _runs(mine, case), _runs(servers[theirs], case)
            if a and t:
                ratio = _cpu_per_req(t) / _cpu_per_req(a)
                lines.append(
                    f"| {case.title}: CPU per image, {theirs} / {ours} "
                    f"| {ratio:.2f}× ({_cpu_per_req(t):.0f} / {_cpu_per_req(a):.0f} ms) "
                    f"| (info) | |"
                )
    for case in CASES:
        runs = _runs(mine, case)
        if runs and 16 in runs and 1 in runs and runs[1].requests:
            bound = 1.5 * (16 / NCPU) * runs[1].p50_ms
            got = runs[16]
            lines.append(
                f"| {case.title}: p99 at c=16 | {_ms(got, 'p99_ms')} ms "
                f"| ≤ {bound:.0f} ms (1.5 × 16/{NCPU} × p50 c=1) "
                f"| {_verdict(bool(got.requests) and got.p99_ms <= bound)} |"
            )
    for name, entry in servers.items():
        nm = entry.get("not_modified")
        if isinstance(nm, loadgen.LoadResult):
            lines.append(
                f"| 304 revalidation, {name}, c={nm.connections} "
                f"| {nm.rps:,.0f} req/s (p99 {nm.p99_ms:.1f} ms) "
                f"| ≥ {TARGET_304_RPS:,.0f} | {_verdict(nm.rps >= TARGET_304_RPS)} |"
            )
    for name, entry in servers.items():
        if not name.startswith("assetgate"):
            continue
        tops = [r[16] for c in CASES if (r := _runs(entry, c)) and 16 in r]
        if tops:
            rss = max(r.peak_rss_bytes for r in tops)
            pss = max(r.peak_pss_bytes for r in tops)
            lines.append(
                f"| peak server RSS at c=16 (sum over the process tree), {name} "
                f"| {_mb(rss)} MB (PSS {_mb(pss)} MB) "
                f"| < {_mb(TARGET_RSS_BYTES)} MB | {_verdict(rss < TARGET_RSS_BYTES)} |"
            )
    return "\n".join(lines), [n for n in (ours, theirs) if n]


def environment_line(results: Mapping[str, Any]) -> str:
    import pyvips

    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    libvips = f"{pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}"
    thumbor = results.get("thumbor_versions") or "not run"
    return (
        f"{NCPU} × {cpu}, Linux {platform.release()}, Python {platform.python_version()}, "
        f"libvips {libvips} (pyvips {pyvips.__version__}), thumbor/Pillow {thumbor}"
    )


def write_report(results: dict[str, Any], plan: Plan, command: str) -> str:
    table = render_tables(results, plan)
    checks, heads = render_checks(results)
    inputs = results["inputs"]
    foreign = [
        run.foreign_cpu_pct
        for entry in results["servers"].values()
        for data in entry["cases"].values()
        for run in data.get("runs", {}).values()
    ]
    text = "\n".join(
        [
            f"Measured {results['date']} with `{command}` "
            f"({plan.duration_s} s per point, wrk -t1, loopback).",
            f"Machine: {environment_line(results)}.",
            f"Inputs (generated): photo.jpg {inputs['photo.jpg']['width']}×"
            f"{inputs['photo.jpg']['height']} {inputs['photo.jpg']['bytes']:,} bytes (q90); "
            f"alpha.png {inputs['alpha.png']['width']}×{inputs['alpha.png']['height']} RGBA "
            f"{inputs['alpha.png']['bytes']:,} bytes. Output width 800, quality 85.",
            f"Headline: {' vs '.join(heads) or 'n/a'}. CPU used by other processes during the "
            f"HTTP runs: median {statistics.median(foreign) if foreign else 0:.0f} %, "
            f"max {max(foreign, default=0):.0f} % of the machine "
            f"(waited {plan.quiet.waited_s:.0f} s in total for a quiet machine before points).",
            "",
            table,
            "",
            checks,
        ]
    )
    return text


def jsonable(value: Any) -> Any:
    if isinstance(value, loadgen.LoadResult):
        return value.as_json()
    if isinstance(value, RawResult):
        return value.__dict__
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def load_results(path: Path) -> tuple[dict[str, Any], Plan]:
    """Results saved by an earlier run, rebuilt into the objects the report functions take."""
    data = json.loads(path.read_text())
    data["raw"] = {k: [RawResult(**row) for row in rows] for k, rows in data["raw"].items()}
    for entry in data["servers"].values():
        for case in entry["cases"].values():
            if "runs" in case:
                case["runs"] = {int(c): loadgen.LoadResult(**r) for c, r in case["runs"].items()}
        if "requests" in entry.get("not_modified", {}):
            entry["not_modified"] = loadgen.LoadResult(**entry["not_modified"])
    meta = data.pop("plan")
    quiet = loadgen.Quiet(QUIET_THRESHOLD_PCT, 0, 0)
    quiet.waited_s = meta["waited_s"]
    plan = Plan(meta["duration_s"], 1, 0.0, tuple(meta["concurrency"]), (), (), quiet)
    return data, plan
