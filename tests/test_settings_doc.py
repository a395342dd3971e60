"""docs/configuration.md's tables are generated from ``Settings`` (issue 37 step 4): the page and
the class cannot differ, and a field without a docstring or an operator/tuning marker fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pytest

from assetgate.cli.settings_doc import blocks, generate, table, undocumented
from assetgate.settings import Settings
from assetgate.settings.roles import FAMILIES, role_of, tuning

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "configuration.md"


def test_the_page_is_what_the_class_generates() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert generate(text) == text, "run: python -m assetgate.cli.settings_doc"


def test_every_field_has_a_docstring_a_marker_and_a_shown_default() -> None:
    assert undocumented() == []
    assert {role.family for f in Settings.model_fields.values() if (role := role_of(f.metadata))}
    assert all(role_of(field.metadata) for field in Settings.model_fields.values())


def test_a_field_without_a_docstring_or_marker_is_named() -> None:
    class Careless(Settings):
        unexplained: Annotated[int, tuning("work")] = 1
        unmarked: int = 2
        """Has a docstring but no marker."""

    assert undocumented(Careless) == [
        "ASSETGATE_UNEXPLAINED: no docstring",
        "ASSETGATE_UNMARKED: no operator(...) or tuning(...) marker",
    ]


def test_a_changed_docstring_makes_the_page_stale() -> None:
    class Edited(Settings):
        host: Annotated[str, tuning("server")] = "0.0.0.0"
        """Somewhere else."""

    text = PAGE.read_text(encoding="utf-8")
    assert table("tuning server", Edited) != table("tuning server")
    assert "| `ASSETGATE_HOST` | `0.0.0.0` | Somewhere else. |" in table("tuning server", Edited)
    assert "ASSETGATE_HOST" in text[: text.index("## Tuning")]  # the real one: an operator's


def test_operator_settings_come_first_and_each_family_has_its_table() -> None:
    text = PAGE.read_text(encoding="utf-8")
    starts = [text.index(f"<!-- settings: {block} -->") for block in blocks()]
    assert starts == sorted(starts)
    assert len(blocks()) == 1 + len(FAMILIES)
    operator_table = table("operator")
    for name in ("ROOT", "SOURCES", "STORE", "REDIS_URL", "RESULT_STORE_KEY", "PUBLIC_URL"):
        assert f"`ASSETGATE_{name}`" in operator_table
    assert "`ASSETGATE_RENDER_WORKERS`" not in operator_table


def test_a_missing_block_is_an_error() -> None:
    text = PAGE.read_text(encoding="utf-8").replace("<!-- settings: tuning whois -->", "")
    with pytest.raises(ValueError, match="tuning whois"):
        generate(text)


def test_the_command_checks_and_rewrites(tmp_path: Path) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text(PAGE.read_text().replace("| Bind address. |", "| Old text. |"))
    command = [sys.executable, "-m", "assetgate.cli.settings_doc"]
    checked = subprocess.run([*command, str(stale), "--check"], capture_output=True, text=True)
    assert checked.returncode == 1
    assert "is not current" in checked.stderr
    assert subprocess.run([*command, str(stale)], check=False).returncode == 0
    assert stale.read_text() == PAGE.read_text()
