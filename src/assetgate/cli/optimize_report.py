"""What ``assetgate optimize`` did: the summary table, the worst ``quality=auto`` score, the
files kept as they were and the failures (one row a file, whatever the number of widths), and a
progress bar on a terminal.

Drawn with rich (tables that fit the terminal, a bar with the time remaining) rather than by hand:
it costs the image pygments and markdown-it-py (~5 MB), which the server never imports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from assetgate.optimizer.spec import parse_spec


@dataclass(frozen=True, slots=True)
class Task:
    """One source file and the variants asked of it (one query, or one per ``--srcset`` width)."""

    source: Path
    relative: Path
    variants: tuple[Mapping[str, str], ...]
    srcset: bool


@dataclass(frozen=True, slots=True)
class Output:
    name: str  # relative to DEST
    width: int  # the real width, which labels a --srcset variant
    size: int
    kept: bool  # the original's bytes: a re-encode at the same settings was not smaller
    score: float = 0.0  # quality=auto: the SSIMULACRA2 score of the written image


@dataclass(frozen=True, slots=True)
class Done:
    """One file: its outputs, or the one reason it failed (never one line per variant)."""

    task: Task
    before: int
    outputs: tuple[Output, ...] = ()
    error: str | None = None

    @property
    def after(self) -> int:
        return sum(output.size for output in self.outputs)

    @property
    def kept(self) -> bool:
        return bool(self.outputs) and all(output.kept for output in self.outputs)


@contextmanager
def progress_bar(total: int) -> Iterator[Callable[[], None]]:
    """A transient bar on stderr (rich: it draws only on a terminal, so a log or a pipe gets the
    report, not a thousand progress lines); yields the call that counts one file done."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        bar = progress.add_task("optimizing", total=total)
        yield lambda: progress.advance(bar)


def report(results: list[Done]) -> list[RenderableType]:
    """Everything the run has to say, in the order a reader wants it (for ``Console.print``)."""
    parts: list[RenderableType] = [summary(results)]
    worst = worst_score(results)
    if worst is not None:
        parts.append(worst)
    kept = [done for done in results if done.error is None and done.kept]
    if kept:
        parts.append(kept_table(kept))
    failures = [done for done in results if done.error is not None]
    if failures:
        parts.append(failure_table(failures))
    return parts


def summary(results: list[Done]) -> Table:
    ok = [done for done in results if done.error is None]
    before = sum(done.before for done in ok)
    after = sum(done.after for done in ok)
    kept = sum(1 for done in ok if done.kept)
    columns = ("files", "optimized", "kept", "failed", "outputs", "bytes before", "bytes after",
               "saved")  # fmt: skip
    table = Table(title="assetgate optimize")
    for column in columns:
        table.add_column(column, justify="right")
    saved = f"{(before - after) * 100 / before:.1f} %" if before else "-"
    table.add_row(str(len(results)), str(len(ok) - kept), str(kept), str(len(results) - len(ok)),
                  str(sum(len(done.outputs) for done in ok)), str(before), str(after),
                  saved)  # fmt: skip
    return table


def worst_score(results: list[Done]) -> str | None:
    """``--quality auto``: the lowest SSIMULACRA2 score written, and where (None without auto)."""
    scored = [
        (output.score, output.name) for done in results for output in done.outputs if output.score
    ]
    if not scored:
        return None
    score, name = min(scored)
    return f"quality=auto: worst SSIMULACRA2 score {score:.2f} ({name}), {len(scored)} scored"


def kept_table(kept: list[Done]) -> Table:
    """Files whose re-encode was not smaller: the original was written, and the run says so."""
    table = Table("file", "why", title="kept as they were")
    for done in kept:
        spec = parse_spec(done.task.variants[0])
        quality = f"auto:{spec.auto}" if spec.auto is not None else str(spec.quality)
        why = f"re-encoded at quality {quality} it was not smaller"
        table.add_row(str(done.task.relative), why)
    return table


def failure_table(failures: list[Done]) -> Table:
    table = Table("file", "reason", title="failures (skipped)")
    for done in failures:
        table.add_row(str(done.task.relative), done.error or "")
    return table
