"""The settings tables of docs/configuration.md, generated from ``Settings``.

    python -m assetgate.cli.settings_doc            # rewrite the tables in docs/configuration.md
    python -m assetgate.cli.settings_doc --check    # exit 1 when the page is not what it generates

Each table sits between ``<!-- settings: operator -->`` (or ``<!-- settings: tuning FAMILY -->``)
and ``<!-- /settings -->``; the prose around them is the page's own. A row is the field's
variable, its default (the value, or the marker's ``shown`` text when the default is derived) and
its docstring. ``tests/test_settings_doc.py`` runs ``--check``'s comparison and fails as well when
a field has no docstring or no marker.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from assetgate.settings import Settings, variable
from assetgate.settings.roles import FAMILIES, Role, role_of

PAGE = Path("docs/configuration.md")
END = "<!-- /settings -->"
BLOCK = re.compile(r"(<!-- settings: ([a-z ]+) -->\n)(.*?)(?=" + re.escape(END) + ")", re.DOTALL)
MIB = 1024 * 1024


def undocumented(settings: type[BaseSettings] = Settings) -> list[str]:
    """The fields without a docstring, a marker or a default the docs can show, one line each."""
    found = []
    for name, field in settings.model_fields.items():
        role = role_of(field.metadata)
        if not (field.description or "").strip():
            found.append(f"{variable(name)}: no docstring")
        if role is None:
            found.append(f"{variable(name)}: no operator(...) or tuning(...) marker")
        elif role.shown is None and field.default_factory is not None:
            default = field.get_default(call_default_factory=True)
            if not isinstance(default, list | dict):
                found.append(f"{variable(name)}: a computed default needs the shown text")
    return found


def shown_default(name: str, field: FieldInfo, role: Role) -> str:
    """The default as a reader should see it."""
    if role.shown is not None:
        return role.shown
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list | dict):
        return f"`{','.join(map(str, value))}`" if value else "empty"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and name.endswith("_bytes") and value and value % MIB == 0:
        size = f"{value // 1024 // MIB} GiB" if value % (1024 * MIB) == 0 else f"{value // MIB} MiB"
        return f"`{value}` ({size})"
    return f"`{value}`"


def _row(name: str, field: FieldInfo, role: Role) -> str:
    meaning = " ".join((field.description or "").split()).replace("|", "\\|")
    return f"| `{variable(name)}` | {shown_default(name, field, role)} | {meaning} |"


def table(block: str, settings: type[BaseSettings] = Settings) -> str:
    """The table of one block: ``operator`` or ``tuning <family>``."""
    kind, _, family = block.partition(" ")
    lines = ["| Variable | Default | Meaning |", "|---|---|---|"]
    for name, field in settings.model_fields.items():
        role = role_of(field.metadata)
        if role is None or role.operator != (kind == "operator"):
            continue
        if kind == "operator" or role.family == family:
            lines.append(_row(name, field, role))
    return "\n".join(lines) + "\n"


def blocks() -> list[str]:
    """Every block the page must have: the operator table and one per tuning family."""
    return ["operator", *(f"tuning {family}" for family in FAMILIES)]


def generate(page: str) -> str:
    """``page`` with every table regenerated; ValueError naming a block that is missing."""
    found = [match.group(2) for match in BLOCK.finditer(page)]
    missing = [block for block in blocks() if block not in found]
    unknown = [block for block in found if block not in blocks()]
    if missing or unknown:
        raise ValueError(f"settings blocks missing: {missing}, unknown: {unknown}")
    return BLOCK.sub(lambda match: match.group(1) + table(match.group(2)), page)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m assetgate.cli.settings_doc")
    parser.add_argument("page", nargs="?", type=Path, default=PAGE)
    parser.add_argument("--check", action="store_true", help="only say whether it is current")
    args = parser.parse_args(argv)
    problems = undocumented()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    text = args.page.read_text(encoding="utf-8")
    fresh = generate(text)
    if args.check:
        if fresh != text:
            print(f"{args.page} is not current: run python -m assetgate.cli.settings_doc",
                  file=sys.stderr)  # fmt: skip
            return 1
        return 0
    args.page.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
