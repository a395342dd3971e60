"""``assetgate optimize SRC DEST``: the optimizer for a folder, without HTTP.

The flags are generated from the optimizer's parameter table (``optimizer.params.PARAMS``), and
their values go through the same ``parse_spec`` -> ``make_plan`` -> render as a request, so the
command line cannot drift from the HTTP interface. Images run on all cores (libvips releases the
GIL, so threads suffice). Every image is decoded whole, also when nothing is asked of it; a damaged
file is reported (one line, however many widths) and skipped, and any failure makes the exit
status 1. A file re-encoded at the same settings is kept as it was unless the re-encode is
smaller. Output names keep the relative path with the output format's extension, and a
``--srcset`` variant is named by the width it really has (``photo-640w.webp``; a source narrower
than several widths gives one ``photo-300w.webp``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import obstore
from rich.console import Console

from assetgate.cache import s3_store
from assetgate.cli.optimize_report import Done, Output, Task, progress_bar, report
from assetgate.cli.preflight import (
    SettingsRefused,
    checked_settings,
    directory_problem,
    name_warnings,
)
from assetgate.errors import AppError
from assetgate.imaging import vips
from assetgate.imaging.formats import IMAGE_EXTENSIONS
from assetgate.imaging.limits import DecodeLimits
from assetgate.machine import usable_cores
from assetgate.optimizer.param_row import Param
from assetgate.optimizer.params import PARAMS
from assetgate.optimizer.plan import Limits, Negotiation
from assetgate.optimizer.render import Job, Outcome, prepare, render
from assetgate.optimizer.spec import parse_spec
from assetgate.optimizer.vocabulary import AUTO_HIGH, AUTO_LOW, AutoQuality
from assetgate.optimizer.watermark_images import checker
from assetgate.optimizer.watermarks import NO_WATERMARKS, Watermarks, parse_watermarks
from assetgate.settings import Settings
from assetgate.sources.buckets import store_problem
from assetgate.web.paths import clean_relative

IMAGE_PARAMS: Final = tuple(param for param in PARAMS if param.image)
EXTENSIONS: Final = {"jpeg": "jpg"}


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_parser(sub: Any) -> None:
    cmd = sub.add_parser(
        "optimize",
        help="optimize a folder of images (the optimizer's parameters, no HTTP)",
        description="Optimize every image under SRC into DEST with the optimizer's parameters "
        "(the same names as the HTTP query, docs/optimizer.md). Exit status 1 when any file "
        "failed; failures are listed with their reason.",
    )
    cmd.add_argument("src", metavar="SRC", help="folder of source images, or s3://bucket[/prefix]")
    cmd.add_argument("dest", type=Path, metavar="DEST", help="folder for the results")
    cmd.add_argument(
        "--srcset",
        metavar="W,W,...",
        help="one output per width (e.g. 320,640,1280), named <stem>-<W>w.<ext>",
    )
    cmd.add_argument("--jobs", type=int, default=usable_cores(), help="parallel images")
    group = cmd.add_argument_group("optimizer parameters (spec §4.1)")
    for param in IMAGE_PARAMS:
        if param.kind == "bool":
            group.add_argument(flag(param.name), dest=param.name, action="store_const",
                               const="true", help=_plain(param.doc))  # fmt: skip
        else:
            group.add_argument(flag(param.name), dest=param.name, metavar=_metavar(param),
                               help=_plain(param.doc))  # fmt: skip
    cmd.set_defaults(run=run)


def _plain(text: str) -> str:
    return text.replace("`", "").replace("%", "%%")


def _metavar(param: Param) -> str:
    if param.choices:
        return "{" + ",".join(param.choices) + "}"
    if param.kind == "int":
        return f"{param.low}..{param.high}"
    if param.kind == "quality":
        return f"{{{param.low}..{param.high},auto,auto:{AUTO_LOW}..{AUTO_HIGH}}}"
    return param.name.upper()


def run(args: argparse.Namespace) -> int:
    query = {p.name: getattr(args, p.name) for p in IMAGE_PARAMS if getattr(args, p.name)}
    try:
        widths = _widths(args.srcset)
        variants = tuple({**query, "width": str(w)} for w in widths) or (query,)
        for variant in variants:
            parse_spec(variant)  # every flag checked before any work
        settings = checked_settings()
        for variant in variants:
            parse_spec(variant, AutoQuality.from_settings(settings))
    except AppError as exc:
        name = exc.param or "srcset"
        text = exc.message.removeprefix(f"{exc.param}: ") if exc.param else exc.message
        print(f"assetgate: {flag(name)}: {text}", file=sys.stderr)
        return 2
    except SettingsRefused as exc:
        print(exc, file=sys.stderr)
        return 2
    for line in name_warnings():
        print(line, file=sys.stderr)
    found = _run_problems(args, query, settings)
    if found:  # one line each, before any work (never one failure per file)
        print("\n".join(found), file=sys.stderr)
        return 2
    watermarks = parse_watermarks(  # checked by the preflight: cannot fail here
        settings.watermarks,
        os.path.realpath(str(settings.root)),
        checker(DecodeLimits.from_settings(settings)),
    )
    with tempfile.TemporaryDirectory(prefix="assetgate-optimize-") as scratch:
        if args.src.startswith("s3://"):
            try:
                src = download(args.src, settings, Path(scratch))
            except Exception as exc:  # the store's own text may hold the endpoint: never shown
                print(f"assetgate: SRC: cannot list or read {args.src}: {store_problem(exc)}",
                      file=sys.stderr)  # fmt: skip
                return 2
        else:
            src = Path(args.src)
        if not src.is_dir():
            print(f"assetgate: SRC: {args.src} is not a directory", file=sys.stderr)
            return 2
        return _optimize(
            src,
            args.dest,
            variants,
            settings,
            args.jobs,
            srcset=bool(widths),
            watermarks=watermarks,
        )


def _run_problems(
    args: argparse.Namespace, query: Mapping[str, str], settings: Settings
) -> list[str]:
    """What would fail every file alike: DEST not writable, a watermark nobody configured."""
    found = []
    problem = directory_problem(args.dest)
    if problem is not None:
        found.append(f"assetgate: DEST: {problem}")
    name = query.get("watermark")
    if name is not None:
        real_root = os.path.realpath(str(settings.root))
        known = sorted(parse_watermarks(settings.watermarks, real_root))
        if name not in known:
            listed = ", ".join(known) if known else "none: ASSETGATE_WATERMARKS is not set"
            found.append(f"assetgate: --watermark: no watermark {name!r} (configured: {listed})")
    return found


def download(url: str, settings: Settings, into: Path) -> Path:
    """The images under ``s3://bucket[/prefix]`` copied into ``into`` (the store's settings and
    AWS credentials as the server uses them); keys the path rules refuse are left out."""
    location = urlsplit(url)
    store = s3_store(location.netloc, location.path.strip("/"), settings)
    for meta in obstore.list(store).collect():
        key = clean_relative(meta["path"])
        if key is None or key.rpartition(".")[2].lower() not in IMAGE_EXTENSIONS:
            continue
        if meta["size"] > settings.max_source_bytes:
            continue  # optimize_one would refuse it too; never fetched
        target = into / key
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bytes(obstore.get(store, meta["path"]).bytes()))
    return into


def _optimize(
    src: Path,
    dest: Path,
    variants: tuple[Mapping[str, str], ...],
    settings: Settings,
    jobs: int,
    *,
    srcset: bool,
    watermarks: Watermarks,
) -> int:
    tasks = [
        Task(path, path.relative_to(src), variants, srcset=srcset) for path in _images(src, dest)
    ]
    vips.configure(settings)
    results = _run_all(tasks, dest, settings, max(1, jobs), watermarks)
    console = Console()
    for part in report(results):
        console.print(part)
    return 1 if any(done.error is not None for done in results) else 0


def _widths(raw: str | None) -> list[int]:
    if not raw:
        return []
    try:
        widths = sorted({int(part) for part in raw.split(",") if part.strip()})
    except ValueError:
        raise AppError.bad_param("srcset", "comma-separated widths", raw) from None
    if not widths or not all(1 <= w <= 50_000 for w in widths):
        raise AppError.bad_param("srcset", "widths 1..50000", raw)
    return widths


def _images(src: Path, dest: Path) -> Iterator[Path]:
    """Image files under ``src`` (by extension; content decides later), never inside ``dest``."""
    skip = dest.resolve()
    for folder, dirs, files in os.walk(src):
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and Path(folder, d).resolve() != skip
        )
        for name in sorted(files):
            if not name.startswith(".") and name.rpartition(".")[2].lower() in IMAGE_EXTENSIONS:
                yield Path(folder, name)


def _run_all(
    tasks: list[Task], dest: Path, settings: Settings, jobs: int, watermarks: Watermarks
) -> list[Done]:
    limits = Limits.from_settings(settings)
    results: list[Done] = []
    with progress_bar(len(tasks)) as advance, ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(optimize_one, t, dest, limits, settings, watermarks) for t in tasks]
        for future in as_completed(futures):
            results.append(future.result())
            advance()
    return sorted(results, key=lambda done: str(done.task.relative))


def optimize_one(
    task: Task,
    dest: Path,
    limits: Limits,
    settings: Settings,
    watermarks: Watermarks = NO_WATERMARKS,
) -> Done:
    """Every variant of one file, or the file's one failure; every failure becomes a reason.

    Each image is decoded whole, even when nothing is asked of it (``reencode``): a damaged file
    fails instead of being copied. A variant is named by the width it really has, and a width
    that comes out like one already made (a source narrower than several ``--srcset`` widths) is
    made once. ``--info 1`` writes the image's facts as ``.json``."""
    try:
        size = task.source.stat().st_size
    except OSError as exc:
        return Done(task, 0, error=f"cannot read: {exc.strerror}")
    made: dict[int, tuple[str, Outcome]] = {}
    try:
        for query in task.variants:
            job = Job.from_settings(
                settings,
                path=task.source,
                size=size,
                spec=parse_spec(query, AutoQuality.from_settings(settings)),
                negotiation=Negotiation(webp=False),  # no Accept: the input format unless --format
                limits=limits,
                watermarks=watermarks,
            )
            ready = prepare(job, reencode=True)
            width = ready.width if isinstance(ready, Outcome) else ready.plan.width
            if width in made:
                continue
            outcome = ready if isinstance(ready, Outcome) else render(job, ready)
            stem = task.relative.with_suffix("").name + (f"-{width}w" if task.srcset else "")
            extension = "json" if outcome.info else EXTENSIONS.get(outcome.output, outcome.output)
            made[width] = (f"{stem}.{extension}", outcome)
    except AppError as exc:
        return Done(task, size, error=exc.message)
    try:
        outputs = tuple(
            _write(task, dest, name, width, outcome) for width, (name, outcome) in made.items()
        )
    except OSError as exc:
        return Done(task, size, error=f"cannot write: {exc.strerror}")
    return Done(task, size, outputs)


def _write(task: Task, dest: Path, name: str, width: int, outcome: Outcome) -> Output:
    target = dest / task.relative.parent / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if outcome.body is None:
        shutil.copyfile(task.source, target)
    else:
        target.write_bytes(outcome.body)
    relative = str(target.relative_to(dest))
    return Output(
        relative, width, target.stat().st_size, kept=outcome.body is None, score=outcome.score
    )
