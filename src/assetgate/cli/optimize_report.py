"""What ``assetgate optimize`` did, told in plain text: the summary table, the worst
``quality=auto`` score, the files kept as they were and the failures (one row a file, whatever
the number of widths), and a progress count on a terminal.

Plain text with ``│`` between cells: the command line needs no more, and the library that drew
these tables before (rich) brought pygments and markdown-it into the server's image for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TextIO

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


class Table:
    """Rows of text cells under a title, drawn with ``│`` between the cells."""

    def __init__(self, title: str, columns: Sequence[str], *, right: bool = False) -> None:
        self.title = title
        self.columns = list(columns)
        self.rows: list[list[str]] = []
        self.right = right

    def add_row(self, *cells: str) -> None:
        self.rows.append(list(cells))

    def __str__(self) -> str:
        widths = [
            max(len(row[index]) for row in [self.columns, *self.rows])
            for index in range(len(self.columns))
        ]

        def line(cells: Sequence[str]) -> str:
            aligned = [
                cell.rjust(width) if self.right else cell.ljust(width)
                for cell, width in zip(cells, widths, strict=True)
            ]
            return "│ " + " │ ".join(aligned) + " │"

        rule = "├" + "┼".join("─" * (width + 2) for width in widths) + "┤"
        return "\n".join([self.title, line(self.columns), rule, *map(line, self.rows)])


class Progress:
    """``optimizing 3/10`` rewritten in place on a terminal; nothing when the output is a file
    or a pipe (a log gets the report, not a thousand progress lines)."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self.shown = stream.isatty()

    def __enter__(self) -> Progress:
        return self

    def advance(self) -> None:
        self.done += 1
        if self.shown:
            self.stream.write(f"\roptimizing {self.done}/{self.total}")
            self.stream.flush()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.shown:
            self.stream.write("\r\033[K")  # transient: the line is cleared
            self.stream.flush()


def report(results: list[Done]) -> str:
    """Everything the run has to say, in the order a reader wants it."""
    parts = [str(summary(results))]
    worst = worst_score(results)
    if worst is not None:
        parts.append(worst)
    kept = [done for done in results if done.error is None and done.kept]
    if kept:
        parts.append(str(kept_table(kept)))
    failures = [done for done in results if done.error is not None]
    if failures:
        parts.append(str(failure_table(failures)))
    return "\n\n".join(parts)


def summary(results: list[Done]) -> Table:
    ok = [done for done in results if done.error is None]
    before = sum(done.before for done in ok)
    after = sum(done.after for done in ok)
    kept = sum(1 for done in ok if done.kept)
    columns = ("files", "optimized", "kept", "failed", "outputs", "bytes before", "bytes after",
               "saved")  # fmt: skip
    table = Table("assetgate optimize", columns, right=True)
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
    table = Table("kept as they were", ("file", "why"))
    for done in kept:
        spec = parse_spec(done.task.variants[0])
        quality = f"auto:{spec.auto}" if spec.auto is not None else str(spec.quality)
        why = f"re-encoded at quality {quality} it was not smaller"
        table.add_row(str(done.task.relative), why)
    return table


def failure_table(failures: list[Done]) -> Table:
    table = Table("failures (skipped)", ("file", "reason"))
    for done in failures:
        table.add_row(str(done.task.relative), done.error or "")
    return table
