"""Print the per-registry coverage table of the whois reference page (Markdown).

Run from the repository root: ``python -m tests.whois.coverage``. The figures count the values
each registry publishes in *our own* fixtures (``tests/whois/samples``) that the parser finds.
"""

from __future__ import annotations

from tests.whois.registry_table import coverage_rows


def table() -> str:
    rows = coverage_rows()
    lines = ["| registry format | fields found / expected |", "|---|---|"]
    lines += [f"| {name} | {hits} / {total} |" for name, hits, total in rows]
    hits, total = sum(r[1] for r in rows), sum(r[2] for r in rows)
    lines.append(f"| **all** | **{hits} / {total} ({100 * hits // total} %)** |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
